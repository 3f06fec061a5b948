/**
 * Which tool results are verification evidence (test output, build logs): proof of where the task
 * stands, so masking keeps them verbatim. The built-in rules look at the command a call ran and at
 * pass/fail summaries in its output; settings add tool names and patterns, or turn the rules off.
 */
import type { ToolResultBlock, ToolUseBlock } from '../entries';
import type { PreserveSettings } from './tool-result-settings';

/** Decides whether a result is kept verbatim; `call` is undefined for a result whose call is not in view. */
export type PreservePredicate = (result: ToolResultBlock, call: ToolUseBlock | undefined) => boolean;

/** Test runners and build tools, as commands are usually written. */
const RUNNER_COMMANDS: readonly RegExp[] = [
  /\b(npm|pnpm|yarn|bun)\s+(run\s+)?(test|build|typecheck|check|lint)\b/,
  /\b(npx|pnpx|bunx)\s+(jest|vitest|mocha|tsc|playwright|eslint)\b/,
  // The runner as the command word (a path may lead to it); `src/jest.config.ts` is no run.
  /(^|[\s;&|(/])(jest|vitest|mocha|pytest|tox|nox|tsc|rspec|phpunit|ctest|mvn|gradle|gradlew)(?=$|[\s;&|)])/,
  /(^|[\s;&|(])make(\s|$)/,
  /\bcargo\s+(test|build|check|clippy|nextest)\b/,
  /\bgo\s+(test|build|vet)\b/,
  /\bpython3?\s+-m\s+(pytest|unittest)\b/,
  /\b(dotnet|bazel|swift)\s+(test|build)\b/,
];

/** Pass/fail summaries test runners and compilers print. */
const VERDICT_OUTPUT: readonly RegExp[] = [
  /^Tests?:\s+.*\b\d+ (passed|failed)/m, // jest
  /^\s*(Test Files|Tests)\s+.*\b\d+ (passed|failed)/m, // vitest
  /^=+ [^\n]*\b\d+ (passed|failed|errors?)\b[^\n]* in [\d.]+s/m, // pytest
  /^(ok|FAIL|---\s+FAIL:)\s+\S+/m, // go test
  /^test result: (ok|FAILED)\./m, // cargo test
  /\b\d+ (passing|failing)\b/, // mocha
  /\berror TS\d+:/, // tsc
  /^BUILD (SUCCESS|FAILURE|SUCCESSFUL|FAILED)\b/m, // maven, gradle
  /^Build (succeeded|FAILED)\./m, // dotnet
];

/** The command a call ran: its `command` (or `cmd`, `script`) argument when it is a string. */
export function commandOf(call: ToolUseBlock | undefined): string | undefined {
  const input = call?.input;
  if (input === null || typeof input !== 'object') return undefined;
  const o = input as Record<string, unknown>;
  for (const key of ['command', 'cmd', 'script']) if (typeof o[key] === 'string') return o[key] as string;
  return undefined;
}

/** The first string argument of a call (`read_file({ path })` → the path). */
export function firstStringArg(call: ToolUseBlock | undefined): string | undefined {
  const input = call?.input;
  if (typeof input === 'string') return input;
  if (input === null || typeof input !== 'object') return undefined;
  for (const v of Object.values(input as Record<string, unknown>)) if (typeof v === 'string') return v;
  return undefined;
}

/** The built-in rule: a test or build command ran, or the output carries a pass/fail summary. */
export const isVerificationEvidence: PreservePredicate = (result, call) => {
  const command = commandOf(call);
  if (command !== undefined && RUNNER_COMMANDS.some((re) => re.test(command))) return true;
  const text = verdictWindow(result.content);
  return VERDICT_OUTPUT.some((re) => re.test(text));
};

/** Runners print their verdict at the end (tsc its errors first): read only there, so a huge result costs little. */
const VERDICT_HEAD_CHARS = 2_000;
const VERDICT_TAIL_CHARS = 4_000;
function verdictWindow(content: string): string {
  if (content.length <= VERDICT_HEAD_CHARS + VERDICT_TAIL_CHARS) return content;
  return content.slice(0, VERDICT_HEAD_CHARS) + '\n' + content.slice(-VERDICT_TAIL_CHARS);
}

/** The predicate settings describe (patterns are validated by the settings schema). */
export function preservePredicate(settings: PreserveSettings | undefined): PreservePredicate {
  const useDefaults = settings?.defaults ?? true;
  const tools = new Set(settings?.tools ?? []);
  const commands = (settings?.commands ?? []).map((s) => new RegExp(s));
  const results = (settings?.results ?? []).map((s) => new RegExp(s));
  return (result, call) => {
    if (useDefaults && isVerificationEvidence(result, call)) return true;
    if (call && tools.has(call.name)) return true;
    const command = commandOf(call) ?? firstStringArg(call);
    if (command !== undefined && commands.some((re) => re.test(command))) return true;
    return results.some((re) => re.test(result.content));
  };
}
