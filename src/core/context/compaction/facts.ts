/**
 * Facts that must survive a compaction, read from the entries it is about to replace: pure and
 * deterministic (workflow code computes them; the gate in ./gate checks a summary against them). Each
 * fact names its kind, the entry it came from and the text a summary must contain for it to count as
 * kept. Heuristic by design: a fact found here that the summary misses is restated verbatim, so a
 * false positive costs a line of summary, a false negative is what the gate exists to prevent.
 */
import { assistantText, type Entry, type Fact, type SummaryEntry } from '../../entries';

export type { Fact };
export const FACT_KINDS = ['rule', 'error', 'file', 'decision', 'identifier', 'task', 'next_step'] as const satisfies readonly Fact['kind'][];
export type FactKind = Fact['kind'];

/** Fact text is cut to this: a fact is a line, not a paste. */
const FACT_CHARS = 300;
/** Facts per kind (newest kept): long sessions must not turn the restated block into the history. */
const MAX_PER_KIND = 40;

const RULE_WORDS = /\b(always|never|must|mustn't|do not|don't|dont|only|make sure|rule|required?|forbidden|avoid|prefer|no more than|at most|at least|every|keep|before you|instead of)\b|, not /i;
const DECISION_START = /^(yes|no|ok|okay|sure|approved?|deny|denied|reject(ed)?|go (ahead|with)|use|let's|lets|pick|choose|option|keep|drop|proceed|don't|do not)\b/i;
const NEXT_WORDS = /\b(next|i'll|i will|i am going to|i'm going to|going to|let me|then i|now i|plan is|still need to|remaining)\b/i;
/** Lines that name an error in a failed result (a failing test, a type error, a thrown error). */
const ERROR_LINE = /^\s*(●\s.*|.*\berror TS\d+.*|\w*Error\b.*|FAIL\s.*)$/;
/** A run that reports the whole current state (a test or type-check summary): it supersedes the last run's errors. */
const VERDICT = /^(Tests?:|Test Suites:|Found \d+ errors?\.|\d+ (passing|failing))/m;
const MAX_ERROR_LINES = 20;
/** Code-like tokens: paths, dotted names, snake_case, camelCase, CONSTANT_CASE, long hex ids, backticked spans. */
const IDENTIFIER = /`([^`\n]{2,80})`|\b([A-Za-z_][\w-]*(?:[./][\w-]+)+|[a-z]+[A-Z][A-Za-z0-9]+|[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+|[A-Z]{2,}[0-9]+|[0-9a-f]{8,})\b/g;

export interface FactOptions {
  /** The entries kept verbatim after the cut: identifiers count only when these still refer to them. */
  kept?: readonly Entry[];
}

/**
 * The facts of `replaced` (the slice a compaction summarises; a leading summary entry's carried facts
 * included), in a fixed order: by kind, then by source.
 */
export function factsToKeep(replaced: readonly Entry[], opts: FactOptions = {}): Fact[] {
  const out: Fact[] = [];
  const calls = new Map<string, string>();
  /** A call's key (tool and command or path) → its open errors, closed by a later success of the same call. */
  const openErrors = new Map<string, Fact[]>();
  const files = new Map<string, Fact>();
  let lastUser: Fact | undefined;
  let lastAssistant: { index: number; text: string } | undefined;

  replaced.forEach((e, index) => {
    if (e.type === 'summary') {
      carriedFacts(e, out, files, openErrors);
      return;
    }
    if (e.type === 'user') {
      const first = firstLine(e.text);
      if (!first) return;
      lastUser = { kind: 'task', source: index, text: first };
      for (const s of sentences(e.text)) if (RULE_WORDS.test(s)) out.push({ kind: 'rule', source: index, text: cut(s) });
      if (e.text.length <= 300 && DECISION_START.test(e.text.trim())) out.push({ kind: 'decision', source: index, text: first });
      return;
    }
    if (e.type === 'assistant') {
      const text = assistantText(e).trim();
      if (text) lastAssistant = { index, text };
      for (const b of e.content) {
        if (b.type !== 'tool_use') continue;
        calls.set(b.id, callKey(b.name, b.input));
        const path = pathOf(b.input);
        if (path && /write|edit|patch|create|apply|move|delete/i.test(b.name)) {
          files.set(path, { kind: 'file', source: index, text: path, note: `${b.name} (last change)` });
        }
      }
      return;
    }
    for (const r of e.results) {
      const key = calls.get(r.tool_use_id) ?? 'tool';
      if (!(r.is_error || looksFailed(r.content))) {
        openErrors.delete(key);
        continue;
      }
      const lines = errorLines(r.content);
      const found = (lines.length > 0 ? lines : [firstLine(r.content) || `${key} failed`]).map((l): Fact => ({ kind: 'error', source: index, text: cut(l), note: key }));
      // A test or type-check run lists every error still there; another failure of a one-off command adds to the last.
      openErrors.set(key, VERDICT.test(r.content) ? found : [...(openErrors.get(key) ?? []), ...found]);
    }
  });

  out.push(...[...openErrors.values()].flat(), ...files.values());
  if (lastUser) out.push(lastUser);
  if (lastAssistant) {
    const step = nextStep(lastAssistant.text);
    if (step) out.push({ kind: 'next_step', source: lastAssistant.index, text: cut(step) });
  }
  out.push(...identifiers(replaced, opts.kept ?? [], out));
  return order(out);
}

/** The text a probe or a resume block quotes for a kind: the newest fact of it. */
export function newestFact(facts: readonly Fact[], kind: FactKind): Fact | undefined {
  let best: Fact | undefined;
  for (const f of facts) if (f.kind === kind && (best === undefined || f.source >= best.source)) best = f;
  return best;
}

function carriedFacts(e: SummaryEntry, out: Fact[], files: Map<string, Fact>, openErrors: Map<string, Fact[]>): void {
  for (const f of e.facts ?? []) {
    const carried = { ...f, source: -1 };
    if (f.kind === 'file') files.set(f.text, carried);
    else if (f.kind === 'error') openErrors.set(f.note ?? 'tool', [...(openErrors.get(f.note ?? 'tool') ?? []), carried]);
    // An earlier task and next step are superseded by this slice's; rules, decisions and identifiers stay.
    else if (f.kind !== 'task' && f.kind !== 'next_step') out.push(carried);
  }
  // Files the earlier summary tracked without facts (recorded before facts existed) still count.
  for (const p of e.files.modified) if (!files.has(p)) files.set(p, { kind: 'file', source: -1, text: p, note: 'modified' });
}

/** What makes two calls "the same" for closing an error: the tool and its command (or path). */
function callKey(name: string, input: unknown): string {
  const o = input !== null && typeof input === 'object' ? (input as Record<string, unknown>) : {};
  const what = o.command ?? o.cmd ?? o.path ?? o.file_path;
  return typeof what === 'string' ? `${name}: ${what.slice(0, 120)}` : name;
}

function errorLines(content: string): string[] {
  const out: string[] = [];
  for (const line of content.split('\n')) {
    if (!ERROR_LINE.test(line)) continue;
    const t = line.trim();
    if (!out.includes(t)) out.push(t);
    if (out.length >= MAX_ERROR_LINES) break;
  }
  return out;
}

function looksFailed(content: string): boolean {
  const head = content.slice(0, 400);
  return /\b(\d+ (failed|failing)|FAIL\b|Tests?:.*failed|error TS\d+|exit code [1-9])/.test(head);
}

function nextStep(text: string): string | undefined {
  const all = sentences(text);
  for (let i = all.length - 1; i >= 0; i--) if (NEXT_WORDS.test(all[i]!)) return all[i];
  return all[all.length - 1];
}

function identifiers(replaced: readonly Entry[], kept: readonly Entry[], already: readonly Fact[]): Fact[] {
  if (kept.length === 0) return [];
  const later = kept.map(entryText).join('\n');
  const known = new Set(already.filter((f) => f.kind === 'file').map((f) => f.text));
  const seen = new Map<string, Fact>();
  replaced.forEach((e, index) => {
    // What was said or done names identifiers; tool output is re-readable and mostly noise.
    if (e.type === 'summary' || e.type === 'tool_results') return;
    for (const m of saidText(e).matchAll(IDENTIFIER)) {
      const id = (m[1] ?? m[2] ?? '').trim();
      if (id.length < 4 || known.has(id) || seen.has(id) || !later.includes(id)) continue;
      seen.set(id, { kind: 'identifier', source: index, text: id });
    }
  });
  return [...seen.values()];
}

/** What an entry said or asked for: user and assistant text, and a tool call's short arguments (not a whole file's content). */
function saidText(e: Entry): string {
  if (e.type === 'user') return e.text;
  if (e.type !== 'assistant') return '';
  return e.content
    .map((b) => (b.type === 'text' ? b.text : b.type === 'tool_use' && b.input !== null && typeof b.input === 'object' ? Object.values(b.input as Record<string, unknown>).filter((v): v is string => typeof v === 'string' && v.length <= 200).join('\n') : ''))
    .join('\n');
}

function entryText(e: Entry): string {
  switch (e.type) {
    case 'user':
      return e.text;
    case 'assistant':
      return e.content.map((b) => (b.type === 'text' ? b.text : b.type === 'tool_use' ? JSON.stringify(b.input) ?? '' : '')).join('\n');
    case 'tool_results':
      return e.results.map((r) => r.content.slice(0, 2000)).join('\n');
    case 'summary':
      return e.summary;
  }
}

function order(facts: Fact[]): Fact[] {
  const out: Fact[] = [];
  for (const kind of FACT_KINDS) {
    const seen = new Set<string>();
    const ofKind = facts.filter((f) => f.kind === kind && !seen.has(f.text) && (seen.add(f.text), true));
    out.push(...ofKind.slice(-MAX_PER_KIND));
  }
  return out;
}

function pathOf(input: unknown): string | undefined {
  if (input === null || typeof input !== 'object') return undefined;
  const o = input as Record<string, unknown>;
  const p = o.path ?? o.file_path ?? o.file;
  return typeof p === 'string' && p.length > 0 ? p : undefined;
}

export function firstLine(text: string): string {
  return cut((text.split('\n').find((l) => l.trim().length > 0) ?? '').trim());
}

function sentences(text: string): string[] {
  return text
    .split(/\n+|(?<=[.!?])\s+/)
    .map((s) => s.replace(/^[-*\d.)\s]+/, '').trim())
    .filter((s) => s.length >= 8);
}

function cut(s: string): string {
  return s.length <= FACT_CHARS ? s : s.slice(0, FACT_CHARS);
}
