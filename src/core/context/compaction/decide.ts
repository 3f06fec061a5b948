/**
 * The compaction decision: before each model call (trigger 'threshold'), and after the provider
 * reported an overflow (trigger 'overflow'). Its result is recorded in Temporal history (a
 * local activity), so it is plain data and says why in words. O(n) in entries.
 */
import { anchoredEstimate } from '../../tokens';
import { keepCount } from '../keep-window';
import { findCut } from './cut';
import { CURRENT_SUMMARY_PLAN } from './summary-plan';
import { decideLadderStep } from '../ladder';
import type { CompactionDecision, CompactionDecisionInput, DecisionFacts } from './decision';

export type { LastCompaction, CompactionDecisionInput, CompactionDecision, DecisionFacts } from './decision';

/** The decision asks the session to rewrite history before the model is called (no call is made with it). */
export function actsBeforeCall(decision: CompactionDecision): boolean {
  return decision.compact || decision.mask !== undefined;
}

export const WARN_FRACTION = 0.8;
/** Under overflow the kept window shrinks to at most this many entries (emergency compaction). */
export const OVERFLOW_KEEP_RECENT = 4;

/** A compaction that leaves the context still above the threshold did not help. */
export function isIneffective(tokensAfter: number, threshold: number): boolean {
  return tokensAfter > threshold;
}

/** Percent with one decimal, so events and logs read cleanly. */
export function percentOf(part: number, whole: number): number {
  return whole > 0 ? Math.round((part / whole) * 1000) / 10 : 0;
}

export function decisionFacts(input: CompactionDecisionInput): DecisionFacts {
  const { entries, settings } = input;
  const { total, method } = anchoredEstimate({ anchor: input.anchor, entries, system: input.system, tools: input.tools });
  const trigger = input.trigger ?? 'threshold';
  // The smaller of the entry and token windows; the cut it gives is recorded with the decision, so a
  // replay under other keep settings still cuts where the recorded run did.
  const window = keepCount(entries, { entries: settings.keepRecentEntries, tokens: settings.keepRecentTokens })!;
  const keep = trigger === 'overflow' ? Math.min(window, OVERFLOW_KEEP_RECENT) : window;
  return {
    trigger,
    settings,
    estimatedTokens: total,
    estimateMethod: method,
    entryCount: entries.length,
    keep,
    cut: findCut(entries, keep),
    lastCompaction: input.lastCompaction,
  };
}

export function decideCompaction(input: CompactionDecisionInput): CompactionDecision {
  return decideFromFacts(decisionFacts(input));
}

export function decideFromFacts(facts: DecisionFacts): CompactionDecision {
  const { settings, lastCompaction, estimatedTokens, keep, cut, entryCount } = facts;
  const method = facts.estimateMethod;
  const threshold = settings.compactAtTokens;
  const window = settings.contextWindowTokens;
  const overflow = facts.trigger === 'overflow';
  const over = estimatedTokens > threshold;
  const addedSince = lastCompaction ? entryCount - lastCompaction.entryCountAfter : 0;
  // No loops: compacting again right after a compaction that did not get under the threshold would
  // summarise the summary over and over. Wait for more than keepRecentEntries new entries (new
  // material to fold); until then the overflow path handles a request that really does not fit.
  const ineffectiveSkip = settings.enabled && over && cut > 0 && !!lastCompaction?.ineffective && addedSince <= keep;

  let why: string;
  if (overflow)
    why =
      cut > 0
        ? `the provider reported a context overflow; compacting ${cut} of ${entryCount} entries, keeping ${keep}`
        : `the provider reported a context overflow, but there is nothing to compact (${entryCount} entries, keeping ${keep})`;
  else if (!settings.enabled) why = 'compaction is disabled';
  else if (!over) why = `estimate ${estimatedTokens} tokens is within the threshold of ${threshold}`;
  else if (cut === 0)
    why = `estimate ${estimatedTokens} tokens is over the threshold of ${threshold}, but there is nothing to compact: all ${entryCount} entries fall in the keep-recent window (${keep} entries${settings.keepRecentTokens !== undefined ? `, keepRecentTokens=${settings.keepRecentTokens}` : ''})`;
  else if (ineffectiveSkip)
    why = `estimate ${estimatedTokens} tokens is over the threshold of ${threshold}, but the last compaction left ${lastCompaction!.tokensAfter} tokens (still over) and only ${addedSince} entries were added since (need more than ${keep}); not compacting again`;
  else why = `estimate ${estimatedTokens} tokens is over the threshold of ${threshold}; compacting ${cut} of ${entryCount} entries`;

  const compact = overflow ? cut > 0 : settings.enabled && over && cut > 0 && !ineffectiveSkip;
  const decision: CompactionDecision = {
    compact,
    reason: compact ? (overflow ? 'overflow' : 'threshold') : null,
    why,
    estimatedTokens,
    estimateMethod: method,
    threshold,
    contextWindowTokens: window,
    usagePercent: percentOf(estimatedTokens, window),
    warn: estimatedTokens >= WARN_FRACTION * window,
    cut,
    entriesBefore: entryCount,
    keptEntries: entryCount - cut,
    ineffectiveSkip,
    summaryPlan: CURRENT_SUMMARY_PLAN,
    ...(facts.maskBefore !== undefined && facts.trigger === 'threshold'
      ? { mask: { before: facts.maskBefore, ...(facts.maskIds ? { ids: facts.maskIds } : {}) } }
      : {}),
  };
  return overflow && facts.ladderStep ? decideLadderStep(facts, decision) : decision;
}
