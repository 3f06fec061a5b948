/**
 * The compaction gate: a summary is checked against the facts of what it replaces (./facts) before it
 * replaces them. Pure: the same facts and text give the same answer, so workflow code may run it (or
 * the recording local activity does, and replay follows what it recorded). What is missing is
 * restated verbatim under its own heading; the summary is never trusted as it is.
 */
import type { Fact, FactKind } from './facts';
import { FACT_KINDS } from './facts';
import { plural } from '../../plural';

export type GateMode = 'restate' | 'reask';

/** Per kind: how many facts were checked, found in the summary, and restated under the gate's heading. */
export type GateCounts = { checked: number; found: number; restated: number };

/** The gate's result, as recorded in history and shown (`fh history`, the board, `fh chat`, the state query). */
export interface GateResult extends GateCounts {
  /** Missing facts left out of the restated block because it was full (absent: none). */
  overBudget?: number;
  /** 'reask' with something missing and `reasked` false: the summariser is asked once more next. */
  mode: GateMode;
  /** This check is of the summariser's second answer (mode 'reask'). */
  reasked: boolean;
  byKind: Partial<Record<FactKind, GateCounts>>;
}

/** One check as recorded (on Temporal the local activity fhCheckSummaryGate's result): the counts and the facts the summary misses. */
export interface GateCheck extends GateResult {
  missing: Fact[];
}

/** What a check is given: the facts, the summary entry as the model will read it, and where in the gate it is. */
export interface GateCheckInput {
  facts: Fact[];
  text: string;
  mode: GateMode;
  reasked: boolean;
}

export const RESTATED_HEADING = '## Facts Restated (verbatim: the summary left them out)';

const KIND_LABEL: Record<FactKind, string> = {
  rule: 'Rule',
  error: 'Open error',
  file: 'File changed',
  decision: 'User decision',
  identifier: 'Identifier',
  task: 'Task in flight',
  next_step: 'Next step',
};

/** Kinds checked verbatim (exact identifiers and paths) or by a message's first line, as opposed to by content. */
const VERBATIM: ReadonlySet<FactKind> = new Set(['file', 'identifier']);
const FIRST_LINE: ReadonlySet<FactKind> = new Set(['error', 'decision', 'task']);
/** A rule or next step counts as kept when this share of its words is in the summary. */
const CONTENT_SHARE = 0.8;
const STOP = new Set(['the', 'and', 'for', 'that', 'this', 'with', 'you', 'are', 'was', 'will', 'then', 'from', 'have', 'has', 'not', 'but', 'all', 'any', 'its', 'into', 'our']);

/** Checks `text` against the facts: what it misses, and the counts by kind. Pure, so the recording activity and inline runs agree. */
export function checkSummary(input: GateCheckInput): GateCheck {
  const text = input.text;
  const flat = normalise(text);
  const words = new Set(wordsOf(text));
  const missing: Fact[] = [];
  const byKind: Partial<Record<FactKind, GateCounts>> = {};
  for (const k of FACT_KINDS) {
    for (const f of input.facts) {
      if (f.kind !== k) continue;
      const c = (byKind[k] ??= { checked: 0, found: 0, restated: 0 });
      c.checked += 1;
      if (kept(f, text, flat, words)) c.found += 1;
      else {
        c.restated += 1;
        missing.push(f);
      }
    }
  }
  const checked = input.facts.length;
  return { checked, found: checked - missing.length, restated: missing.length, mode: input.mode, reasked: input.reasked, byKind, missing };
}

/** The recorded check without its facts: what events, state and the audit show. */
export function gateResult(check: GateCheck): GateResult {
  const { missing: _missing, ...result } = check;
  return result;
}

export function factKept(fact: Fact, text: string): boolean {
  return keptIn(text)(fact);
}

/** A check of many facts against one text (the text read once). */
export function keptIn(text: string): (fact: Fact) => boolean {
  const flat = normalise(text);
  const words = new Set(wordsOf(text));
  return (f) => kept(f, text, flat, words);
}

function kept(f: Fact, text: string, flat: string, words: ReadonlySet<string>): boolean {
  if (VERBATIM.has(f.kind)) return text.includes(f.text);
  const wanted = normalise(f.text);
  if (flat.includes(wanted)) return true;
  if (FIRST_LINE.has(f.kind)) return false;
  const own = [...new Set(wordsOf(f.text))];
  if (own.length === 0) return true;
  return own.filter((w) => words.has(w)).length / own.length >= CONTENT_SHARE;
}

/**
 * The restated block's budget: a summary that dropped everything must not come back larger than the
 * history it replaced (an overflow compaction is there to shrink it). ~3,000 tokens.
 */
export const RESTATE_MAX_CHARS = 12_000;
/** What is restated first when not everything fits: identifiers, the most numerous and the easiest to re-read, last. */
const RESTATE_ORDER: readonly FactKind[] = ['rule', 'error', 'next_step', 'task', 'decision', 'file', 'identifier'];

/** The missing facts that fit the restated block's budget, most important kinds first (stable within a kind). */
export function restatable(missing: readonly Fact[], maxChars = RESTATE_MAX_CHARS): Fact[] {
  const out: Fact[] = [];
  let used = 0;
  for (const kind of RESTATE_ORDER) {
    for (const f of missing) {
      if (f.kind !== kind) continue;
      const cost = f.text.length + (f.note?.length ?? 0) + 24;
      if (used + cost > maxChars) continue;
      used += cost;
      out.push(f);
    }
  }
  return out;
}

/** The missing facts, verbatim, under the gate's heading (empty when nothing is missing). */
export function restatedBlock(missing: readonly Fact[]): string {
  if (missing.length === 0) return '';
  const lines = missing.map((f) => {
    const text = VERBATIM.has(f.kind) ? `\`${f.text}\`` : f.text;
    return `- ${KIND_LABEL[f.kind]}: ${text}${f.note ? ` (${f.note})` : ''}`;
  });
  return `${RESTATED_HEADING}\n${lines.join('\n')}`;
}

/** The second request of mode 'reask': the summary so far and what it left out. */
export function reaskText(summary: string, missing: readonly Fact[]): string {
  const list = missing.map((f) => `- ${KIND_LABEL[f.kind]}: ${f.text}`).join('\n');
  return (
    `Your summary below left out facts the conversation still depends on. Rewrite the whole summary, same sections, ` +
    `and include each of these (paths, identifiers and error lines exactly as written):\n${list}\n\n<summary>\n${summary}\n</summary>`
  );
}

/** "12 facts, 2 restated": one line for the board, `fh chat` and the transcript. */
export function describeGate(g: Pick<GateResult, 'checked' | 'restated' | 'reasked'>): string {
  return `${plural(g.checked, 'fact', 'facts')}, ${g.restated} restated${g.reasked ? ' (re-asked once)' : ''}`;
}

function normalise(s: string): string {
  return s.toLowerCase().replace(/[`*_"'“”‘’]/g, '').replace(/\s+/g, ' ').trim();
}

function wordsOf(s: string): string[] {
  return (s.toLowerCase().match(/[a-z0-9][a-z0-9_./-]*[a-z0-9]|[a-z0-9]/g) ?? []).filter((w) => w.length >= 3 && !STOP.has(w));
}

export { FACT_KINDS };
