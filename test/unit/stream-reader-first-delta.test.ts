/**
 * A reader looks for a model call's first live events every FIRST_DELTA_POLL_MS (the reply's first
 * delta is what a user waits for), and every livePollMs once the call has published some, or while a
 * tool runs. Counted on a transport in memory under jest's clock.
 */
import { FIRST_DELTA_POLL_MS, readStream } from '../../src/client/stream/reader';
import type { StreamSnapshot, StreamTransport } from '../../src/client/stream/transport';
import type { LiveStreamDetails, StreamBlock } from '../../src/wire/stream';

class OneOpenCall implements StreamTransport {
  live = new Map<string, LiveStreamDetails>();
  snapshots = 0;
  constructor(readonly block: StreamBlock) {}

  async snapshot(): Promise<StreamSnapshot> {
    this.snapshots++;
    const page = { events: [], blocks: [{ ...this.block }], next: this.block.to, oldest: 0 };
    return { runId: 'r1', running: true, continued: false, page, live: new Map(this.live) };
  }
  async readRun(): Promise<never> {
    throw new Error('one run only');
  }
  async previousRun(): Promise<undefined> {
    return undefined;
  }
  async waitForChange(): Promise<void> {}
}

describe("stream reader: a model call's first delta", () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  async function pollsIn(transport: OneOpenCall, ms: number): Promise<number> {
    const before = transport.snapshots;
    await jest.advanceTimersByTimeAsync(ms);
    return transport.snapshots - before;
  }

  it(`polls every ${FIRST_DELTA_POLL_MS} ms until the call published something, then every livePollMs`, async () => {
    const run = new OneOpenCall({ callId: 'm0', kind: 'model', from: 0, to: 10, closed: false });
    const abort = new AbortController();
    const reader = readStream(run, { signal: abort.signal, livePollMs: 100 });
    const seen: string[] = [];
    const reading = (async () => {
      for await (const env of { [Symbol.asyncIterator]: () => reader }) seen.push(env.event.type);
    })();
    await jest.advanceTimersByTimeAsync(0);
    expect(await pollsIn(run, 200)).toBe(200 / FIRST_DELTA_POLL_MS);
    run.live.set('m0', { fhStream: 1, callId: 'm0', attempt: 1, from: 0, events: [{ type: 'attempt_started', kind: 'model' }, { type: 'text_delta', index: 0, text: 'Hi' }] });
    await jest.advanceTimersByTimeAsync(FIRST_DELTA_POLL_MS);
    expect(seen).toEqual(['attempt_started', 'text_delta']);
    expect(await pollsIn(run, 500)).toBe(5);
    abort.abort();
    await jest.advanceTimersByTimeAsync(100);
    await reading;
  });

  it('a tool call that published nothing is polled every livePollMs', async () => {
    const run = new OneOpenCall({ callId: 't0', kind: 'tool', from: 0, to: 10, closed: false });
    const abort = new AbortController();
    const reader = readStream(run, { signal: abort.signal, livePollMs: 100 });
    const reading = (async () => {
      for await (const env of { [Symbol.asyncIterator]: () => reader }) void env;
    })();
    await jest.advanceTimersByTimeAsync(0);
    expect(await pollsIn(run, 500)).toBe(5);
    abort.abort();
    await jest.advanceTimersByTimeAsync(100);
    await reading;
  });
});
