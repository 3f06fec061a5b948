/**
 * Where to cut history for compaction. entries[cut..] stay verbatim, entries[..cut) are folded into
 * one summary entry. A tool call and its results are one unit: the cut never lands between them.
 */
import type { Entry, SummaryEntry } from '../../entries';

export function findCut(entries: readonly Entry[], keepRecentEntries: number): number {
  const keep = Math.max(1, Math.floor(keepRecentEntries));
  let k = entries.length - keep;
  if (k <= 0) return 0;
  // A kept window must not start with tool results: pull the assistant entry that asked for them in.
  while (k > 0 && entries[k]!.type === 'tool_results') k--;
  // A leading summary alone is not worth re-summarising: it would only be replaced by itself.
  if (k === 1 && entries[0]!.type === 'summary') return 0;
  return k;
}

export interface CompactionSplit {
  /** The summary entry at the start of history, folded into the new summary. */
  previousSummary?: SummaryEntry;
  /** Entries to summarise (never includes `previousSummary`). Empty when cut is 0. */
  toCompact: Entry[];
  /** Entries kept verbatim (all of them when cut is 0). */
  kept: Entry[];
  cut: number;
}

export function splitForCompaction(entries: readonly Entry[], keepRecentEntries: number): CompactionSplit {
  const cut = findCut(entries, keepRecentEntries);
  if (cut === 0) return { toCompact: [], kept: entries.slice(), cut: 0 };
  const first = entries[0]!;
  const previousSummary = first.type === 'summary' ? first : undefined;
  return {
    ...(previousSummary ? { previousSummary } : {}),
    toCompact: entries.slice(previousSummary ? 1 : 0, cut),
    kept: entries.slice(cut),
    cut,
  };
}
