/**
 * Scripted long tool-heavy sessions for measuring context management without a model: a seeded
 * generator of a coding-agent session (user tasks and standing instructions, read_file / write_file /
 * edit_file / bash calls with realistic outputs, test and type-check runs that pass or fail, errors
 * that get fixed and errors that stay open) as history entries, with the ground truth of what a
 * strategy should keep in view. Pure and deterministic: the same options give the same session.
 */
import type { AssistantEntry, Entry, TextBlock, ToolResultBlock, ToolUseBlock } from '../../src/core/entries';
import { InvalidEvalOptionsError } from './errors';
import { seededRandom, type Random } from './random';

export interface ScriptedSessionOptions {
  seed: number;
  /** Model calls (assistant entries) in the session. Default 300. */
  modelCalls?: number;
  /** Some task prompts carry a pasted log (long user messages, as users write them). Default true. */
  pastedLogs?: boolean;
}

/** An error the session raised that was never fixed; `signature` is the line that names it. */
export interface OpenError {
  id: string;
  signature: string;
}

/** A test or type-check run: the command and the lines that carry its verdict. */
export interface Evidence {
  command: string;
  /** Verdict lines (e.g. jest's `Tests:` and `Time:` lines); all of them identify this run. */
  signature: string[];
}

export interface SessionTruth {
  /** Every standing instruction the user gave, verbatim, oldest first. */
  instructions: string[];
  /** Every path read or changed, sorted. */
  files: string[];
  /** Errors still unresolved when the session ends. */
  openErrors: OpenError[];
  /** The last test/type-check run. */
  lastEvidence: Evidence | undefined;
}

/** The truth as it stood after the first `entries` entries (what a probe after a compaction there asks about). */
export interface TruthCheckpoint {
  entries: number;
  instructions: string[];
  /** Paths written or edited so far. */
  modified: string[];
  openErrors: OpenError[];
}

export interface ScriptedSession {
  entries: Entry[];
  truth: SessionTruth;
  modelCalls: number;
  /** After every model call, oldest first. */
  checkpoints: TruthCheckpoint[];
}

/** The newest checkpoint at or before `entries` entries. */
export function truthAt(session: ScriptedSession, entries: number): TruthCheckpoint {
  let at: TruthCheckpoint = { entries: 0, instructions: [], modified: [], openErrors: [] };
  for (const c of session.checkpoints) if (c.entries <= entries) at = c;
  return at;
}

export const DEFAULT_MODEL_CALLS = 300;
/** Model calls at the end that do no verification (docs work), so the last evidence is not trivially recent. */
export const DOCS_TAIL_CALLS = 12;
const MIN_MODEL_CALLS = DOCS_TAIL_CALLS + 8;

export const STANDING_INSTRUCTIONS: readonly string[] = [
  'Always use tabs for indentation, never spaces.',
  'Never touch anything under config/ without asking me first.',
  'Use pnpm, not npm, for every install.',
  'Do not add new runtime dependencies; dev dependencies are fine.',
  'Keep every public function documented with a one-line JSDoc comment.',
  'Write money amounts as integer cents, never floats.',
  'Prefer named exports; no default exports in src/.',
  'Run the type checker before you tell me something is done.',
  'Error messages must name the field that was wrong.',
  'Keep commits small: one concern per change.',
];

const MODULES = ['billing', 'users', 'auth', 'orders', 'search', 'reports', 'mailer', 'cache'] as const;
const PARTS = ['service', 'routes', 'model', 'validate', 'format'] as const;
const DOC_FILES = ['README.md', 'CHANGELOG.md', 'docs/architecture.md', 'docs/api.md'];
const CONFIG_FILES = ['config/default.json', 'config/production.json'];
const BEHAVIOURS = ['rounds totals to cents', 'rejects an empty name', 'keeps the sort order', 'retries once on timeout', 'escapes html in subjects', 'expires entries after ttl', 'paginates past 100 rows', 'refuses a negative quantity'];
const TS_ERRORS = [
  "error TS2322: Type 'string' is not assignable to type 'number'.",
  "error TS2339: Property 'total' does not exist on type 'Invoice'.",
  "error TS2345: Argument of type 'null' is not assignable to parameter of type 'User'.",
  'error TS7006: Parameter ev implicitly has an any type.',
];
const RUNTIME_ERRORS = [
  (n: number) => `Error: ENOENT: no such file or directory, open 'data/seed-${n}.json'`,
  (n: number) => `Error: connect ECONNREFUSED 127.0.0.1:${5400 + n}`,
  (n: number) => `TypeError: Cannot read properties of undefined (reading 'id${n}')`,
  (n: number) => `Error: migration 0${n}_add_index failed: relation orders_${n} exists`,
];
const TASKS = [
  (m: string) => `The ${m} module needs a cleanup: read through it, fix what is wrong and keep the tests green.`,
  (m: string) => `Add input validation to the ${m} routes and cover it with tests.`,
  (m: string) => `There is a bug report about ${m}: results look wrong for some customers. Find and fix it.`,
  (m: string) => `Refactor ${m} so the service does not reach into the model directly.`,
];
const NARRATION = ['Let me look at the code first.', 'Reading the related files.', 'Now the change.', 'Running the tests.', 'Checking the types.', ''];

export function pathsOf(module: string): string[] {
  return [...PARTS.map((p) => `src/${module}/${p}.ts`), `test/${module}/${module}.test.ts`];
}

/** A plausible TypeScript file of `lines` lines. */
function sourceText(rng: Random, path: string, lines: number): string {
  const words = ['total', 'user', 'order', 'item', 'amount', 'entry', 'result', 'value', 'limit', 'query'];
  const out = [`// ${path}`, "import { z } from 'zod';", ''];
  while (out.length < lines) {
    const w = rng.pick(words);
    const n = rng.int(0, 99);
    switch (rng.int(0, 4)) {
      case 0:
        out.push(`export function ${w}${n}(input: ${w[0]!.toUpperCase()}${w.slice(1)}): number {`, `\treturn input.${w} * ${n} + ${rng.int(1, 9)};`, '}', '');
        break;
      case 1:
        out.push(`const ${w}Schema${n} = z.object({ ${w}: z.number().int(), label: z.string().min(1) });`);
        break;
      case 2:
        out.push(`\tif (${w} > ${n}) throw new Error('${w} must be at most ${n}');`);
        break;
      case 3:
        out.push(`// ${w} ${n}: kept for the ${rng.pick(MODULES)} report`);
        break;
      default:
        out.push(`export const ${w.toUpperCase()}_${n} = ${rng.int(100, 9999)};`);
    }
  }
  return out.slice(0, lines).join('\n');
}

/** A pasted stack trace or log: long user messages are what crowd older ones out of a summary. */
function pastedLog(rng: Random, module: string): string {
  const lines = [`Here is what I see in the logs:`, '```'];
  const n = rng.int(25, 70);
  for (let i = 0; i < n; i++) {
    lines.push(`2026-11-${String(rng.int(10, 28))}T${String(rng.int(10, 23))}:${String(rng.int(10, 59))}:11Z ERROR ${module} request ${rng.int(1000, 99999)} failed    at ${module}Service.handle (src/${module}/service.ts:${rng.int(10, 300)}:${rng.int(2, 40)})`);
  }
  lines.push('```');
  return lines.join('\n');
}

interface Failing {
  id: string;
  suite: string;
  name: string;
}

interface State {
  rng: Random;
  entries: Entry[];
  calls: number;
  callBudget: number;
  pastedLogs: boolean;
  nextId: number;
  files: Set<string>;
  instructions: string[];
  /** Failing tests (shown in every later full test run until fixed). */
  failingTests: Failing[];
  /** Type errors (shown in every later tsc run until fixed). */
  typeErrors: Array<{ id: string; line: string }>;
  /** Errors from one-off commands: open until a later run of the same command succeeds. */
  commandErrors: Array<{ id: string; signature: string }>;
  lastEvidence: Evidence | undefined;
  errorSerial: number;
  modified: Set<string>;
  checkpoints: TruthCheckpoint[];
}

function openErrorsOf(s: State): OpenError[] {
  return [...s.failingTests.map((f) => ({ id: f.id, signature: `● ${f.name}` })), ...s.typeErrors.map((e) => ({ id: e.id, signature: e.line })), ...s.commandErrors];
}

/** Recorded after each model call's entries: draws nothing from the generator, so sessions are unchanged. */
function checkpoint(s: State): void {
  s.checkpoints.push({ entries: s.entries.length, instructions: [...s.instructions], modified: [...s.modified].sort(), openErrors: openErrorsOf(s) });
}

function pushToolCall(s: State, name: string, input: Record<string, unknown>, result: string, isError = false, text = ''): void {
  const id = `toolu_${String(s.nextId++).padStart(4, '0')}`;
  const content: Array<TextBlock | ToolUseBlock> = [];
  if (text) content.push({ type: 'text', text });
  content.push({ type: 'tool_use', id, name, input });
  const assistant: AssistantEntry = { type: 'assistant', content, stopReason: 'tool_use' };
  const r: ToolResultBlock = { type: 'tool_result', tool_use_id: id, content: result, ...(isError ? { is_error: true } : {}) };
  s.entries.push(assistant, { type: 'tool_results', results: [r] });
  s.calls += 1;
  const path = input.path;
  if (typeof path === 'string') s.files.add(path);
  if (typeof path === 'string' && (name === 'write_file' || name === 'edit_file')) s.modified.add(path);
}

function reply(s: State, text: string): void {
  s.entries.push({ type: 'assistant', content: [{ type: 'text', text }], stopReason: 'end_turn' });
  s.calls += 1;
  checkpoint(s);
}

/** A tool call, then the truth after it. */
function toolCall(s: State, name: string, input: Record<string, unknown>, result: string, isError = false, text = ''): void {
  pushToolCall(s, name, input, result, isError, text);
  checkpoint(s);
}

function readFile(s: State, path: string): void {
  toolCall(s, 'read_file', { path }, sourceText(s.rng, path, s.rng.int(40, 320)), false, s.rng.pick(NARRATION));
}

function editFile(s: State, path: string): void {
  const { rng } = s;
  if (rng.chance(0.12)) {
    // A stale old_string: the edit tool refuses, the agent re-reads and retries (fixed at once).
    toolCall(s, 'edit_file', { path, old_string: `\treturn total * ${rng.int(2, 9)};`, new_string: '\treturn total;' }, `old_string not found in ${path}`, true);
    if (s.calls >= s.callBudget) return;
    readFile(s, path);
    if (s.calls >= s.callBudget) return;
  }
  if (rng.chance(0.25)) {
    toolCall(s, 'write_file', { path, content: sourceText(rng, path, rng.int(30, 160)) }, `Wrote ${path}`);
  } else {
    const n = rng.int(1, 99);
    toolCall(s, 'edit_file', { path, old_string: `\treturn input.total * ${n};`, new_string: `\treturn Math.round(input.total * ${n});` }, `Edited ${path}: 1 replacement`);
  }
}

function jestOutput(s: State, module: string): { text: string; failed: boolean; signature: string[] } {
  const { rng } = s;
  const lines = ['> app@1.0.0 test', '> jest', ''];
  const suites = MODULES.flatMap((m) => [`test/${m}/${m}.test.ts`, `test/${m}/${m}.integration.test.ts`]);
  const failingSuites = new Set(s.failingTests.map((f) => f.suite));
  for (const suite of suites) if (!failingSuites.has(suite)) lines.push(`PASS ${suite} (${(rng.int(2, 60) / 10).toFixed(1)} s)`);
  for (const f of s.failingTests) {
    lines.push(`FAIL ${f.suite}`, `  ● ${f.name}`, '', '    expect(received).toBe(expected) // Object.is equality', '', `    Expected: ${rng.int(100, 9999)}`, `    Received: ${rng.int(100, 9999)}.${rng.int(1, 9999)}`, '', `      at Object.<anonymous> (${f.suite}:${rng.int(10, 200)}:${rng.int(3, 30)})`, '');
  }
  const failed = s.failingTests.length;
  const total = rng.int(180, 260);
  const tests = failed > 0 ? `Tests:       ${failed} failed, ${total - failed} passed, ${total} total` : `Tests:       ${total} passed, ${total} total`;
  const time = `Time:        ${(rng.int(3000, 19999) / 1000).toFixed(3)} s`;
  const failedSuites = new Set(s.failingTests.map((f) => f.suite)).size;
  lines.push(failedSuites > 0 ? `Test Suites: ${failedSuites} failed, ${suites.length - failedSuites} passed, ${suites.length} total` : `Test Suites: ${suites.length} passed, ${suites.length} total`, tests, 'Snapshots:   0 total', time, `Ran all test suites (${module} changed).`);
  return { text: lines.join('\n'), failed: failed > 0, signature: [tests, time] };
}

function runTests(s: State, module: string): void {
  const { rng } = s;
  // The change may break a test (it stays failing until fixed) or fix one of the failing ones.
  if (rng.chance(0.3)) {
    const name = `${module} › ${rng.pick(BEHAVIOURS)} (case ${++s.errorSerial})`;
    s.failingTests.push({ id: `test:${name}`, suite: `test/${module}/${module}.test.ts`, name });
  } else if (s.failingTests.length > 0 && rng.chance(0.5)) {
    s.failingTests.splice(rng.int(0, s.failingTests.length - 1), 1);
  }
  const out = jestOutput(s, module);
  toolCall(s, 'bash', { command: 'npm test' }, out.text, out.failed, rng.pick(NARRATION));
  s.lastEvidence = { command: 'npm test', signature: out.signature };
}

function typeCheck(s: State, module: string): void {
  const { rng } = s;
  if (rng.chance(0.25)) {
    const line = `src/${module}/${rng.pick(PARTS)}.ts(${rng.int(10, 300)},${rng.int(2, 40)}): ${rng.pick(TS_ERRORS)}`;
    s.typeErrors.push({ id: `tsc:${line}`, line });
  } else if (s.typeErrors.length > 0 && rng.chance(0.6)) {
    s.typeErrors.splice(rng.int(0, s.typeErrors.length - 1), 1);
  }
  const failed = s.typeErrors.length > 0;
  const text = failed ? [...s.typeErrors.map((e) => e.line), '', `Found ${s.typeErrors.length} error${s.typeErrors.length === 1 ? '' : 's'}.`].join('\n') : '';
  toolCall(s, 'bash', { command: 'npx tsc --noEmit' }, failed ? text : '(no output)', failed);
  s.lastEvidence = { command: 'npx tsc --noEmit', signature: failed ? s.typeErrors.map((e) => e.line) : ['(no output)'] };
}

function runScript(s: State, module: string): void {
  const { rng } = s;
  const command = `node scripts/${module}-seed.js`;
  if (rng.chance(0.45)) {
    const signature = rng.pick(RUNTIME_ERRORS)(++s.errorSerial);
    const out = [signature, `    at Object.<anonymous> (scripts/${module}-seed.js:${rng.int(3, 80)}:${rng.int(2, 30)})`, '    at Module._compile (node:internal/modules/cjs/loader:1554:14)', '    at node:internal/main/run_main_module:36:49', '', `Node.js v22.${rng.int(1, 12)}.0`].join('\n');
    toolCall(s, 'bash', { command }, out, true);
    // Open until a later run of the same script succeeds (some are, some never are).
    s.commandErrors.push({ id: `cmd:${command}:${s.errorSerial}`, signature });
  } else {
    toolCall(s, 'bash', { command }, `Seeded ${rng.int(10, 900)} ${module} rows in ${rng.int(20, 900)} ms`);
    s.commandErrors = s.commandErrors.filter((e) => !e.id.startsWith(`cmd:${command}:`));
  }
}

function task(s: State): void {
  const { rng } = s;
  const module = rng.pick(MODULES);
  const files = pathsOf(module);
  let prompt = rng.pick(TASKS)(module);
  // Drawn either way, so turning pasted logs off changes nothing else in the session.
  const log = rng.chance(0.3) ? pastedLog(rng, module) : undefined;
  if (log !== undefined && s.pastedLogs) prompt += '\n\n' + log;
  s.entries.push({ type: 'user', text: prompt });
  if (rng.chance(0.15)) readFile(s, rng.pick(CONFIG_FILES));
  const steps = rng.int(3, 7);
  for (let i = 0; i < steps && s.calls < s.callBudget - 1; i++) {
    const path = rng.pick(files);
    readFile(s, path);
    if (s.calls < s.callBudget - 1 && rng.chance(0.6)) editFile(s, path);
    if (s.calls < s.callBudget - 1 && rng.chance(0.2)) runScript(s, module);
    if (s.calls < s.callBudget - 1 && rng.chance(0.5)) (rng.chance(0.7) ? runTests : typeCheck)(s, module);
  }
  if (s.calls < s.callBudget - 1) runTests(s, module);
  if (s.calls < s.callBudget) reply(s, `Done with ${module}. ${s.failingTests.length > 0 ? `${s.failingTests.length} test(s) still fail; see the last run.` : 'All tests pass.'}`);
}

/** The closing stretch: documentation only, no verification, so the last evidence lies some way back. */
function docsTail(s: State): void {
  s.entries.push({ type: 'user', text: 'Update the CHANGELOG and the docs for everything you changed today.' });
  while (s.calls < s.callBudget - 1) {
    const path = s.rng.pick(DOC_FILES);
    readFile(s, path);
    if (s.calls < s.callBudget - 1) toolCall(s, 'edit_file', { path, old_string: '## Unreleased', new_string: `## Unreleased\n\n- ${s.rng.pick(MODULES)}: fixes` }, `Edited ${path}: 1 replacement`);
  }
  reply(s, 'The CHANGELOG and docs are updated.');
}

export function generateSession(options: ScriptedSessionOptions): ScriptedSession {
  const { seed } = options;
  const modelCalls = options.modelCalls ?? DEFAULT_MODEL_CALLS;
  if (!Number.isInteger(seed)) throw new InvalidEvalOptionsError('seed', `must be an integer, got ${seed}`);
  if (!Number.isInteger(modelCalls) || modelCalls < MIN_MODEL_CALLS) {
    throw new InvalidEvalOptionsError('modelCalls', `must be an integer of at least ${MIN_MODEL_CALLS}, got ${modelCalls}`);
  }
  const rng = seededRandom(seed);
  const s: State = {
    rng,
    entries: [],
    calls: 0,
    callBudget: modelCalls - DOCS_TAIL_CALLS,
    pastedLogs: options.pastedLogs ?? true,
    nextId: 1,
    files: new Set(),
    instructions: [],
    failingTests: [],
    typeErrors: [],
    commandErrors: [],
    lastEvidence: undefined,
    errorSerial: 0,
    modified: new Set(),
    checkpoints: [],
  };
  // Two standing instructions up front; the others arrive between tasks, spread over the session.
  const pending = [...STANDING_INSTRUCTIONS];
  const give = (): void => {
    const text = pending.shift();
    if (text === undefined) return;
    s.entries.push({ type: 'user', text });
    s.instructions.push(text);
  };
  give();
  give();
  while (s.calls < s.callBudget - 1) {
    task(s);
    if (pending.length > 0 && rng.chance(0.6)) give();
  }
  if (s.calls < s.callBudget) {
    s.entries.push({ type: 'user', text: 'Thanks, that is it for the features.' });
    reply(s, 'Good. Tell me if anything else comes up.');
  }
  s.callBudget = modelCalls;
  docsTail(s);

  return {
    entries: s.entries,
    truth: { instructions: s.instructions, files: [...s.files].sort(), openErrors: openErrorsOf(s), lastEvidence: s.lastEvidence },
    modelCalls: s.calls,
    checkpoints: s.checkpoints,
  };
}
