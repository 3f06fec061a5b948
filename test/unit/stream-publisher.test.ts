import { CallAssembly } from '../../src/client/stream/assembler';
import { LivePublisher, ToolOutputLines } from '../../src/activities/stream/stream-publisher';
import { DEFAULT_OFFLOAD_THRESHOLD_BYTES } from '../../src/activities/stores/external-storage';
import type { LiveStreamDetails, StreamEvent } from '../../src/wire/stream';

/** A publisher whose heartbeats are recorded, with the flush timer under jest's clock. */
function publisher(prior?: unknown, attempt = 2) {
  const beats: LiveStreamDetails[] = [];
  // Copies: the publisher hands over its live array, as Temporal serialises it at once.
  const p = new LivePublisher({ slot: { callId: 'c1', from: 10, to: 1_000_000 }, attempt, prior, heartbeat: (d) => beats.push({ ...d, events: [...d.events] }), kind: 'model', model: 'm' });
  return { p, beats };
}

describe('LivePublisher: live events in heartbeat details', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('a call that ends before the first flush is due sends no heartbeat (its reader catches up from message_end)', () => {
    const { p, beats } = publisher();
    p.push({ type: 'text_delta', index: 0, text: 'hi' });
    jest.advanceTimersByTime(19);
    p.close();
    jest.advanceTimersByTime(1000);
    expect(beats).toEqual([]);
  });

  it('the first delta goes out 20 ms after it came, not on the attempt timer (100 ms after the start)', () => {
    const { p, beats } = publisher();
    jest.advanceTimersByTime(50); // the model has not answered yet: nothing sent
    expect(beats).toEqual([]);
    p.push({ type: 'text_delta', index: 0, text: 'a' });
    jest.advanceTimersByTime(19);
    expect(beats).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(beats.map((b) => b.events.length)).toEqual([2]);
    // Later deltas go on the 100 ms timer.
    p.push({ type: 'text_delta', index: 0, text: 'b' });
    jest.advanceTimersByTime(99);
    expect(beats).toHaveLength(1);
    jest.advanceTimersByTime(1);
    expect(beats.map((b) => b.events.length)).toEqual([2, 3]);
  });

  it("a retry's first delta just before its start's timer is due is not held back by it; a retry's slow start goes out alone", () => {
    const late = publisher();
    jest.advanceTimersByTime(90);
    late.p.push({ type: 'text_delta', index: 0, text: 'a' });
    jest.advanceTimersByTime(10);
    expect(late.beats.map((b) => b.events.length)).toEqual([2]);
    const slow = publisher();
    jest.advanceTimersByTime(100);
    expect(slow.beats.map((b) => b.events.map((e) => e.type))).toEqual([['attempt_started']]);
  });

  it("a first attempt's start waits for its first delta, however slow the model, which then goes out 20 ms after it", () => {
    const { p, beats } = publisher(undefined, 1);
    jest.advanceTimersByTime(5_000);
    expect(beats).toEqual([]);
    p.push({ type: 'text_delta', index: 0, text: 'a' });
    jest.advanceTimersByTime(20);
    expect(beats.map((b) => b.events.map((e) => e.type))).toEqual([['attempt_started', 'text_delta']]);
  });

  it('a longer call sends attempt_started with its first deltas on the timer, and the rest when it closes', () => {
    const { p, beats } = publisher();
    p.push({ type: 'text_delta', index: 0, text: 'a' });
    jest.advanceTimersByTime(100);
    expect(beats).toEqual([
      { fhStream: 1, callId: 'c1', attempt: 2, from: 10, events: [{ type: 'attempt_started', kind: 'model', model: 'm' }, { type: 'text_delta', index: 0, text: 'a' }] },
    ]);
    p.push({ type: 'text_delta', index: 0, text: 'b' });
    p.close();
    expect(beats).toHaveLength(2);
    expect(beats[1]!.events.map((e) => e.type)).toEqual(['attempt_started', 'text_delta', 'text_delta']);
    p.close(); // nothing new: no heartbeat
    expect(beats).toHaveLength(2);
  });

  it('a periodic heartbeat (flush) publishes what there is, and the close then follows it', () => {
    const { p, beats } = publisher();
    p.flush();
    expect(beats[0]!.events).toEqual([{ type: 'attempt_started', kind: 'model', model: 'm' }]);
    p.push({ type: 'block_stopped', index: 0 });
    p.close();
    expect(beats).toHaveLength(2);
  });

  it('a retried attempt starts after what the previous attempt published', () => {
    const { p } = publisher({ fhStream: 1, callId: 'c1', attempt: 1, from: 10, events: [{ type: 'attempt_started', kind: 'model' }, { type: 'text_delta', index: 0, text: 'x' }] });
    expect(p.from).toBe(12);
    expect(publisher({ fhStream: 1, callId: 'other', attempt: 1, from: 10, events: [] }).p.from).toBe(10);
  });

  it("a quick tool's output lines send nothing; a slow tool's go out on the timer", () => {
    const quick = publisher();
    const lines = new ToolOutputLines(quick.p);
    lines.add('stdout', 'one\ntwo');
    lines.close();
    expect(quick.beats).toEqual([]);
    const slow = publisher();
    const slowLines = new ToolOutputLines(slow.p);
    slowLines.add('stdout', 'one\n');
    jest.advanceTimersByTime(100);
    slowLines.add('stderr', 'last');
    slowLines.close();
    expect(slow.beats[1]!.events.slice(1)).toEqual([
      { type: 'tool_output', stream: 'stdout', line: 'one' },
      { type: 'tool_output', stream: 'stderr', line: 'last' },
    ]);
  });

  it('CJK and emoji text: the details stay under the offload threshold in bytes, whole characters, and the reply is whole', () => {
    const { p, beats } = publisher();
    // 3 bytes a CJK character, 4 an emoji (2 UTF-16 units): 96,000 characters of this were ~290 KB.
    const chunk = '漢字のテキスト、絵文字😀🎉も混ぜる。';
    p.push({ type: 'block_started', index: 0, block: { type: 'text' } });
    jest.advanceTimersByTime(100);
    let reply = '';
    for (let i = 0; i < 12_000; i++) {
      p.push({ type: 'text_delta', index: 0, text: chunk });
      reply += chunk;
    }
    p.push({ type: 'block_stopped', index: 0 });
    p.close();
    const last = beats.at(-1)!;
    expect(Buffer.byteLength(JSON.stringify(last), 'utf8')).toBeLessThan(DEFAULT_OFFLOAD_THRESHOLD_BYTES);
    const published = last.events.flatMap((e) => (e.type === 'text_delta' ? [e.text] : []));
    expect(published.length).toBeGreaterThan(500); // it did publish, up to the cap
    const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
    for (const text of published) expect(text).not.toMatch(loneSurrogate);
    expect(reply.startsWith(published.join(''))).toBe(true);
    // A reader of these details, then message_end (the reply as history holds it), has the whole reply.
    const a = new CallAssembly();
    for (const e of last.events) a.apply({ ...e, callId: 'c1', attempt: 2 } as StreamEvent);
    a.catchUp({ type: 'message_end', callId: 'c1', attempt: 2, model: 'm', stopReason: 'end_turn', usage: { inputTokens: 1, outputTokens: 1 }, content: [{ type: 'text', text: reply }] });
    expect(a.text()).toBe(reply);
  });
});
