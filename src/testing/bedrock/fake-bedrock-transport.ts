/**
 * Bedrock's wire details, as the fake writes them: its error shapes (an AWS exception name in
 * `x-amzn-errortype`, a `{ message }` body) and its stream (AWS event-stream frames, each event a
 * `chunk` whose `bytes` are the base64 of one Anthropic stream event's JSON; an error mid-stream an
 * exception frame). The frames are encoded with @smithy/eventstream-codec, loaded when a stream is
 * first written (it comes with the Bedrock SDK).
 */
import { ProviderPackageMissingError } from '../../core/errors';
import type { PlatformReply } from '../anthropic/platform-fake';

/** An error reply as Bedrock's runtime writes it. */
export function bedrockError(status: number, type: string, message: string, requestId: string): PlatformReply {
  return {
    status,
    headers: { 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`, 'x-amzn-requestid': requestId },
    body: { message },
  };
}

/** The Bedrock exception for an Anthropic error the inner fake returned (its status and type). */
export function bedrockErrorFor(status: number, anthropicType: string): { status: number; type: string } {
  if (status === 400 || status === 413) return { status: 400, type: 'ValidationException' };
  if (status === 401) return { status: 403, type: 'UnrecognizedClientException' };
  if (status === 403) return { status: 403, type: 'AccessDeniedException' };
  if (status === 404) return { status: 404, type: 'ResourceNotFoundException' };
  if (status === 429) return { status: 429, type: 'ThrottlingException' };
  if (status === 529 || anthropicType === 'overloaded_error') return { status: 503, type: 'ServiceUnavailableException' };
  return { status: 500, type: 'InternalServerException' };
}

/** The exception frame's name for an Anthropic `error` event mid-stream (a member of Bedrock's ResponseStream union). */
export function streamExceptionFor(anthropicType: string): string {
  if (anthropicType === 'overloaded_error') return 'serviceUnavailableException';
  if (anthropicType === 'rate_limit_error') return 'throttlingException';
  if (anthropicType === 'api_error') return 'internalServerException';
  return 'modelStreamErrorException';
}

interface Codec {
  encode(message: { headers: Record<string, { type: 'string'; value: string }>; body: Uint8Array }): Uint8Array;
}
let codec: Codec | undefined;

function eventStreamCodec(): Codec {
  if (codec) return codec;
  let mod: { EventStreamCodec: new (toUtf8: (b: Uint8Array) => string, fromUtf8: (s: string) => Uint8Array) => Codec };
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    mod = require('@smithy/eventstream-codec');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND') throw new ProviderPackageMissingError('@smithy/eventstream-codec', 'bedrock', 'The Bedrock fake');
    throw err;
  }
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  return (codec = new mod.EventStreamCodec((b) => decoder.decode(b), (s) => encoder.encode(s)));
}

const str = (value: string) => ({ type: 'string' as const, value });

/** One `chunk` event frame carrying `event` (an Anthropic stream event). */
export function chunkFrame(event: unknown): Uint8Array {
  const bytes = Buffer.from(JSON.stringify(event)).toString('base64');
  return eventStreamCodec().encode({
    headers: { ':event-type': str('chunk'), ':content-type': str('application/json'), ':message-type': str('event') },
    body: new TextEncoder().encode(JSON.stringify({ bytes })),
  });
}

/** One exception frame (`:message-type: exception`), as Bedrock ends a stream that failed. */
export function exceptionFrame(exceptionType: string, message: string): Uint8Array {
  return eventStreamCodec().encode({
    headers: { ':exception-type': str(exceptionType), ':content-type': str('application/json'), ':message-type': str('exception') },
    body: new TextEncoder().encode(JSON.stringify({ message })),
  });
}

/** Loads the codec now, so a missing package fails the request before its reply starts. */
export function ensureCodec(): void {
  eventStreamCodec();
}
