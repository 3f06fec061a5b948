/**
 * Following a call costs a reader work in proportion to the call's deltas, not to their square: a
 * reader wakes once per delta and the call's live details hold the whole attempt so far, so it must
 * build only the events it has not assembled or yielded. (It built them all at every wake: with 500
 * readers in one process that was half the process's CPU, and the deltas reached them late.)
 */
import { CallAssemblies } from '../../src/client/stream/assemblies';
import { readStreamKeeping } from '../../src/client/stream/reader';
import type { StreamSnapshot, StreamTransport } from '../../src/client/stream/transport';
import type { LiveStreamDetails, StreamBlock, StreamEnvelope, StreamEvent } from '../../src/wire/stream';

const DELTAS = 400;

/** One run with one model call whose live details grow by one delta at each wake of the reader. */
class GrowingCall implements StreamTransport {
  readonly block: StreamBlock = { callId: 'c1', kind: 'model', from: 0, to: 10_000, closed: false };
  private readonly live: StreamEvent[] = [
    { type: 'attempt_started', kind: 'model' },
    { type: 'block_started', index: 0, block: { type: 'text' } },
  ];
  /** How many times the reader read one of the details' events. */
  reads = 0;
  private readonly counted = new Proxy(this.live, {
    get: (target, prop, receiver) => {
      if (typeof prop === 'string' && /^\d+$/.test(prop)) this.reads++;
      return Reflect.get(target, prop, receiver);
    },
  });
  private ended = false;

  async snapshot(): Promise<StreamSnapshot> {
    const details: LiveStreamDetails = { fhStream: 1, callId: 'c1', attempt: 1, from: 0, events: this.counted };
    const events: StreamEnvelope[] = [];
    if (this.ended) {
      const end: StreamEvent = { type: 'message_end', callId: 'c1', attempt: 1, model: 'm', stopReason: 'end_turn', usage: { inputTokens: 1, outputTokens: 1 }, content: [{ type: 'text', text: this.text() }] };
      events.push({ offset: this.block.to, event: end });
    }
    const page = { events, blocks: [{ ...this.block, closed: this.ended }], next: this.ended ? this.block.to + 1 : this.block.to, oldest: 0 };
    return { runId: 'r1', running: !this.ended, continued: false, page, live: this.ended ? new Map() : new Map([['c1', details]]) };
  }

  async waitForLive(): Promise<void> {
    const deltas = this.live.length - 2;
    if (deltas < DELTAS) this.live.push({ type: 'text_delta', index: 0, text: `d${deltas} ` });
    else this.ended = true;
  }

  text(): string {
    return Array.from({ length: DELTAS }, (_, i) => `d${i} `).join('');
  }

  async readRun(): Promise<never> {
    throw new Error('one run only');
  }
  async previousRun(): Promise<undefined> {
    return undefined;
  }
  async waitForChange(): Promise<void> {}
}

async function follow(run: GrowingCall, from = 0): Promise<string[]> {
  const texts: string[] = [];
  for await (const env of readStreamKeeping(run, { from, livePollMs: 1 }, new CallAssemblies())) {
    if (env.event.type === 'text_delta') texts.push(env.event.text);
    if (env.event.type === 'message_end') break;
  }
  return texts;
}

describe('stream reader: following a call is linear in its deltas', () => {
  it('reads each live event about once while the call streams, and yields every delta once, in order', async () => {
    const run = new GrowingCall();
    const texts = await follow(run);
    expect(texts.join('')).toBe(run.text());
    expect(texts).toHaveLength(DELTAS);
    // Building every event at every wake read them DELTAS^2 / 2 times (80,000 here).
    expect(run.reads).toBeLessThanOrEqual(2 * (DELTAS + 2));
  });

  it('a reader that joins inside the call yields from its offset on and still ends with the whole reply assembled', async () => {
    const run = new GrowingCall();
    for (let i = 0; i < 100; i++) await run.waitForLive();
    const texts = await follow(run, 52); // offsets 0-1 start the attempt: this is the 51st delta on
    expect(texts[0]).toBe('d50 ');
    expect(texts.join('')).toBe(run.text().slice(run.text().indexOf('d50 ')));
    expect(run.reads).toBeLessThanOrEqual(2 * (DELTAS + 2));
  });
});
