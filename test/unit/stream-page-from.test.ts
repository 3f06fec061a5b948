/**
 * pageFrom: a reader polling for live deltas reuses the last stream query's answer while the run's
 * history did not grow. It must answer exactly what the workflow's own read would for the same state,
 * or nothing; compared here with StreamLog.read over random logs (calls opened and closed, durable
 * events between them, pages long enough to stop before the end).
 */
import { StreamLog } from '../../src/workflows/stream/log';
import { pageFrom, STREAM_PAGE_LIMIT, type StreamPage } from '../../src/wire/stream';
import { seededRandom } from '../support/seeded-random';


/** The answer as a client gets it (the query's result goes through JSON). */
const asQueried = (page: StreamPage): StreamPage => JSON.parse(JSON.stringify(page)) as StreamPage;

function randomLog(rand: () => number, steps: number): { log: StreamLog; offsets: number[] } {
  const log = new StreamLog(Math.floor(rand() * 10));
  const open: string[] = [];
  const offsets: number[] = [];
  for (let i = 0; i < steps; i++) {
    const r = rand();
    if (r < 0.15) {
      const slot = log.open(rand() < 0.5 ? 'model' : 'tool');
      if (slot) {
        open.push(slot.callId);
        offsets.push(slot.from, slot.from + 1, slot.to - 1, slot.to);
      }
    } else if (r < 0.25 && open.length) {
      log.close(open.splice(Math.floor(rand() * open.length), 1)[0]!);
    } else {
      offsets.push(log.publish({ type: 'title', title: `t${i}` }));
    }
  }
  offsets.push(0, log.next, log.next + 1);
  return { log, offsets };
}

describe('pageFrom', () => {
  it("answers what the workflow's read answers, or nothing", () => {
    const rand = seededRandom(20261129);
    let answered = 0;
    let declined = 0;
    for (let round = 0; round < 40; round++) {
      const { log, offsets } = randomLog(rand, round % 20 === 0 ? STREAM_PAGE_LIMIT * 1.5 : 5 + Math.floor(rand() * 60));
      // Every pair on a small log; a sample of offsets on a long one (pairs grow with the square).
      const all = [...new Set(offsets)].sort((a, b) => a - b);
      const sorted = all.length > 40 ? all.filter((_, i) => i % Math.ceil(all.length / 40) === 0 || i >= all.length - 6) : all;
      for (const readFrom of sorted) {
        const page = asQueried(log.read(readFrom));
        for (const from of sorted) {
          const derived = pageFrom(page, readFrom, from);
          if (derived === undefined) {
            if (from >= readFrom) declined++;
            continue;
          }
          answered++;
          const read = asQueried(log.read(from));
          // Compared as JSON first (fast); toEqual only to show where a pair differs.
          if (JSON.stringify(derived) !== JSON.stringify(read)) expect({ readFrom, from, page: derived }).toEqual({ readFrom, from, page: read });
        }
      }
    }
    // Both outcomes occur, and reuse is the common one when reading on (a test that never derives a page proves nothing).
    expect(answered).toBeGreaterThan(declined);
    expect(declined).toBeGreaterThan(0);
  });

  it('declines a page that may have stopped before the end, an earlier offset, and an older page whose events all lie before from', () => {
    const log = new StreamLog(0);
    for (let i = 0; i < STREAM_PAGE_LIMIT + 5; i++) log.publish({ type: 'title', title: String(i) });
    expect(log.read(0).toEnd).toBeUndefined();
    expect(pageFrom(log.read(0), 0, 10)).toBeUndefined();
    const small = new StreamLog(0);
    small.publish({ type: 'title', title: 'a' });
    const slot = small.open('model')!;
    expect(pageFrom(small.read(0), 0, 0)).toEqual(small.read(0));
    expect(pageFrom(small.read(1), 1, 0)).toBeUndefined();
    // A page not cut at its limit holds the call's block opened after its last event: a reader learns of
    // the call from it (the watchers bench: one query fewer before a turn's first delta).
    expect(small.read(0).blocks.map((b) => b.callId)).toEqual([slot.callId]);
    expect(pageFrom(small.read(0), 0, slot.from)).toEqual(small.read(slot.from));
    expect(pageFrom(small.read(slot.from), slot.from, slot.from + 7)).toEqual(small.read(slot.from + 7));
    // An older worker's page (no toEnd) ended at its last event: nothing past it is derived from it.
    const { toEnd: _, ...older } = small.read(0);
    expect(pageFrom({ ...older, blocks: [] }, 0, slot.from)).toBeUndefined();
  });

  it('cuts a page at a smaller limit asked for, and then leaves the blocks after its last event to the next page', () => {
    const log = new StreamLog(0);
    log.publish({ type: 'title', title: 'a' });
    log.publish({ type: 'title', title: 'b' });
    log.open('model');
    expect(log.read(0, 1)).toMatchObject({ events: [{ offset: 0 }], blocks: [] });
    expect(log.read(0, 1).toEnd).toBeUndefined();
    expect(log.read(0, 2).toEnd).toBeUndefined();
    expect(log.read(0, 3).blocks).toHaveLength(1);
    expect(log.read(0, 3).toEnd).toBe(true);
  });
});
