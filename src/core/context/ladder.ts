/**
 * The overflow ladder: when the provider says a request does not fit, the session climbs
 * these steps in order, each at most once per prompt, until a retry fits:
 *   1. emergency-compaction: summarise all but the last two turns;
 *   2. purge-tool-results: every historical tool result becomes its one-line placeholder (evidence too);
 *   3. drop-injected: text injected after summaries (afterCompact hooks, memory) is dropped;
 *   4. session-reset: the conversation becomes a transfer summary + memory + the current prompt.
 * Each step is a recorded decision (DecisionFacts.ladderStep → CompactionDecision.ladderStep), made
 * from a few numbers computed here; carrying a step out (also here, except the reset's summary call)
 * is pure and deterministic, and reads only the recorded decision, so a replay under other settings
 * rewrites history exactly as the recorded run did.
 */
import type { Entry, SummaryEntry } from '../entries';
import type { CompactionDecision, DecisionFacts, LadderStep } from './compaction/decision';
import { findCut } from './compaction/cut';
import { maskStaleToolResults } from './mask';

import { LADDER_STEPS } from './compaction/decision';
import { plural } from '../plural';
export { LADDER_STEPS, type LadderStep } from './compaction/decision';

/** Patch id for the ladder's new local activities (histories from 0.1.0–0.3.0 take the single compaction). */
export const OVERFLOW_LADDER_PATCH = 'fh-overflow-ladder';
/** Turns the emergency compaction keeps verbatim (a turn: a user entry and everything after it). */
export const LADDER_KEEP_TURNS = 2;
/** What stands where dropped injected text was, so the model knows something was there. */
export const DROPPED_INJECTED_NOTE = '[Injected context (hook or memory text) was dropped so the conversation fits the context window.]';

/** Steps already climbed in the running prompt: the single-retry guard (each step at most once, no loops). */
export class OverflowLadderState {
  private readonly climbed = new Set<LadderStep>();
  /** Set once the runtime said whether the ladder applies (Temporal: the patch marker). */
  patched: boolean | undefined;
  /** The pre-ladder single compaction was already tried (unpatched histories). */
  legacyTried = false;

  has(step: LadderStep): boolean {
    return this.climbed.has(step);
  }

  mark(step: LadderStep): void {
    this.climbed.add(step);
  }

  /** The next step not yet climbed, in ladder order (undefined: the ladder is exhausted). */
  next(): LadderStep | undefined {
    return LADDER_STEPS.find((s) => !this.climbed.has(s));
  }
}

/** Entries kept verbatim so that the last `turns` turns survive (all entries from their first user entry). */
export function keepForTurns(entries: readonly Entry[], turns: number): number {
  let seen = 0;
  for (let i = entries.length - 1; i >= 0; i--) {
    if (entries[i]!.type !== 'user') continue;
    seen += 1;
    if (seen === turns) return entries.length - i;
  }
  // Fewer turns than asked: keep from the first user entry (a leading summary can still be folded).
  const first = entries.findIndex((e) => e.type === 'user');
  return first === -1 ? entries.length : entries.length - first;
}

/** Index of the latest tool_results entry (-1: none): its results are the live ones and stay verbatim. */
export function latestToolResults(entries: readonly Entry[]): number {
  for (let i = entries.length - 1; i >= 0; i--) if (entries[i]!.type === 'tool_results') return i;
  return -1;
}

const purgeAll = () => false;
/** The running prompt's attachments (no user message after it) stay: the turn is about them. */
const runningPrompts = (_: unknown, later: readonly Entry[]) => !later.some((e) => e.type === 'user');

/** Replaces every tool result in entries[0..before) with its placeholder, evidence included. */
export function purgeToolResults(entries: readonly Entry[], before: number) {
  return maskStaleToolResults(entries, { before, preserve: purgeAll, keepAttachment: runningPrompts });
}

function hasDroppableInjection(e: Entry): e is SummaryEntry & { injected: string } {
  return e.type === 'summary' && e.injected !== undefined && e.injected.trim() !== '' && e.injected !== DROPPED_INJECTED_NOTE;
}

/** Summary entries whose injected text (hooks, memory) is dropped; the note stands in its place. */
export function dropInjected(entries: readonly Entry[]): { entries: Entry[]; dropped: number } {
  let dropped = 0;
  const out = entries.map((e): Entry => {
    if (!hasDroppableInjection(e)) return e;
    dropped += 1;
    return { ...e, injected: DROPPED_INJECTED_NOTE };
  });
  return { entries: dropped === 0 ? [...entries] : out, dropped };
}

/** The numbers a step's decision is made from (computed in workflow code, recorded with the decision). */
export function ladderFacts(
  entries: readonly Entry[],
  step: LadderStep,
): Pick<DecisionFacts, 'ladderStep' | 'keep' | 'cut' | 'purgeBefore' | 'purgeable' | 'injected'> {
  switch (step) {
    case 'emergency-compaction': {
      const keep = keepForTurns(entries, LADDER_KEEP_TURNS);
      return { ladderStep: step, keep, cut: findCut(entries, keep) };
    }
    case 'purge-tool-results': {
      const before = Math.max(0, latestToolResults(entries));
      return { ladderStep: step, keep: entries.length - before, cut: 0, purgeBefore: before, purgeable: purgeToolResults(entries, before).masked };
    }
    case 'drop-injected':
      return { ladderStep: step, keep: entries.length, cut: 0, injected: entries.filter(hasDroppableInjection).length };
    case 'session-reset':
      return { ladderStep: step, keep: 1, cut: entries.length };
  }
}

/**
 * The decision for one ladder step; `base` is the overflow decision's common numbers. A step that
 * would change nothing is skipped (apply false, `why` says so); recovery off stops the ladder.
 */
export function decideLadderStep(facts: DecisionFacts, base: CompactionDecision): CompactionDecision {
  const step = facts.ladderStep!;
  const { settings, entryCount } = facts;
  const on = settings.enabled && settings.recoverFromOverflow;
  let apply: boolean;
  let why: string;
  let extra: Partial<CompactionDecision> = {};
  if (!on) {
    apply = false;
    why = `the provider reported a context overflow, but ${settings.enabled ? 'recoverFromOverflow is off' : 'compaction is disabled'}`;
    extra = { ladderStop: true };
  } else if (step === 'emergency-compaction') {
    apply = facts.cut > 0;
    why = apply
      ? `overflow ladder, emergency compaction: summarising ${facts.cut} of ${entryCount} entries, keeping the last ${LADDER_KEEP_TURNS} turns (${facts.keep} entries)`
      : `overflow ladder, emergency compaction skipped: nothing before the last ${LADDER_KEEP_TURNS} turns to summarise (${entryCount} entries)`;
  } else if (step === 'purge-tool-results') {
    const n = facts.purgeable ?? 0;
    apply = n > 0;
    why = apply
      ? `overflow ladder, purging ${plural(n, 'historical tool result', 'historical tool results')} to one-line placeholders (all before entry ${facts.purgeBefore})`
      : 'overflow ladder, purge skipped: no historical tool result left to replace';
    if (apply) extra = { purge: { before: facts.purgeBefore! } };
  } else if (step === 'drop-injected') {
    const n = facts.injected ?? 0;
    apply = n > 0;
    why = apply ? `overflow ladder, dropping injected text from ${plural(n, 'summary entry', 'summary entries')}` : 'overflow ladder, drop skipped: no injected text in the conversation';
  } else {
    apply = entryCount > 1;
    why = apply
      ? `overflow ladder, session reset: replacing ${entryCount} entries with a transfer summary, the memory and the current prompt`
      : 'overflow ladder, session reset skipped: the conversation is only the current prompt';
  }
  const compacting = apply && step === 'emergency-compaction';
  return {
    ...base,
    compact: compacting,
    reason: apply ? 'overflow' : null,
    why,
    cut: step === 'emergency-compaction' ? facts.cut : 0,
    keptEntries: step === 'emergency-compaction' ? entryCount - facts.cut : entryCount,
    ladderStep: step,
    apply,
    ...extra,
  };
}
