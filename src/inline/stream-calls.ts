/**
 * Inline model calls with streaming on: each call's deltas go to `onEvent` as `stream` events as they
 * arrive (the same StreamEvents a Temporal client reads), a retried attempt announced with
 * attempt_started (a listener drops the failed attempt's partial output), and message_end with the
 * reply. Used only when the run has an onEvent listener.
 */
import type Anthropic from '@anthropic-ai/sdk';
import type { AgentEvent } from '../core/events';
import { ModelCallError } from '../core/errors';
import type { ModelCallResult } from '../core/ports';
import { streamMessages, type MessagesCall } from '../edge/anthropic';
import { liveEventOf } from '../edge/stream-publisher';
import type { StreamEvent } from '../wire/stream';
import { replyBlocks } from '../wire/stream-agent-events';

export class InlineStreamer {
  private offset = 0;
  private calls = 0;

  constructor(private readonly emit: (event: AgentEvent) => void) {}

  async call(client: () => Anthropic, call: MessagesCall, signal: AbortSignal, maxAttempts: number): Promise<ModelCallResult> {
    const callId = `m${++this.calls}`;
    for (let attempt = 1; ; attempt++) {
      const publish = (event: StreamEvent) =>
        this.emit({ type: 'stream', data: { offset: this.offset++, event: { ...event, callId, attempt, at: Date.now() } }, at: Date.now() });
      publish({ type: 'attempt_started', kind: 'model', model: call.model });
      try {
        const result = await streamMessages(client(), call, (raw) => {
          const e = liveEventOf(raw);
          if (e) publish(e);
        }, signal);
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
