/** settleAll(items, then) answers what Promise.allSettled(items).then(then) answers, with fewer promises. */
import { promiseHooks } from 'node:v8';
import { settleAll } from '../../src/core/settle-all';

const cases: Array<[string, () => Array<unknown>]> = [
  ['nothing', () => []],
  ['one value', () => [1]],
  ['one fulfilled promise', () => [Promise.resolve('a')]],
  ['one rejected promise', () => [Promise.reject(new Error('no'))]],
  ['one thenable', () => [{ then: (ok: (v: string) => void) => ok('t') }]],
  ['a mix, in order', () => [new Promise((r) => setTimeout(() => r('late'), 5)), 'value', Promise.reject(new Error('x')), Promise.resolve(3)]],
];

describe('settleAll', () => {
  const same = <T>(settled: T): T => settled;
  it.each(cases)('%s: the same results as Promise.allSettled', async (_, items) => {
    expect(await settleAll(items(), same)).toEqual(await Promise.allSettled(items()));
  });

  it('passes on what its then returns or throws', async () => {
    expect(await settleAll([Promise.resolve(2)], ([r]) => (r!.status === 'fulfilled' ? r!.value * 10 : 0))).toBe(20);
    await expect(settleAll([Promise.reject(new Error('no'))], () => { throw new Error('mapped'); })).rejects.toThrow('mapped');
    expect(await settleAll([1, Promise.resolve(2)], (all) => Promise.resolve(all.length))).toBe(2);
  });

  it('makes one promise for a single pending call and its then, where Promise.allSettled and a then make more', async () => {
    const count = async (settle: (ps: Promise<number>[]) => Promise<unknown>): Promise<number> => {
      const p = Promise.resolve(1);
      let made = 0;
      const stop = promiseHooks.onInit(() => made++);
      const done = settle([p]);
      stop();
      await done;
      return made;
    };
    expect(await count((ps) => settleAll(ps, same))).toBe(1);
    expect(await count((ps) => Promise.allSettled(ps).then(same))).toBeGreaterThan(1);
  });
});
