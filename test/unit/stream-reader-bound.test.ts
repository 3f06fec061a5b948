/**
 * A stream reader keeps a bounded number of calls' assemblies (a `fh chat` or board stream reads for
 * hours): after more ended calls than the bound it holds at most the bound plus the call in flight, and
 * the call in flight still reads right (its catch-up from message_end is only what the reader missed).
 */
import { CallAssemblies, ENDED_CALLS_KEPT } from '../../src/client/stream/assemblies';
import { readStreamKeeping } from '../../src/client/stream/reader';
import type { StreamSnapshot, StreamTransport } from '../../src/client/stream/transport';
import type { LiveStreamDetails, StreamBlock, StreamEnvelope, StreamEvent } from '../../src/wire/stream';

const BLOCK = 10;

/** One run's stream in memory: the test adds calls and closes them. */
class MemoryRun implements StreamTransport {
  events: StreamEnvelope[] = [];
  blocks: StreamBlock[] = [];
  live = new Map<string, LiveStreamDetails>();
  running = true;
  next = 0;

  /** A model call: its block, and, once ended, its message_end after the block. */
  call(callId: string, opts: { live?: StreamEvent[]; reply?: string }): StreamBlock {
    const block: StreamBlock = { callId, kind: 'model', from: this.next, to: this.next + BLOCK, closed: false };
    this.blocks.push(block);
    this.next += BLOCK;
    if (opts.live) this.live.set(callId, { fhStream: 1, callId, attempt: 1, from: block.from, events: opts.live });
    if (opts.reply !== undefined) this.end(block, opts.reply);
    return block;
  }

  end(block: StreamBlock, reply: string): void {
    block.closed = true;
    this.live.delete(block.callId);
    const event: StreamEvent = { type: 'message_end', callId: block.callId, attempt: 1, model: 'm', stopReason: 'end_turn', usage: { inputTokens: 1, outputTokens: 1 }, content: [{ type: 'text', text: reply }] };
    this.events.push({ offset: this.next++, event });
  }

  async snapshot(from: number): Promise<StreamSnapshot> {
    const page = { events: this.events.filter((e) => e.offset >= from), blocks: this.blocks.filter((b) => b.to > from).map((b) => ({ ...b })), next: this.next, oldest: 0 };
    return { runId: 'r1', running: this.running, continued: false, page, live: new Map(this.live) };
  }
  async readRun(): Promise<never> {
    throw new Error('one run only');
  }
  async previousRun(): Promise<undefined> {
    return undefined;
  }
  async waitForChange(): Promise<void> {}
}

describe('stream reader: the calls it keeps are bounded', () => {
  // The default bound, and none at all (every ended call dropped at once): the call in flight is kept either way.
  it.each([ENDED_CALLS_KEPT, 0])('bound %i: after more ended calls than the bound it keeps at most the bound plus the call in flight, which still reads right', async (bound) => {
    const run = new MemoryRun();
    const ended = ENDED_CALLS_KEPT + 20;
    for (let i = 0; i < ended; i++) run.call(`c${i}`, { reply: `reply ${i}` });
    const open = run.call('open', {
      live: [
        { type: 'attempt_started', kind: 'model' },
        { type: 'block_started', index: 0, block: { type: 'text' } },
        { type: 'text_delta', index: 0, text: 'Hel' },
      ],
    });
    const calls = new CallAssemblies(bound);
    const reader = readStreamKeeping(run, { livePollMs: 1 }, calls);
    const texts: string[] = [];
    for (;;) {
      const { value } = await reader.next();
      const e = (value as StreamEnvelope).event;
      if (e.type === 'text_delta') texts.push(`${e.callId}:${e.text}`);
      if (e.callId === 'open' && e.type === 'text_delta') break;
    }
    expect(texts.slice(0, ended)).toEqual(Array.from({ length: ended }, (_, i) => `c${i}:reply ${i}`));
    expect(calls.size).toBeLessThanOrEqual(bound + 1);
    expect(calls.has('open')).toBe(true);
    expect(calls.has('c0')).toBe(false);

    // The call ends; the reader yields only what it missed of it, from message_end.
    run.end(open, 'Hello');
    run.running = false;
    const rest: StreamEvent[] = [];
    for await (const env of { [Symbol.asyncIterator]: () => reader }) rest.push(env.event);
    expect(rest.map((e) => (e.type === 'text_delta' ? `delta:${e.text}` : e.type))).toEqual(['delta:lo', 'block_stopped', 'message_end']);
    expect(calls.size).toBeLessThanOrEqual(bound);
  });
});
