/**
 * Recognises a provider's "your prompt does not fit" error by its wording, across providers, so the
 * overflow path can compact and retry once. Unrelated 400s (missing fields, image problems, output
 * max_tokens limits) must not match: compacting would not fix them.
 */
import { ModelCallError } from '../../errors';

const OVERFLOW_PATTERNS: readonly RegExp[] = [
  /prompt is too long/i, // Anthropic
  /maximum context length/i, // OpenAI
  /context[ _]length/i, // "context length", context_length_exceeded
  /context window/i,
  /too many tokens/i,
  /input is too long/i,
  /reduce the length/i,
  /exceeds? the context/i,
  /exceeds? (?:the )?context limit/i, // Anthropic: "input length and `max_tokens` exceed context limit"
  /input token count.*exceeds/i, // Gemini
];

export function isContextOverflowMessage(message: string): boolean {
  if (OVERFLOW_PATTERNS.some((p) => p.test(message))) return true;
  // "request too large" is also used for payload/byte limits; only token wording makes it an overflow.
  return /request too large/i.test(message) && /tokens?\b/i.test(message);
}

/** A model call failed because the request does not fit the window (said outright, or in an invalid_request's words). */
export function isOverflowError(err: unknown): boolean {
  if (err instanceof ModelCallError) {
    return err.kind === 'context_overflow' || (err.kind === 'invalid_request' && isContextOverflowMessage(err.message));
  }
  return false;
}
