/**
 * One long poll on a run's history for every process that follows it (BrokerPollShare), on a
 * redis-server of the test's own. A "process" is a BrokerPollShare of its own (its own name on the
 * lease); a poll is a function the test settles. One process polls while the others wait on the broker
 * and wake with its answer; a poller whose readers end hands the poll to another, and so does one that
 * died holding the lease, once the lease runs out; with the broker gone each process polls for itself.
 * (Sessions read through it end to end: stream-broker.test.ts.)
 */
import { loadRedis, type RedisConnection } from '../../src/activities/stream/redis-client';
import { BrokerPollShare, brokerPollKey } from '../../src/client/stream/broker-polls';
import type { PollNews } from '../../src/client/stream/transport';
import { startRedis, type TestRedis } from '../support/redis';

describe('a run’s long poll shared through the broker', () => {
  let redis: TestRedis;
  let conn: RedisConnection;
  const shares: BrokerPollShare[] = [];

  beforeAll(async () => {
    redis = await startRedis();
    conn = await loadRedis(redis.url);
  });
  afterEach(() => shares.splice(0).forEach((s) => s.close()));
  afterAll(async () => {
    await conn?.close();
    await redis?.stop();
  });

  const processes = (n: number, workflowId: string) =>
    Array.from({ length: n }, () => {
      const share = new BrokerPollShare(async () => conn, workflowId);
      shares.push(share);
      return share;
    });

  /** Resolves once `test` holds, looking every 5 ms; fails after 10 s. */
  async function until(test: () => boolean): Promise<void> {
    for (const end = Date.now() + 10_000; !test(); await new Promise((r) => setTimeout(r, 5))) {
      if (Date.now() > end) throw new Error('the poll never ran');
    }
  }

  /** A poll the test answers: how many processes ran it, and a way to answer the one pending. */
  function pollControl() {
    const c = { ran: 0, answer: (_news: PollNews | undefined) => undefined as void };
    const poll = () => {
      c.ran++;
      return new Promise<PollNews | undefined>((resolve) => (c.answer = resolve));
    };
    return { c, poll };
  }

  it('one process polls; the others wake with its answer', async () => {
    const wf = `polls-one-${Date.now()}`;
    const { c, poll } = pollControl();
    const waits = processes(4, wf).map((p) => p.wait('run', 10, poll));
    await new Promise((r) => setTimeout(r, 100));
    expect(c.ran).toBe(1);
    c.answer({ historyLength: 14, last: true });
    for (const news of await Promise.all(waits)) expect(news).toEqual({ historyLength: 14, last: true });
    expect(c.ran).toBe(1);
  });

  it('a process that knows less than the last answer takes it at once, asking nothing', async () => {
    const wf = `polls-behind-${Date.now()}`;
    const [a, b] = processes(2, wf);
    const { c, poll } = pollControl();
    const first = a!.wait('run', 10, poll);
    // Answered once its poll runs (it first takes the lease from Redis): answered earlier, the answer
    // went nowhere and the wait hung, on a busy machine.
    await until(() => c.ran === 1);
    c.answer({ historyLength: 20, last: true });
    await first;
    await new Promise((r) => setTimeout(r, 50)); // the answer reaches the broker after the poller has it
    expect(await b!.wait('run', 15, () => Promise.reject(new Error('polled')))).toEqual({ historyLength: 20, last: true });
  });

  it('when the polling process stops following, another polls from its next look at the lease', async () => {
    const wf = `polls-handover-${Date.now()}`;
    const [a, b] = processes(2, wf);
    const polled: string[] = [];
    const hang = (who: string) => () => (polled.push(who), new Promise<PollNews | undefined>(() => undefined));
    void a!.wait('run', 10, hang('a'));
    await new Promise((r) => setTimeout(r, 50));
    const bWaits = b!.wait('run', 10, async () => (polled.push('b'), { historyLength: 11, last: true }));
    await new Promise((r) => setTimeout(r, 50));
    expect(polled).toEqual(['a']);
    a!.close(); // its readers ended: the lease is given up
    expect(await bWaits).toEqual({ historyLength: 11, last: true });
    expect(polled).toEqual(['a', 'b']);
  });

  it('a process that died holding the lease is replaced once the lease runs out', async () => {
    const wf = `polls-died-${Date.now()}`;
    // Held by a process that no longer renews it (as one that died mid-poll leaves it).
    await conn.sendCommand(['SET', `${brokerPollKey(wf, 'run')}:polling`, 'gone', 'PX', '1500']);
    const [b] = processes(1, wf);
    const started = Date.now();
    const news = await b!.wait('run', 10, async () => ({ historyLength: 12, last: false }));
    expect(news).toEqual({ historyLength: 12, last: false });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
  });

  it('with the broker unreachable each process polls for itself', async () => {
    const down = new BrokerPollShare(() => Promise.reject(new Error('connection refused')), `polls-down-${Date.now()}`);
    shares.push(down);
    const { c, poll } = pollControl();
    const waiting = down.wait('run', 3, poll);
    await new Promise((r) => setTimeout(r, 20));
    c.answer({ historyLength: 4, last: true });
    expect(await waiting).toEqual({ historyLength: 4, last: true });
    expect(c.ran).toBe(1);
  });
});
