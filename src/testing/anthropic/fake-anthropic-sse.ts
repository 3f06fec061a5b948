/**
 * The fake's streaming responses (`stream: true`), as the Messages API sends them: server-sent events
 * `message_start`, `content_block_start` / `content_block_delta` / `content_block_stop` per block
 * (text_delta; thinking_delta then signature_delta; input_json_delta for tool_use; redacted_thinking
 * and compaction blocks whole in their start), `ping`, `message_delta` (stop reason, output usage,
 * context_management) and `message_stop`. A step can pace its deltas, pause at a gate the test
 * releases, or end in an `error` event mid-stream (e.g. overloaded_error), as the real API does.
 */
import type * as http from 'node:http';
import type Anthropic from '@anthropic-ai/sdk';

export interface FakeStreamOptions {
  /** Characters of text, thinking or tool input JSON per delta. Default 8. */
  chunkChars?: number;
  /** Milliseconds between deltas. Default 0. */
  delayMs?: number;
  /** After this many deltas the stream waits until the test calls `fake.release(gate)`. */
  pauseAfterDeltas?: number;
  /** The gate's name (default 'default'); `fake.paused(gate)` resolves once a stream waits at it. */
  gate?: string;
  /** After this many deltas an `error` event ends the stream (the HTTP status stays 200). */
  errorAfterDeltas?: number;
  /** The mid-stream error's type. Default overloaded_error. */
  errorType?: 'overloaded_error' | 'api_error' | 'rate_limit_error';
  /** Called as each delta is written (its index in the reply): when the model "said" it, for measuring lag. */
  onDeltaSent?: (index: number) => void;
}

export interface SseEvent {
  event: string;
  data: Record<string, unknown>;
}

/** Gates a streaming step waits at, and the tests that wait for a stream to reach one. */
export class StreamGates {
  private readonly open = new Set<string>();
  private readonly waiting = new Map<string, Array<() => void>>();
  private readonly arrived = new Map<string, Array<() => void>>();
  private readonly reached = new Set<string>();

  /** Lets every stream at the gate (and any that reaches it later) go on. */
  release(gate = 'default'): void {
    this.open.add(gate);
    for (const go of this.waiting.get(gate) ?? []) go();
    this.waiting.delete(gate);
  }

  /** Resolves once a stream waits at the gate (or has passed it). */
  paused(gate = 'default'): Promise<void> {
    if (this.reached.has(gate)) return Promise.resolve();
    return new Promise((resolve) => this.arrived.set(gate, [...(this.arrived.get(gate) ?? []), resolve]));
  }

  wait(gate: string): Promise<void> {
    this.reached.add(gate);
    for (const r of this.arrived.get(gate) ?? []) r();
    this.arrived.delete(gate);
    if (this.open.has(gate)) return Promise.resolve();
    return new Promise((resolve) => this.waiting.set(gate, [...(this.waiting.get(gate) ?? []), resolve]));
  }
}

function chunks(s: string, n: number): string[] {
  const out: string[] = [];
  const chars = Array.from(s); // never split a surrogate pair
  for (let i = 0; i < chars.length; i += n) out.push(chars.slice(i, i + n).join(''));
  return out;
}

/** The events for a complete message, in the order the API sends them. */
export function sseEventsFor(message: Anthropic.Message, chunkChars = 8): SseEvent[] {
  const m = message as Anthropic.Message & { context_management?: unknown };
  const events: SseEvent[] = [];
  const usage = m.usage;
  events.push({
    event: 'message_start',
    data: {
      type: 'message_start',
      message: { ...m, content: [], stop_reason: null, stop_sequence: null, context_management: undefined, usage: { ...usage, output_tokens: 1 } },
    },
  });
  m.content.forEach((block, index) => {
    const b = block as unknown as Record<string, any>;
    const start = (content_block: unknown) => events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block } });
    const delta = (d: Record<string, unknown>) => events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: d } });
    if (b.type === 'text') {
      start({ type: 'text', text: '', citations: null });
      for (const t of chunks(b.text, chunkChars)) delta({ type: 'text_delta', text: t });
    } else if (b.type === 'thinking') {
      start({ type: 'thinking', thinking: '', signature: '' });
      for (const t of chunks(b.thinking, chunkChars)) delta({ type: 'thinking_delta', thinking: t });
      delta({ type: 'signature_delta', signature: b.signature });
    } else if (b.type === 'tool_use') {
      start({ ...b, input: {} });
      const json = JSON.stringify(b.input ?? {});
      for (const t of chunks(json === '{}' ? '' : json, chunkChars)) delta({ type: 'input_json_delta', partial_json: t });
    } else {
      start(b); // redacted_thinking, compaction: whole in their start
    }
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
    if (index === 0) events.push({ event: 'ping', data: { type: 'ping' } });
  });
  events.push({
    event: 'message_delta',
    data: {
      type: 'message_delta',
      delta: { stop_reason: m.stop_reason, stop_sequence: m.stop_sequence, stop_details: null },
      usage: { output_tokens: usage.output_tokens },
      ...(m.context_management !== undefined ? { context_management: m.context_management } : {}),
    },
  });
  events.push({ event: 'message_stop', data: { type: 'message_stop' } });
  return events;
}

/** How long a paced stream of this message takes (its deltas `delayMs` apart). */
export function streamDurationMs(message: Anthropic.Message, opts: FakeStreamOptions): number {
  const deltas = sseEventsFor(message, opts.chunkChars ?? 8).filter((e) => e.event === 'content_block_delta').length;
  return Math.max(0, deltas - 1) * (opts.delayMs ?? 0);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Writes a message as a 200 event stream, paced and interrupted as the step says. */
export async function writeEventStream(
  res: http.ServerResponse,
  message: Anthropic.Message,
  headers: Record<string, string>,
  opts: FakeStreamOptions,
  gates: StreamGates,
): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', ...headers });
  let deltas = 0;
  for (const e of sseEventsFor(message, opts.chunkChars ?? 8)) {
    if (res.destroyed) return; // the client went away (an aborted call, a killed worker)
    if (e.event === 'content_block_delta') {
      if (opts.errorAfterDeltas !== undefined && deltas >= opts.errorAfterDeltas) {
        const type = opts.errorType ?? 'overloaded_error';
        res.write(`event: error\ndata: ${JSON.stringify({ type: 'error', error: { type, message: type === 'overloaded_error' ? 'Overloaded' : 'Internal server error' } })}\n\n`);
        res.end();
        return;
      }
      if (opts.pauseAfterDeltas !== undefined && deltas === opts.pauseAfterDeltas) await gates.wait(opts.gate ?? 'default');
      if (deltas > 0 && opts.delayMs) await sleep(opts.delayMs);
      deltas++;
    }
    res.write(`event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`);
    if (e.event === 'content_block_delta') opts.onDeltaSent?.(deltas - 1);
  }
  res.end();
}
