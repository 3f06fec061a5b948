/**
 * OpenAI's errors (HTTP and mid-stream) as ModelCallErrors, classified once here: the status decides
 * the kind, `context_length_exceeded` (the code, or the phrase a compatible server uses instead) is a
 * context overflow, and the message names the status and the request id (x-request-id) for support.
 */
import { ModelCallError, type ModelErrorKind } from '../../../core/errors';
import { isContextOverflowMessage } from '../../../core/context/compaction/overflow';
import { openaiSdk } from './sdk';

const OVERFLOW_CODES = new Set(['context_length_exceeded', 'string_above_max_length']);

/** `label` names the API in the message ('OpenAI API', or the compatible server's base URL). */
export function classifyOpenAIError(err: unknown, label: string, provider: string, signal?: AbortSignal): ModelCallError {
  // First: an aborted stream may simply end (the SDK swallows the abort), which reads as a cut stream.
  if (signal?.aborted) return aborted(label);
  if (err instanceof ModelCallError) return err;
  const sdk = openaiSdk(provider);
  if (err instanceof sdk.APIUserAbortError) return aborted(label);
  if (err instanceof sdk.APIConnectionError) return new ModelCallError('network', `${label}: ${err.message.replace(/\.$/, '')}`);
  if (err instanceof sdk.APIError) {
    const status = err.status;
    const body = (err.error ?? {}) as { message?: string; code?: string | null; type?: string };
    const message = body.message ?? err.message;
    const code = err.code ?? body.code ?? undefined;
    const kind = kindFor(status, code ?? undefined, message);
    const id = err.requestID ? ` (request ${err.requestID})` : '';
    const retryAfterMs = kind === 'rate_limited' || kind === 'server' || kind === 'overloaded' ? parseRetryAfter(err.headers) : undefined;
    return new ModelCallError(kind, `${label} ${status ?? 'stream error'}${id}: ${message}`, status, retryAfterMs);
  }
  return new ModelCallError('network', `${label}: ${err instanceof Error ? err.message : String(err)}`);
}

/** Not retryable: the caller gave up on this call (an activity cancelled, an interrupt). */
function aborted(label: string): ModelCallError {
  return new ModelCallError('invalid_request', `${label}: the request was aborted`);
}

/** An `error` event (or `response.failed`) in a Responses stream: the HTTP status was 200 already. */
export function streamedError(label: string, error: { code?: string | null; message?: string } | null | undefined): ModelCallError {
  const message = error?.message ?? 'the response failed';
  const kind = kindFor(undefined, error?.code ?? undefined, message);
  return new ModelCallError(kind, `${label} stream error${error?.code ? ` ${error.code}` : ''}: ${message}`);
}

function kindFor(status: number | undefined, code: string | undefined, message: string): ModelErrorKind {
  if ((code && OVERFLOW_CODES.has(code)) || ((status === undefined || status === 400 || status === 413) && isContextOverflowMessage(message))) return 'context_overflow';
  if (status === undefined) {
    if (code === 'rate_limit_exceeded') return 'rate_limited';
    if (code === 'invalid_prompt' || code === 'invalid_request_error') return 'invalid_request';
    return 'server'; // a stream that failed after its 200: the server's fault, and worth a retry
  }
  if (status === 401) return 'authentication';
  if (status === 403) return 'permission';
  if (status === 404) return 'not_found';
  if (status === 429) return code === 'insufficient_quota' ? 'permission' : 'rate_limited';
  if (status === 503 || status === 529) return 'overloaded';
  if (status >= 500 || status === 408 || status === 409) return 'server';
  return 'invalid_request';
}

function parseRetryAfter(headers: Headers | undefined): number | undefined {
  const ms = headers?.get?.('retry-after-ms');
  if (ms && Number.isFinite(Number(ms))) return Number(ms);
  const s = headers?.get?.('retry-after');
  if (!s) return undefined;
  if (Number.isFinite(Number(s))) return Number(s) * 1000;
  const date = Date.parse(s);
  return Number.isFinite(date) ? Math.max(0, date - Date.now()) : undefined;
}
