/**
 * Pages shared between processes through the broker (BrokerPageShare), against an in-memory stand-in
 * for Redis's GET / SET NX PX / DEL: the first process to need a history length's page asks, the others
 * take its answer; a page that does not hold a process's offset, a broker that fails, and a query that
 * fails each leave every process able to read. (The real Redis path: stream-broker.test.ts.)
 */
import { BrokerPageShare } from '../../src/client/stream/broker-pages';
import type { RedisConnection } from '../../src/activities/stream/redis-client';
import type { StreamPage } from '../../src/wire/stream';

class MemoryRedis implements RedisConnection {
  readonly values = new Map<string, string>();
  down = false;
  async sendCommand(args: string[]): Promise<unknown> {
    if (this.down) throw new Error('connection refused');
    const [cmd, key, value, ...opts] = args;
    if (cmd === 'GET') return this.values.get(key!) ?? null;
    if (cmd === 'MGET') return args.slice(1).map((k) => this.values.get(k) ?? null);
    if (cmd === 'DEL') return this.values.delete(key!) ? 1 : 0;
    if (cmd === 'SET') {
      if (opts.includes('NX') && this.values.has(key!)) return null;
      this.values.set(key!, value!);
      return 'OK';
    }
    throw new Error(`unexpected ${cmd}`);
  }
  async duplicate(): Promise<RedisConnection> {
    return this;
  }
  async close(): Promise<void> {}
}

const page = (from: number): StreamPage => ({ events: [{ offset: from, event: { type: 'title', title: 't' } }], blocks: [], next: from + 1, oldest: 0, toEnd: true });

describe('stream pages shared through the broker', () => {
  it('the first process to need a page asks; the others, waiting on it, take its answer', async () => {
    const redis = new MemoryRedis();
    let release!: () => void;
    const answered = new Promise<void>((r) => (release = r));
    const asked: number[] = [];
    const processes = [0, 1, 2, 3].map(() => new BrokerPageShare(async () => redis, 'wf'));
    const reads = processes.map((p, i) =>
      p.read('run', 12, 5, async () => {
        asked.push(i);
        await answered; // a query that takes a moment
        return page(5);
      }),
    );
    await new Promise((r) => setTimeout(r, 20));
    release();
    const pages = await Promise.all(reads);
    expect(asked).toEqual([0]);
    for (const p of pages) expect(p).toEqual(page(5));
  });

  it('a page answered for an earlier offset serves a later one; one answered for a later offset does not serve an earlier one', async () => {
    const redis = new MemoryRedis();
    const a = new BrokerPageShare(async () => redis, 'wf');
    const b = new BrokerPageShare(async () => redis, 'wf');
    await a.read('run', 3, 5, async () => page(5));
    const later = jest.fn(async () => page(6));
    expect(await b.read('run', 3, 6, later)).toEqual({ ...page(5), events: [] });
    expect(later).not.toHaveBeenCalled();
    const earlier = jest.fn(async () => page(4));
    expect(await b.read('run', 3, 4, earlier)).toEqual(page(4));
    expect(earlier).toHaveBeenCalledTimes(1);
    // Another history length is another page.
    const grown = jest.fn(async () => page(5));
    await b.read('run', 4, 5, grown);
    expect(grown).toHaveBeenCalledTimes(1);
  });

  it('a broker that fails sends the process back to asking, and keeps it there for a while', async () => {
    const redis = new MemoryRedis();
    redis.down = true;
    const share = new BrokerPageShare(async () => redis, 'wf');
    const ask = jest.fn(async () => page(1));
    expect(await share.read('run', 2, 1, ask)).toEqual(page(1));
    redis.down = false;
    const connect = jest.fn(async () => redis);
    const again = new BrokerPageShare(connect, 'wf');
    redis.down = true;
    await again.read('run', 2, 1, ask);
    await again.read('run', 3, 1, ask);
    expect(connect).toHaveBeenCalledTimes(1); // off after the first failure: not connected again
    expect(ask).toHaveBeenCalledTimes(3);
  });

  it("the asking process's query failure is its own: thrown to it, asked once, and the others ask for themselves", async () => {
    const redis = new MemoryRedis();
    const failing = new BrokerPageShare(async () => redis, 'wf');
    const other = new BrokerPageShare(async () => redis, 'wf');
    const bad = jest.fn(async () => {
      throw new Error('query failed');
    });
    await expect(failing.read('run', 7, 0, bad)).rejects.toThrow('query failed');
    expect(bad).toHaveBeenCalledTimes(1);
    const started = Date.now();
    expect(await other.read('run', 7, 0, async () => page(0))).toEqual(page(0));
    expect(Date.now() - started).toBeLessThan(200); // not left waiting for an answer that will not come
  });
});
