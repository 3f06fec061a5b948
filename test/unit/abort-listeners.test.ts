/**
 * Many waits on one caller's signal: one listener on the signal, no MaxListenersExceededWarning, every wait
 * ended by the abort, and nothing left on the signal once the waits are done.
 */
import { getEventListeners } from 'node:events';
import { onAbort } from '../../src/client/abort-listeners';
import { pause } from '../../src/client/wait-bounds';
import { sleep, untilAborted } from '../../src/client/stream/transport';
import { approvalRequests, type ApprovalSource } from '../../src/client/approvals';

/** The process warnings emitted while `fn` runs (and for a tick after: Node emits them on the next tick). */
async function warningsDuring(fn: () => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  const listener = (w: Error) => seen.push(`${w.name}: ${w.message}`);
  process.on('warning', listener);
  try {
    await fn();
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('warning', listener);
  }
  return seen;
}

describe('onAbort', () => {
  it('runs every registered callback once when the signal aborts, through one listener', () => {
    const abort = new AbortController();
    const ran: number[] = [];
    for (let i = 0; i < 50; i++) onAbort(abort.signal, () => ran.push(i));
    expect(getEventListeners(abort.signal, 'abort')).toHaveLength(1);
    abort.abort();
    abort.abort();
    expect(ran).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect(getEventListeners(abort.signal, 'abort')).toHaveLength(0);
  });

  it('leaves no listener once every wait has unregistered, and runs none it unregistered', () => {
    const abort = new AbortController();
    const ran: string[] = [];
    const offs = ['a', 'b', 'c'].map((k) => onAbort(abort.signal, () => ran.push(k)));
    offs[1]!();
    offs[1]!(); // twice is harmless
    offs[0]!();
    expect(getEventListeners(abort.signal, 'abort')).toHaveLength(1);
    offs[2]!();
    expect(getEventListeners(abort.signal, 'abort')).toHaveLength(0);
    // A wait registered after all had gone gets a listener again.
    onAbort(abort.signal, () => ran.push('d'));
    expect(getEventListeners(abort.signal, 'abort')).toHaveLength(1);
    abort.abort();
    expect(ran).toEqual(['d']);
  });

  it('runs nothing for a signal aborted already (as addEventListener), and one callback twice when registered twice', () => {
    const ran: string[] = [];
    onAbort(AbortSignal.abort(), () => ran.push('late'));
    const abort = new AbortController();
    const twice = () => ran.push('twice');
    onAbort(abort.signal, twice);
    onAbort(abort.signal, twice);
    abort.abort();
    expect(ran).toEqual(['twice', 'twice']);
  });

  it('a callback that throws does not keep the others from running', async () => {
    const abort = new AbortController();
    const ran: string[] = [];
    const reported = new Promise<unknown>((resolve) => {
      const original = globalThis.queueMicrotask;
      globalThis.queueMicrotask = (cb: () => void) => {
        globalThis.queueMicrotask = original;
        try {
          cb();
        } catch (err) {
          resolve(err);
        }
      };
    });
    onAbort(abort.signal, () => {
      throw new Error('boom');
    });
    onAbort(abort.signal, () => ran.push('after'));
    abort.abort();
    expect(ran).toEqual(['after']);
    expect(await reported).toEqual(new Error('boom'));
  });
});

describe('waits sharing one signal (pause, sleep, untilAborted)', () => {
  it('forty waits on one signal: no MaxListenersExceededWarning, all end at the abort, no listener left', async () => {
    const abort = new AbortController();
    const warnings = await warningsDuring(async () => {
      const never = new Promise<string>(() => undefined);
      const waits = [
        ...Array.from({ length: 15 }, () => pause(60_000, undefined, [abort.signal])),
        ...Array.from({ length: 15 }, () => sleep(60_000, abort.signal)),
        ...Array.from({ length: 10 }, () => untilAborted(never, abort.signal)),
      ];
      expect(getEventListeners(abort.signal, 'abort')).toHaveLength(1);
      const t0 = Date.now();
      abort.abort();
      await Promise.all(waits);
      expect(Date.now() - t0).toBeLessThan(1_000);
    });
    expect(warnings.filter((w) => w.startsWith('MaxListenersExceededWarning'))).toEqual([]);
    expect(getEventListeners(abort.signal, 'abort')).toHaveLength(0);
  });

  it('waits that end on their own take their listener with them', async () => {
    const abort = new AbortController();
    await Promise.all([pause(5, undefined, [abort.signal]), sleep(5, abort.signal), untilAborted(Promise.resolve('x'), abort.signal)]);
    expect(getEventListeners(abort.signal, 'abort')).toHaveLength(0);
  });
});

describe('approval iterators sharing one signal', () => {
  it("twelve sessions' approvals() under one shutdown signal: one listener on it, and every iterator ends at the abort", async () => {
    // A server follows each open session's approvals with its one shutdown signal.
    const source: ApprovalSource = {
      position: async () => 0,
      pending: async () => [],
      // Nothing to approve yet: the stream waits until the iterator's own signal aborts.
      stream: (_from, signal) => ({
        [Symbol.asyncIterator]: () => ({ next: () => new Promise((resolve) => signal.addEventListener('abort', () => resolve({ done: true, value: undefined }), { once: true })) }),
      }),
      decide: async () => undefined,
    };
    const shutdown = new AbortController();
    const warnings = await warningsDuring(async () => {
      const followed = Array.from({ length: 12 }, () => approvalRequests(source, { signal: shutdown.signal })[Symbol.asyncIterator]().next());
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(1);
      shutdown.abort();
      expect(await Promise.all(followed)).toEqual(Array.from({ length: 12 }, () => ({ done: true, value: undefined })));
    });
    expect(warnings.filter((w) => w.startsWith('MaxListenersExceededWarning'))).toEqual([]);
    expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(0);
  });
});
