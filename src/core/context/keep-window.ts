/**
 * The keep window: how many of the newest entries stay verbatim when older history is compacted or its
 * tool results masked. A count of entries, a token budget, or both (the smaller window wins). Pure and
 * deterministic (workflow code): tokens are the heuristic estimate of ../tokens.
 */
import type { Entry } from '../entries';
import { estimateEntryTokens } from '../tokens';

export interface KeepWindow {
  /** Keep at most this many newest entries. */
  entries?: number;
  /** Keep the newest entries whose estimated tokens fit this budget. */
  tokens?: number;
}

/**
 * Index where the newest "unit" starts: the newest user-role message and everything after it. A
 * tool_results entry brings the assistant entry that asked for it (a tool_use is never separated from
 * its tool_result). This is the least a token window keeps, however small its budget: the model must
 * always see the message it is answering.
 */
export function minimalWindowStart(entries: readonly Entry[]): number {
  let i = entries.length - 1;
  // A trailing assistant reply (a manual compaction after a final answer) keeps the message it answered.
  while (i >= 0 && entries[i]!.type === 'assistant') i--;
  if (i < 0) return 0;
  return unitStart(entries, i);
}

/** Start of the unit that ends at `i`: a tool_results entry starts at the assistant entry before it. */
function unitStart(entries: readonly Entry[], i: number): number {
  return entries[i]!.type === 'tool_results' && i > 0 && entries[i - 1]!.type === 'assistant' ? i - 1 : i;
}

/**
 * How many of the newest entries fit `tokens` (estimated), walking back unit by unit so no tool_use is
 * split from its tool_result; never fewer than the minimal window (see minimalWindowStart).
 */
export function entriesWithinTokens(entries: readonly Entry[], tokens: number): number {
  const n = entries.length;
  if (n === 0) return 0;
  let start = minimalWindowStart(entries);
  let used = 0;
  for (let i = start; i < n; i++) used += estimateEntryTokens(entries[i]!);
  while (start > 0) {
    const from = unitStart(entries, start - 1);
    let cost = 0;
    for (let i = from; i < start; i++) cost += estimateEntryTokens(entries[i]!);
    if (used + cost > tokens) break;
    used += cost;
    start = from;
  }
  return n - start;
}

/**
 * The number of newest entries the window keeps: the smaller of the entry count and the token window;
 * undefined when neither is set (the caller's default applies). Callers still align the cut with
 * ../compaction/cut findCut, which never starts a kept window at a tool_results entry.
 */
export function keepCount(entries: readonly Entry[], window: KeepWindow): number | undefined {
  const byEntries = window.entries;
  const byTokens = window.tokens === undefined ? undefined : entriesWithinTokens(entries, window.tokens);
  if (byEntries === undefined) return byTokens;
  if (byTokens === undefined) return byEntries;
  return Math.min(byEntries, byTokens);
}
