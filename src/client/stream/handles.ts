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
import { sharedReader } from './shared-transport';
import type { LiveBrokerClient } from './broker-transport';
import { checkStreamOptions } from '../call-options';

export interface StreamOptions extends ReadStreamOptions {
  /**
   * Read through another transport (default: Temporal only, through the one upstream reader this process
   * shares for the workflow: see docs/streaming.md).
   */
  transport?: StreamTransport;
  /** Live events from the broker (Redis Streams) the workers publish to: `liveBroker({ url })` (docs/streaming.md). */
  broker?: LiveBrokerClient;
}

/** How a handle names a failure of its own (a session: SESSION_NOT_FOUND for Temporal's WorkflowNotFoundError). */
export type ErrorMapper = (err: unknown) => unknown;

export function streamOf(client: Client, workflowId: string, options: StreamOptions = {}, typed?: ErrorMapper): AsyncIterable<StreamEnvelope> {
  checkStreamOptions(options);
  return {
    [Symbol.asyncIterator]: () => {
      const events = options.transport ? readStream(options.transport, options) : sharedRead(client, workflowId, options);
      return typed ? typedErrors(events, typed) : events;
    },
  };
}

/** readStream on this process's shared reader of the workflow, released when the reader stops. */
async function* sharedRead(client: Client, workflowId: string, options: StreamOptions): AsyncGenerator<StreamEnvelope> {
  const reader = sharedReader(client, workflowId, options.broker);
  try {
    yield* readStream(reader.transport, options);
  } finally {
    reader.release();
  }
}

/** The reader's events as they are; its failure as the handle names it. */
async function* typedErrors<T>(events: AsyncGenerator<T>, typed: ErrorMapper): AsyncGenerator<T> {
  try {
    yield* events;
  } catch (err) {
    throw typed(err);
  }
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
  typed?: ErrorMapper,
  /** How the stream's position is read (a session's: within the prompt's wait bound, as its queries are). */
  read: <T>(ask: () => Promise<T>) => Promise<T> = (ask) => ask(),
): Promise<PromptStream> {
  checkStreamOptions({ transport: options.transport, livePollMs: options.livePollMs }); // before the prompt is sent
  const messageId = options.messageId ?? randomUUID();
  const from = await read(() => position(client, workflowId, options.transport)).catch((err: unknown) => {
    throw typed ? typed(err) : err;
  });
  const { reply } = await send(messageId);
  return promptStream(messageId, reply, (signal) =>
    streamOf(client, workflowId, { from, signal, ...(options.transport ? { transport: options.transport } : {}), ...(options.livePollMs ? { livePollMs: options.livePollMs } : {}) }, typed),
  );
}
