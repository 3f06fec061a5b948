/**
 * The compaction decision: before each model call (trigger 'threshold'), and after the provider
 * reported an overflow (trigger 'overflow'). Its result is recorded in Temporal history (a
 * local activity), so it is plain data and says why in words. O(n) in entries.
 */
import type { Entry } from '../entries';
import type { ResolvedCompactionSettings } from '../settings';
import { anchoredEstimate, type EstimateMethod, type UsageAnchor } from '../tokens';
import type { ToolSpec } from '../tools-spec';
import { keepCount } from '../context/keep-window';
import { findCut } from './cut';
import { CURRENT_SUMMARY_PLAN, type SummaryPlan } from './summary-plan';
import { decideLadderStep, type LadderStep } from '../context/ladder';

export interface LastCompaction {
  /** History length right after that compaction. */
  entryCountAfter: number;
  tokensAfter: number;
  /** It left the context above the threshold. */
  ineffective: boolean;
}

export interface CompactionDecisionInput {
  entries: readonly Entry[];
  system?: string;
  tools?: ToolSpec[];
  settings: ResolvedCompactionSettings;
  anchor?: UsageAnchor;
  lastCompaction?: LastCompaction;
  /** Default 'threshold'. 'overflow': the provider rejected the request as too long; compact if anything can be. */
  trigger?: 'threshold' | 'overflow';
}

export interface CompactionDecision {
  compact: boolean;
  reason: 'threshold' | 'overflow' | null;
  why: string;
  estimatedTokens: number;
  estimateMethod: EstimateMethod;
  threshold: number;
  contextWindowTokens: number;
  usagePercent: number;
  /** The estimate is at or above 80% of the window. */
  warn: boolean;
  cut: number;
  entriesBefore: number;
  keptEntries: number;
  ineffectiveSkip: boolean;
  /** How the summary would be chunked (recorded, so a later change to the numbers replays the same). */
  summaryPlan: SummaryPlan;
  /**
   * Mask stale tool results in entries[0..before) before anything else (seed 004 §4). Absent: mask
   * nothing, as in every decision recorded before masking existed, so those histories replay unchanged.
   * `ids`: exactly the results to mask (absent in decisions recorded before it: the evidence rules of
   * the settings decide, as they did then).
   */
  mask?: { before: number; ids?: string[] };
  /**
   * With estimator 'count-tokens': the provider's exact input-token count the decision used (absent
   * when the count failed, or under the heuristic).
   */
  countedTokens?: number;
  /** Set only under 'count-tokens': 'count-tokens' (decided from the exact count) or 'heuristic-fallback' (the count failed). */
  estimator?: 'count-tokens' | 'heuristic-fallback';
  /**
   * The overflow-ladder step this decision is about (../context/ladder). Absent: a decision recorded
   * before the ladder existed, which means an emergency compaction keeping OVERFLOW_KEEP_RECENT entries.
   */
  ladderStep?: LadderStep;
  /** For a ladder step: carry it out (false: it would change nothing, or recovery is off; `why` says which). */
  apply?: boolean;
  /** The ladder stops here (recovery is off): the overflow becomes ContextWindowExceededError. */
  ladderStop?: boolean;
  /** purge-tool-results: the results in entries[0..before) become placeholders (recorded, so replays purge the same). */
  purge?: { before: number };
}

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

/**
 * What a decision needs, reduced to a few numbers. Computing them reads the whole history (O(n)); the
 * decision itself does not, so on Temporal only these facts travel to the recording local activity —
 * the transcript never does (a large activity input would be offloaded to the store on every call).
 */
export interface DecisionFacts {
  trigger: 'threshold' | 'overflow';
  settings: ResolvedCompactionSettings;
  estimatedTokens: number;
  estimateMethod: EstimateMethod;
  entryCount: number;
  /** Entries kept verbatim for this trigger. */
  keep: number;
  /** Where the history would be cut (0: nothing to compact). */
  cut: number;
  lastCompaction?: LastCompaction;
  /**
   * Tool results before this index are stale and worth masking now (set by the controller only when
   * masking is configured and a large enough chunk has gone stale; see ../context/mask-plan).
   */
  maskBefore?: number;
  /** Set for a decision about one overflow-ladder step (with the step's own facts below). */
  ladderStep?: LadderStep;
  /** purge-tool-results: results before this index are historical; `purgeable` of them would shrink. */
  purgeBefore?: number;
  purgeable?: number;
  /** drop-injected: summary entries carrying injected text. */
  injected?: number;
  /** The tool_use_ids of the results to mask (with maskBefore). */
  maskIds?: string[];
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
