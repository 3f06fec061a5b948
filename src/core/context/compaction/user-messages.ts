/**
 * User messages survive compaction verbatim (newest first, within a token budget): what the user asked
 * for is the part of history a summary must never paraphrase away. A long message (a pasted log) is
 * carried as its head, cut to a share of the budget: otherwise one paste would crowd out every older
 * instruction, the loss users complain about most.
 */
import { attachmentPlaceholder } from '../../attachments';
import type { Entry } from '../../entries';
import { estimateTextTokens } from '../../tokens';
import { truncateWithMarker } from './render';

export const DEFAULT_USER_MESSAGE_BUDGET_TOKENS = 2_000;
/** Room left for the `…[truncated N chars]` marker when a message is cut. */
const MARKER_RESERVE_CHARS = 32;
/** The newest message (what the agent is working on) may take half the budget, an older one an eighth. */
const NEWEST_SHARE = 1 / 2;
const OLDER_SHARE = 1 / 8;
const MIN_MESSAGE_TOKENS = 64;

export function carryUserMessages(
  toCompact: readonly Entry[],
  previous: readonly string[],
  budgetTokens: number = DEFAULT_USER_MESSAGE_BUDGET_TOKENS,
): string[] {
  const candidates: string[] = [];
  for (let i = toCompact.length - 1; i >= 0; i--) {
    const e = toCompact[i]!;
    // An attachment a summary replaces is kept as its one-line placeholder, like a masked one.
    if (e.type === 'user') candidates.push(e.attachments?.length ? [e.text, ...e.attachments.map(attachmentPlaceholder)].join('\n') : e.text);
  }
  candidates.push(...previous);

  const out: string[] = [];
  let remaining = Math.max(0, Math.floor(budgetTokens));
  const budget = remaining;
  for (const whole of candidates) {
    const cap = Math.max(MIN_MESSAGE_TOKENS, Math.floor(budget * (out.length === 0 ? NEWEST_SHARE : OLDER_SHARE)));
    const text = estimateTextTokens(whole) > cap ? truncateWithMarker(whole, cap * 4 - MARKER_RESERVE_CHARS) : whole;
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
