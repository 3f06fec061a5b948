/**
 * Bedrock's errors, read once where they are seen. An HTTP error names its AWS exception in the
 * `x-amzn-errortype` header (e.g. `ValidationException:http://internal.amazon.com/…`) with a body of
 * `{ message }`; an error in the middle of a stream is an exception frame, which the Bedrock SDK turns
 * into an SSE `error` event typed by the exception's camel-cased name (`throttlingException`). Both
 * are classified by the exception's name, and an overflow by its words ("prompt is too long", "Input
 * is too long for requested model").
 */
import Anthropic from '@anthropic-ai/sdk';
import { ModelCallError, type ModelErrorKind } from '../../../core/errors';
import { isContextOverflowMessage } from '../../../core/context/compaction/overflow';
import { classifyAnthropicError, kindFor, parseRetryAfter } from '../anthropic/messages';

const AWS_KINDS: Record<string, ModelErrorKind> = {
  validationexception: 'invalid_request',
  throttlingexception: 'rate_limited',
  servicequotaexceededexception: 'rate_limited',
  serviceunavailableexception: 'overloaded',
  modelnotreadyexception: 'overloaded',
  internalserverexception: 'server',
  modelstreamerrorexception: 'server',
  modeltimeoutexception: 'server',
  modelerrorexception: 'server',
  accessdeniedexception: 'permission',
  unrecognizedclientexception: 'authentication',
  invalidsignatureexception: 'authentication',
  incompletesignatureexception: 'authentication',
  missingauthenticationtokenexception: 'authentication',
  expiredtokenexception: 'authentication',
  resourcenotfoundexception: 'not_found',
};

export function classifyBedrockError(err: unknown, baseURL?: string): ModelCallError {
  if (err instanceof ModelCallError) return err;
  if (!(err instanceof Anthropic.APIError) || err instanceof Anthropic.APIConnectionError) return classifyAnthropicError(err, baseURL, 'Bedrock');
  const status = err.status ?? 0;
  const body = err.error as { message?: string; error?: { type?: string; message?: string } } | undefined;
  const message = body?.error?.message ?? body?.message ?? err.message;
  const awsType = (err.headers?.get?.('x-amzn-errortype') ?? body?.error?.type ?? '').split(':')[0]!;
  const known = AWS_KINDS[awsType.toLowerCase()];
  const kind = known === 'invalid_request' && isContextOverflowMessage(message) ? 'context_overflow' : (known ?? kindFor(status, awsType, message));
  return new ModelCallError(kind, `Bedrock ${status || awsType}: ${message}`, status || undefined, parseRetryAfter(err.headers));
}
