/**
 * Pendings (src/core/pending.ts) answer what the promise chains they replace answer, and make fewer
 * promises: a call mapped through several layers and awaited once makes one.
 */
import { promiseHooks } from 'node:v8';
import { failedPending, fulfilled, pendingOf, rejected, settleAll, started, thenSettle, toPromise, type Pending, type Settled } from '../../src/core/pending';

const cases: Array<[string, () => Array<unknown>]> = [
  ['nothing', () => []],
  ['one value', () => [1]],
  ['one fulfilled promise', () => [Promise.resolve('a')]],
  ['one rejected promise', () => [Promise.reject(new Error('no'))]],
  ['one pending', () => [thenSettle(Promise.resolve(2), (v) => v * 3)]],
  ['a mix, in order', () => [new Promise((r) => setTimeout(() => r('late'), 5)), 'value', Promise.reject(new Error('x')), Promise.resolve(3), failedPending(new Error('p'))]],
];

/** How the conversation waits: one await of the call's own promise, then its settle. */
async function waitOnce<T>(p: Pending<T>): Promise<T> {
  let outcome: Settled;
  try {
    outcome = fulfilled(await p.promise);
  } catch (err) {
    outcome = rejected(err);
  }
  return p.settle(outcome);
}

describe('pending calls', () => {
  const same = <T>(settled: T): T => settled;
  it.each(cases)('settleAll of %s: the same results as Promise.allSettled', async (_, items) => {
    const expected = await Promise.allSettled(items().map((i) => (typeof i === 'object' && i !== null && 'settle' in i ? toPromise(i as Pending<unknown>) : i)));
    expect(await toPromise(settleAll(items(), same))).toEqual(expected);
  });

  it('thenSettle maps as then does: failed sees what the call settles to, not what ok throws', async () => {
    expect(await toPromise(thenSettle(Promise.resolve(2), (v) => v * 10))).toBe(20);
    expect(await toPromise(thenSettle(Promise.reject(new Error('no')), (v) => String(v), (e) => `caught ${(e as Error).message}`))).toBe('caught no');
    const failed = jest.fn(() => 'wrong');
    await expect(toPromise(thenSettle(Promise.resolve(1), () => { throw new Error('mapped'); }, failed))).rejects.toThrow('mapped');
    expect(failed).not.toHaveBeenCalled();
    // A layer that settles to a promise (a second call on a rare path): the next layer maps its value.
    expect(await toPromise(thenSettle(thenSettle(Promise.resolve(1), (v) => Promise.resolve(v + 1)), (v) => v * 10))).toBe(20);
    await expect(toPromise(thenSettle(Promise.reject(new Error('no')), (v) => v))).rejects.toThrow('no');
  });

  it('started turns a throw into a failure, as an async function does', async () => {
    const p = started<number>(() => {
      throw new Error('at once');
    });
    await expect(waitOnce(p)).rejects.toThrow('at once');
    expect(await waitOnce(started(() => Promise.resolve(5)))).toBe(5);
  });

  it('toPromise of a plain promise is that promise', () => {
    const p = Promise.resolve(1);
    expect(toPromise(pendingOf(p))).toBe(p);
  });

  it('a call mapped through three layers and awaited once makes one promise; chained thens make four', async () => {
    const count = async (wait: (call: Promise<number>) => Promise<unknown>): Promise<number> => {
      const call = Promise.resolve(1);
      let made = 0;
      const stop = promiseHooks.onInit(() => made++);
      const done = wait(call);
      stop();
      await done;
      return made;
    };
    const layers = (call: Promise<number>) => waitOnce(thenSettle(thenSettle(thenSettle(call, (v) => v + 1), (v) => v * 2), (v) => String(v)));
    const chained = async (call: Promise<number>) => await call.then((v) => v + 1).then((v) => v * 2).then((v) => String(v));
    // Each counts the async function's own promise, then its awaits and thens.
    expect(await count(layers)).toBe(1 + 1);
    expect(await count(chained)).toBe(1 + 3 + 1);
  });
});
