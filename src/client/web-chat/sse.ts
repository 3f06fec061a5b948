/**
 * The wire side of the handler: chunks as server-sent events (`id: <offset>` where a chunk came from
 * a stream event, `data: <json>`), and JSON errors. Only JSON goes out: model output is data in a JSON
 * string, never markup.
 */
import { FabricError, InvalidInputError } from '../../core/errors';
import type { OffsetChunk } from './chunks';
import { UI_MESSAGE_STREAM_HEADERS } from './protocol';

/** A UI message stream response; reading stops (`stop`) when the client goes away. */
export function sseResponse(chunks: AsyncIterable<OffsetChunk>, stop: () => void): Response {
  const encoder = new TextEncoder();
  const it = chunks[Symbol.asyncIterator]();
  let done = false;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (done) return;
      let frame: string;
      try {
        const next = await it.next();
        if (next.done) {
          done = true;
          controller.enqueue(encoder.encode('data: [DONE]\n\n'));
          controller.close();
          return;
        }
        const { offset, chunk } = next.value;
        frame = `${offset !== undefined ? `id: ${offset}\n` : ''}data: ${JSON.stringify(chunk)}\n\n`;
      } catch (err) {
        // The stream broke mid-turn (the server went away): say so in the protocol, then end.
        done = true;
        stop();
        controller.enqueue(encoder.encode(`data: ${JSON.stringify({ type: 'error', errorText: errorText(err) })}\n\n`));
        controller.close();
        return;
      }
      controller.enqueue(encoder.encode(frame));
    },
    async cancel() {
      done = true;
      stop();
      await it.return?.(undefined);
    },
  });
  return new Response(body, { status: 200, headers: UI_MESSAGE_STREAM_HEADERS });
}

/** What a failed request answers: our typed errors say their code (and field); anything else is a 500 that names nothing internal. */
export function errorResponse(err: unknown): Response {
  if (err instanceof FabricError) {
    const status = STATUS[err.code] ?? 500;
    const field = err instanceof InvalidInputError ? { field: err.field || '(body)' } : {};
    return jsonResponse(status, { error: { code: err.code, message: err.message, ...field } });
  }
  return jsonResponse(500, { error: { code: 'INTERNAL', message: 'the chat request failed' } });
}

/** A 400 for a request we could not read, naming the field. */
export function badRequest(field: string, message: string): Response {
  return jsonResponse(400, { error: { code: 'INVALID_INPUT', message: `Invalid chat request: ${field}: ${message}`, field } });
}

export function jsonResponse(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}

const STATUS: Record<string, number> = {
  INVALID_INPUT: 400,
  SESSION_NOT_FOUND: 404,
  SESSION_CLOSED: 409,
  IDEMPOTENCY_KEY_REUSED: 409,
  UNKNOWN_TOOL_CALL: 409,
  PROMPT_TOO_LARGE: 413,
  // The session did not take the message in time (no worker polling, most often); the message stays.
  WAIT_ENDED: 503,
  NO_WORKER: 503,
};

function errorText(err: unknown): string {
  return err instanceof FabricError ? `${err.code}: ${err.message}` : 'the session stream failed';
}
