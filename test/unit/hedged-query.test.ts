/**
 * The stream query asked again when it goes unanswered (client/stream/transport.ts `hedged`): a query
 * that reaches a workflow while another is answered can wait for the workflow's next task (1.4 s with two
 * readers at a turn's start); asked again, it answers at once. The first answer wins; it fails only when
 * every ask failed.
 */
import { hedged } from '../../src/client/stream/transport';

const later = <T>(ms: number, v: T, fail = false) => new Promise<T>((resolve, reject) => setTimeout(() => (fail ? reject(v) : resolve(v)), ms));

describe('hedged', () => {
  it('asks once when the answer comes in time', async () => {
    let asked = 0;
    await expect(hedged(() => (asked++, later(10, 'page')), 50)).resolves.toBe('page');
    expect(asked).toBe(1);
  });

  it('asks again when the first goes unanswered, and the second answer wins', async () => {
    const answers = [later(5_000, 'stuck'), later(10, 'second')];
    let asked = 0;
    const started = Date.now();
    await expect(hedged(() => answers[asked++]!, 50)).resolves.toBe('second');
    expect(asked).toBe(2);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('the first answer wins even after the second was asked', async () => {
    const answers = [later(80, 'first'), later(5_000, 'second')];
    let asked = 0;
    await expect(hedged(() => answers[asked++]!, 50)).resolves.toBe('first');
    expect(asked).toBe(2);
  });

  it('fails at once when the only ask fails before the hedge', async () => {
    let asked = 0;
    await expect(hedged(() => (asked++, later(5, new Error('workflow gone'), true)), 50)).rejects.toThrow('workflow gone');
    await later(80, undefined);
    expect(asked).toBe(1);
  });

  it('fails only when both asks fail (with the first failure seen); one success is enough', async () => {
    const fails = [later(100, new Error('first'), true), later(10, new Error('second'), true)];
    let a = 0;
    await expect(hedged(() => fails[a++]!, 50)).rejects.toThrow('second'); // the first failure seen
    const mixed: Array<Promise<unknown>> = [later<unknown>(100, new Error('first'), true), later<unknown>(10, 'page')];
    let b = 0;
    await expect(hedged(() => mixed[b++]!, 50)).resolves.toBe('page');
  });

  it("fails at the first failure once the caller's bound has passed: the other ask cannot answer in time", async () => {
    const answers = [later(100, new Error('deadline'), true), later(5_000, new Error('deadline, late'), true)];
    let asked = 0;
    const started = Date.now();
    await expect(hedged(() => answers[asked++]!, 50, () => true)).rejects.toThrow(/^deadline$/);
    expect(asked).toBe(2);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
