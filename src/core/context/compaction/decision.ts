/**
 * The shapes of a compaction decision: what it is decided from (DecisionFacts) and what it says
 * (CompactionDecision, recorded in history). Apart from decide.ts so the overflow ladder
 * (../ladder) can use them while decide.ts uses the ladder.
 */
import type { Entry } from '../../entries';
import type { ResolvedCompactionSettings } from '../settings';
import type { EstimateMethod, UsageAnchor } from '../../tokens';
import type { ToolSpec } from '../../tools-spec';
import type { SummaryPlan } from './summary-plan';

/** The overflow ladder's steps, in the order they are climbed (../ladder carries them out). */
export const LADDER_STEPS = ['emergency-compaction', 'purge-tool-results', 'drop-injected', 'session-reset'] as const;
export type LadderStep = (typeof LADDER_STEPS)[number];

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
   * Mask stale tool results in entries[0..before) before anything else (so a summary made next reads
   * placeholders). Absent: mask nothing, as in every decision recorded before masking existed, so
   * those histories replay unchanged.
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
   * The overflow-ladder step this decision is about (../ladder). Absent: a decision recorded
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
   * masking is configured and a large enough chunk has gone stale; see ../mask-plan).
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
