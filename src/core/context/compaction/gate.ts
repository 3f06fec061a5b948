/**
 * The compaction gate: a summary is checked against the facts of what it replaces (./facts) before it
 * replaces them. Pure: the same facts and text give the same answer, so workflow code may run it (or
 * the recording local activity does, and replay follows what it recorded). What is missing is
 * restated verbatim under its own heading; the summary is never trusted as it is.
 */
import type { Fact, FactKind } from './facts';
import { FACT_KINDS } from './facts';

export type GateMode = 'restate' | 'reask';

/** Per kind: how many facts were checked, found in the summary, and restated under the gate's heading. */
export type GateCounts = { checked: number; found: number; restated: number };

/** What one gate check found: the indexes (into the facts it was given) the summary misses. */
export interface GateCheck {
  missing: number[];
}

/** The gate's result, as recorded in history and shown (`fh history`, the board, `fh chat`, the state query). */
export interface GateResult extends GateCounts {
  mode: GateMode;
  /** The summariser was asked once more, naming what it left out (mode 'reask', something missing). */
  reasked: boolean;
  byKind: Partial<Record<FactKind, GateCounts>>;
}

/** What the gate's recording local activity is given (and what a check reads when inline). */
export interface GateCheckInput {
  facts: Fact[];
  /** The summary entry as the model will read it. */
  text: string;
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

/** The facts `text` misses (by index). */
export function checkSummary(input: GateCheckInput): GateCheck {
  const text = input.text;
  const flat = normalise(text);
  const words = new Set(wordsOf(text));
  const missing: number[] = [];
  input.facts.forEach((f, i) => {
    if (!kept(f, text, flat, words)) missing.push(i);
  });
  return { missing };
}

export function factKept(fact: Fact, text: string): boolean {
  return kept(fact, text, normalise(text), new Set(wordsOf(text)));
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

/** The counts of a check, by kind. */
export function gateResult(facts: readonly Fact[], check: GateCheck, opts: { mode: GateMode; reasked: boolean; foundBeforeReask?: number }): GateResult {
  const missing = new Set(check.missing);
  const byKind: Partial<Record<FactKind, GateCounts>> = {};
  facts.forEach((f, i) => {
    const c = (byKind[f.kind] ??= { checked: 0, found: 0, restated: 0 });
    c.checked += 1;
    if (missing.has(i)) c.restated += 1;
    else c.found += 1;
  });
  const ordered: Partial<Record<FactKind, GateCounts>> = {};
  for (const k of FACT_KINDS) if (byKind[k]) ordered[k] = byKind[k];
  return { checked: facts.length, found: facts.length - missing.size, restated: missing.size, mode: opts.mode, reasked: opts.reasked, byKind: ordered };
}

/** The missing facts, verbatim, under the gate's heading (empty when nothing is missing). */
export function restatedBlock(facts: readonly Fact[], check: GateCheck): string {
  if (check.missing.length === 0) return '';
  const lines = check.missing.map((i) => {
    const f = facts[i]!;
    const text = VERBATIM.has(f.kind) ? `\`${f.text}\`` : f.text;
    return `- ${KIND_LABEL[f.kind]}: ${text}${f.note ? ` (${f.note})` : ''}`;
  });
  return `${RESTATED_HEADING}\n${lines.join('\n')}`;
}

/** The second request of mode 'reask': the summary so far and what it left out. */
export function reaskText(summary: string, facts: readonly Fact[], check: GateCheck): string {
  const list = check.missing.map((i) => `- ${KIND_LABEL[facts[i]!.kind]}: ${facts[i]!.text}`).join('\n');
  return (
    `Your summary below left out facts the conversation still depends on. Rewrite the whole summary, same sections, ` +
    `and include each of these (paths, identifiers and error lines exactly as written):\n${list}\n\n<summary>\n${summary}\n</summary>`
  );
}

/** "12 facts, 2 restated": one line for the board, `fh chat` and the transcript. */
export function describeGate(g: Pick<GateResult, 'checked' | 'restated' | 'reasked'>): string {
  return `${g.checked} fact${g.checked === 1 ? '' : 's'}, ${g.restated} restated${g.reasked ? ' (re-asked once)' : ''}`;
}

function normalise(s: string): string {
  return s.toLowerCase().replace(/[`*_"'“”‘’]/g, '').replace(/\s+/g, ' ').trim();
}

function wordsOf(s: string): string[] {
  return (s.toLowerCase().match(/[a-z0-9][a-z0-9_./-]*[a-z0-9]|[a-z0-9]/g) ?? []).filter((w) => w.length >= 3 && !STOP.has(w));
}

export { FACT_KINDS };
