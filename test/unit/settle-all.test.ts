/** settleAll answers what Promise.allSettled answers, with fewer promises. */
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
  it.each(cases)('%s: the same results as Promise.allSettled', async (_, items) => {
    expect(await settleAll(items())).toEqual(await Promise.allSettled(items()));
  });

  it('makes one promise for a single pending call, where Promise.allSettled makes more', async () => {
    const count = async (settle: (ps: Promise<number>[]) => Promise<unknown>): Promise<number> => {
      const p = Promise.resolve(1);
      let made = 0;
      const stop = promiseHooks.onInit(() => made++);
      const done = settle([p]);
      stop();
      await done;
      return made;
    };
    expect(await count(settleAll)).toBe(1);
    expect(await count((ps) => Promise.allSettled(ps))).toBeGreaterThan(1);
  });
});
