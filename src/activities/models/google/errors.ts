/**
 * Gemini's errors, classified once where they are seen. The SDK throws an ApiError whose message is
 * the response body as JSON (`{ error: { code, message, status, details } }`; mid-stream:
 * `got status: …. {json}`); its status is the HTTP one. Response headers do not reach us, so a rate
 * limit's delay comes from the body's RetryInfo (`retryDelay: "30s"`), as Google sends it.
 */
import { ModelCallError, type ModelErrorKind } from '../../../core/errors';
import { isContextOverflowMessage } from '../../../core/context/compaction/overflow';

interface GoogleErrorBody {
  code?: number;
  message?: string;
  status?: string;
  details?: Array<{ '@type'?: string; reason?: string; retryDelay?: string }>;
}

export function classifyGeminiError(err: unknown, baseURL?: string): ModelCallError {
  if (err instanceof ModelCallError) return err;
  const e = err as { name?: string; status?: unknown; message?: unknown } | null;
  const message = typeof e?.message === 'string' ? e.message : String(err);
  if (e?.name === 'ApiError' && typeof e.status === 'number') {
    const body = bodyOf(message);
    const status = e.status;
    const text = body?.message ?? message;
    const kind = kindFor(status, body);
    const retryAfterMs = retryDelayMs(body);
    return new ModelCallError(kind, `Gemini API ${status}${body?.status ? ` ${body.status}` : ''}: ${text}`, status, retryAfterMs);
  }
  // fetch's own failures (connection refused, DNS, an abort): name where it was going.
  const at = baseURL ? ` (${baseURL})` : '';
  const cause = (err as { cause?: { message?: string } } | null)?.cause?.message;
  return new ModelCallError('network', `${message.replace(/\.$/, '')}${cause ? `: ${cause}` : ''}${at}`);
}

function kindFor(status: number, body: GoogleErrorBody | undefined): ModelErrorKind {
  const message = body?.message ?? '';
  if (status === 400 && isContextOverflowMessage(message)) return 'context_overflow';
  // A wrong key is a 400 on Gemini's API (reason API_KEY_INVALID), a missing one a 403.
  if (body?.details?.some((d) => d.reason === 'API_KEY_INVALID') || status === 401) return 'authentication';
  if (status === 403) return 'permission';
  if (status === 404) return 'not_found';
  if (status === 429) return 'rate_limited';
  if (status >= 500 || status === 408) return 'server';
  return 'invalid_request';
}

/** The JSON error body inside the SDK's message, if there is one. */
function bodyOf(message: string): GoogleErrorBody | undefined {
  const start = message.indexOf('{');
  if (start < 0) return undefined;
  try {
    const parsed = JSON.parse(message.slice(start)) as { error?: GoogleErrorBody };
    return parsed.error && typeof parsed.error === 'object' ? parsed.error : undefined;
  } catch {
    return undefined;
  }
}

/** RetryInfo's delay ("30s", "1.5s") in ms. */
function retryDelayMs(body: GoogleErrorBody | undefined): number | undefined {
  const delay = body?.details?.find((d) => d['@type']?.endsWith('google.rpc.RetryInfo'))?.retryDelay;
  const m = delay ? /^(\d+(?:\.\d+)?)s$/.exec(delay) : null;
  return m ? Math.round(Number(m[1]) * 1000) : undefined;
}
