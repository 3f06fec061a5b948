/**
 * Inline model calls with streaming on: each call's deltas go to `onEvent` as `stream` events as they
 * arrive (the same StreamEvents a Temporal client reads), a retried attempt announced with
 * attempt_started (a listener drops the failed attempt's partial output), and message_end with the
 * reply. Used only when the run has an onEvent listener.
 */
import type { AgentEvent } from '../core/events';
import { ModelCallError } from '../core/errors';
import type { ModelCallResult } from '../core/ports';
import type { MessagesCall, ModelProvider } from '../activities/models/port';
import { liveEventOf } from '../activities/stream/stream-publisher';
import type { StreamEvent } from '../wire/stream';
import { replyBlocks } from '../wire/stream-agent-events';

export class InlineStreamer {
  private offset = 0;
  private calls = 0;

  constructor(private readonly emit: (event: AgentEvent) => void) {}

  async call(provider: () => ModelProvider, call: MessagesCall, signal: AbortSignal, maxAttempts: number): Promise<ModelCallResult> {
    const callId = `m${++this.calls}`;
    for (let attempt = 1; ; attempt++) {
      const publish = (event: StreamEvent) =>
        this.emit({ type: 'stream', data: { offset: this.offset++, event: { ...event, callId, attempt, at: Date.now() } }, at: Date.now() });
      publish({ type: 'attempt_started', kind: 'model', model: call.model });
      try {
        const result = await provider().call(call, {
          signal,
          onEvent: (raw) => {
            const e = liveEventOf(raw);
            if (e) publish(e);
          },
        });
        publish({ type: 'message_end', model: result.model, stopReason: result.stopReason, usage: result.usage, content: replyBlocks(result.entry.content) });
        return result;
      } catch (err) {
        if (!(err instanceof ModelCallError) || !err.retryable || attempt >= maxAttempts) throw err;
        const backoff = err.retryAfterMs ?? Math.min(30_000, 500 * 2 ** (attempt - 1));
        await new Promise((r) => setTimeout(r, backoff));
      }
    }
  }
}
