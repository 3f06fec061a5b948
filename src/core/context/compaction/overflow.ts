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
  /exceeds the maximum number of tokens allowed/i, // Gemini: "… exceeds the maximum number of tokens allowed (1048576)"
  /input tokens exceed the configured limit/i, // OpenAI Responses: "Input tokens exceed the configured limit of 272000 tokens"
  /exceeded model token limit/i, // Moonshot/Kimi: "Your request exceeded model token limit: 262144 (requested: 269030)"
  /model max length exceeded/i, // Moonshot: "model max length exceeded, max length:8192"
  // OpenRouter ("This endpoint's maximum context length is …") and vLLM ("This model's maximum context length
  // is …") say "maximum context length"; Ollama ("the input length exceeds the context length") "exceeds the context".
];

/** Error codes providers give a request that does not fit (OpenAI and compatible servers: `error.code`). */
export const CONTEXT_OVERFLOW_CODES: readonly string[] = ['context_length_exceeded'];

/** A provider's error code that says the request does not fit the window. */
export function isContextOverflowCode(code: unknown): boolean {
  return typeof code === 'string' && CONTEXT_OVERFLOW_CODES.includes(code);
}

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
