/**
 * User messages survive compaction verbatim (newest first, within a token budget): what the user asked
 * for is the part of history a summary must never paraphrase away.
 */
import type { Entry } from '../entries';
import { estimateTextTokens } from '../tokens';
import { truncateWithMarker } from './render';

export const DEFAULT_USER_MESSAGE_BUDGET_TOKENS = 2_000;
/** Room left for the `…[truncated N chars]` marker when the newest message is cut. */
const MARKER_RESERVE_CHARS = 32;

export function carryUserMessages(
  toCompact: readonly Entry[],
  previous: readonly string[],
  budgetTokens: number = DEFAULT_USER_MESSAGE_BUDGET_TOKENS,
): string[] {
  const candidates: string[] = [];
  for (let i = toCompact.length - 1; i >= 0; i--) {
    const e = toCompact[i]!;
    if (e.type === 'user') candidates.push(e.text);
  }
  candidates.push(...previous);

  const out: string[] = [];
  let remaining = Math.max(0, Math.floor(budgetTokens));
  for (const text of candidates) {
    const cost = estimateTextTokens(text);
    if (cost <= remaining) {
      out.push(text);
      remaining -= cost;
      continue;
    }
    // The newest message is the one the agent is working on: keep its head rather than nothing.
    if (out.length === 0) {
      const room = remaining * 4 - MARKER_RESERVE_CHARS;
      if (room > 0) out.push(truncateWithMarker(text, room));
    }
    // Stop at the first message that does not fit: carried messages stay a contiguous recent run.
    break;
  }
  return out;
}
