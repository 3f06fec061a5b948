/**
 * Streaming for the client handles (SessionHandle, AgentHandle): `stream({ from })` and the prompt
 * that streams. Kept here so the handles gain two one-line methods each.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { StreamEnvelope } from '../../wire/stream';
import { promptStream, type PromptStream } from './prompt-stream';
import { readStream, type ReadStreamOptions } from './reader';
import { TemporalStreamTransport, type StreamTransport } from './transport';

export interface StreamOptions extends ReadStreamOptions {
  /** Read through another transport (default: Temporal only, see docs/streaming.md). */
  transport?: StreamTransport;
}

export function streamOf(client: Client, workflowId: string, options: StreamOptions = {}): AsyncIterable<StreamEnvelope> {
  const transport = options.transport ?? new TemporalStreamTransport(client, workflowId);
  return { [Symbol.asyncIterator]: () => readStream(transport, options) };
}

/** Where a session's stream is now (what happens from here on is at or after it). */
export function streamPosition(handle: { client: Client; id: string }): Promise<number> {
  return position(handle.client, handle.id);
}

/** Where the stream is now: a prompt's events are all at or after it. */
async function position(client: Client, workflowId: string, transport?: StreamTransport): Promise<number> {
  const t = transport ?? new TemporalStreamTransport(client, workflowId);
  return (await t.snapshot(Number.MAX_SAFE_INTEGER)).page.next;
}

/**
 * Sends a prompt with `send(messageId)` (which resolves to the reply) and streams its events.
 * Resolves once the prompt is accepted, so a refused prompt rejects here.
 */
export async function startPromptStream(
  client: Client,
  workflowId: string,
  send: (messageId: string) => Promise<{ reply: Promise<string> }>,
  options: { messageId?: string; transport?: StreamTransport; livePollMs?: number } = {},
): Promise<PromptStream> {
  const messageId = options.messageId ?? randomUUID();
  const from = await position(client, workflowId, options.transport);
  const { reply } = await send(messageId);
  return promptStream(messageId, reply, (signal) =>
    streamOf(client, workflowId, { from, signal, ...(options.transport ? { transport: options.transport } : {}), ...(options.livePollMs ? { livePollMs: options.livePollMs } : {}) }),
  );
}
