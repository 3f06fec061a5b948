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

const RULE_WORDS = /\b(always|never|must|mustn't|do not|don't|dont|only|make sure|rule|required?|forbidden|avoid|prefer|no more than|at most|at least)\b/i;
const DECISION_START = /^(yes|no|ok|okay|sure|approved?|deny|denied|reject(ed)?|go (ahead|with)|use|let's|lets|pick|choose|option|keep|drop|proceed|don't|do not)\b/i;
const NEXT_WORDS = /\b(next|i'll|i will|i am going to|i'm going to|going to|let me|then i|now i|plan is|still need to|remaining)\b/i;
const TEST_OR_BUILD = /\b(test|jest|vitest|pytest|npm|tsc|build|lint|check|make|cargo|go test)\b/i;
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
  const toolNames = new Map<string, string>();
  /** tool name (or 'test') → the open error fact, closed by a later success of the same. */
  const openErrors = new Map<string, Fact>();
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
        toolNames.set(b.id, b.name);
        const path = pathOf(b.input);
        if (path && /write|edit|patch|create|apply|move|delete/i.test(b.name)) {
          files.set(path, { kind: 'file', source: index, text: path, note: `${b.name} (last change)` });
        }
      }
      return;
    }
    for (const r of e.results) {
      const name = toolNames.get(r.tool_use_id) ?? 'tool';
      const key = errorKey(name, r.content);
      if (r.is_error || looksFailed(r.content)) {
        const line = firstLine(r.content) || `${name} failed`;
        openErrors.set(key, { kind: 'error', source: index, text: cut(line), note: name });
      } else {
        openErrors.delete(key);
      }
    }
  });

  out.push(...openErrors.values(), ...files.values());
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

function carriedFacts(e: SummaryEntry, out: Fact[], files: Map<string, Fact>, openErrors: Map<string, Fact>): void {
  for (const f of e.facts ?? []) {
    const carried = { ...f, source: -1 };
    if (f.kind === 'file') files.set(f.text, carried);
    else if (f.kind === 'error') openErrors.set(errorKey(f.note ?? 'tool', f.text), carried);
    // An earlier task and next step are superseded by this slice's; rules, decisions and identifiers stay.
    else if (f.kind !== 'task' && f.kind !== 'next_step') out.push(carried);
  }
  // Files the earlier summary tracked without facts (recorded before facts existed) still count.
  for (const p of e.files.modified) if (!files.has(p)) files.set(p, { kind: 'file', source: -1, text: p, note: 'modified' });
}

/** A test run's failure is closed by a later passing test run, whatever tool ran it. */
function errorKey(tool: string, content: string): string {
  return TEST_OR_BUILD.test(content.slice(0, 200)) && /bash|shell|run|exec|test/i.test(tool) ? 'test-run' : tool;
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
    if (e.type === 'summary') return;
    for (const m of entryText(e).matchAll(IDENTIFIER)) {
      const id = (m[1] ?? m[2] ?? '').trim();
      if (id.length < 4 || known.has(id) || seen.has(id) || !later.includes(id)) continue;
      seen.set(id, { kind: 'identifier', source: index, text: id });
    }
  });
  return [...seen.values()];
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
