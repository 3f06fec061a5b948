/**
 * How a compaction splits the slice it summarises into summariser requests. The numbers are part of
 * the recorded compaction decision: the number of summary activities a compaction schedules follows
 * from them, so a run replays with the numbers it was recorded with, even after the code's change.
 */
export interface SummaryPlan {
  /** Tokens reserved per request for instructions and framing beyond the system prompt and summary. */
  requestSlackTokens: number;
  /** No chunk is planned smaller than this. */
  minChunkTokens: number;
}

export const CURRENT_SUMMARY_PLAN: SummaryPlan = { requestSlackTokens: 256, minChunkTokens: 128 };
