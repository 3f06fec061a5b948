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

  it("fails only when both asks fail, with the first ask's failure; one success is enough", async () => {
    // The second fails first (a run with no worker refuses a second query at once, "for now"); the first
    // ask's own failure (the server's query timeout) is the one that says why.
    const fails = [later(100, new Error('first'), true), later(10, new Error('second'), true)];
    let a = 0;
    await expect(hedged(() => fails[a++]!, 50)).rejects.toThrow(/^first$/);
    const inOrder = [later(60, new Error('first'), true), later(200, new Error('second'), true)];
    let c = 0;
    await expect(hedged(() => inOrder[c++]!, 50)).rejects.toThrow(/^first$/);
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

  it('fails at a conclusive first failure (the server gave up on the query) without waiting for the second', async () => {
    const answers = [later(100, new Error('query timed out'), true), later(5_000, new Error('timed out too'), true)];
    let asked = 0;
    const started = Date.now();
    const timedOut = (err: unknown) => /timed out/.test(String(err));
    await expect(hedged(() => answers[asked++]!, 50, () => false, timedOut)).rejects.toThrow(/^query timed out$/);
    expect(asked).toBe(2);
    expect(Date.now() - started).toBeLessThan(1_000);
    // Not conclusive: the second is waited for, and may still answer.
    const mixed: Array<Promise<unknown>> = [later<unknown>(100, new Error('refused for now'), true), later<unknown>(300, 'page')];
    let b = 0;
    await expect(hedged(() => mixed[b++]!, 50, () => false, timedOut)).resolves.toBe('page');
  });

  it('cancels the other ask once it settles (a query left waiting on the server holds up the run)', async () => {
    const signals: AbortSignal[] = [];
    const answers = [later(5_000, 'stuck'), later(10, 'second')];
    await expect(hedged((cancel) => (signals.push(cancel), answers[signals.length - 1]!), 50)).resolves.toBe('second');
    expect(signals.map((s) => s.aborted)).toEqual([true, true]);
    const failed: AbortSignal[] = [];
    const fails: Array<Promise<unknown>> = [later<unknown>(100, new Error('query timed out'), true), later<unknown>(5_000, 'late')];
    await expect(hedged((cancel) => (failed.push(cancel), fails[failed.length - 1]!), 50, () => false, () => true)).rejects.toThrow('query timed out');
    expect(failed[1]!.aborted).toBe(true);
  });
});
