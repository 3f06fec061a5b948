/**
 * A process's blocking reads of the broker on one connection (BlockingReads), on a redis-server of the
 * test's own. Readers of many sessions in one process (their live events, their history's news) wait on
 * one `XREAD BLOCK`, so the process holds two connections however many sessions it follows (it held two
 * per session); a wait the read in flight does not cover interrupts it and is answered at once; a
 * quiet stream still answers "nothing" after its second; aborting or failing a wait leaves the rest.
 */
import { loadRedis, type RedisConnection } from '../../src/activities/stream/redis-client';
import { encodeLiveEntry, liveBrokerKey } from '../../src/wire/live-broker';
import { BrokerPollShare, brokerPollKey } from '../../src/client/stream/broker-polls';
import { ABORTED, BlockingReads, type BrokerRecord } from '../../src/client/stream/broker-reads';
import { BrokerStreamTransport, LiveBrokerClient, brokerReads } from '../../src/client/stream/broker-transport';
import { openCallUpstream } from '../support/open-call-upstream';
import { startRedis, type TestRedis } from '../support/redis';

/** Long enough that a wait answered before it ends was answered by an interrupt, not by the block running out. */
const LONG_BLOCK_MS = 20_000;

describe('a process’s blocking reads of the broker, on one connection', () => {
  let redis: TestRedis;
  let admin: RedisConnection;
  let shared: RedisConnection;

  beforeAll(async () => {
    redis = await startRedis();
    admin = await loadRedis(redis.url);
    shared = await loadRedis(redis.url);
  });
  afterAll(async () => {
    await shared?.close();
    await admin?.close();
    await redis?.stop();
  });

  /** Connections the server has, the test's own two (admin, shared) not counted. */
  const connections = async () => String(await admin.sendCommand(['CLIENT', 'LIST'])).trim().split('\n').length - 2;
  const add = async (key: string, text: string) => String(await admin.sendCommand(['XADD', key, '*', 'text', text]));
  const texts = (got: BrokerRecord[] | typeof ABORTED) => (got === ABORTED ? 'aborted' : got.map((r) => r.fields.text));
  const until = async (check: () => Promise<boolean>) => {
    for (let i = 0; i < 200 && !(await check()); i++) await new Promise((r) => setTimeout(r, 10));
  };
  /** Until one client is blocked on the broker: the process's one read is in flight. */
  const oneBlocked = () => until(async () => /blocked_clients:1\r?\n/.test(String(await admin.sendCommand(['INFO', 'clients']))));
  /**
   * `b` waits on a stream of its own while `first` (a's wait on `${tag}:a`) is out: b's record comes at
   * once, not when the read's long block ends; then a's. `inFlightFirst`: a's read is blocked before b
   * waits (else b waits while a's read is still being set up, and the read in flight holds both).
   */
  async function otherStreamAnsweredAtOnce(first: Promise<BrokerRecord[] | typeof ABORTED>, b: ReturnType<BlockingReads['open']>, tag: string, inFlightFirst: boolean) {
    if (inFlightFirst) await oneBlocked();
    const started = Date.now();
    const second = b.read(`${tag}:b`, '0');
    if (!inFlightFirst) await oneBlocked();
    await add(`${tag}:b`, 'for b');
    expect(texts(await second)).toEqual(['for b']);
    expect(Date.now() - started).toBeLessThan(LONG_BLOCK_MS / 4);
    await add(`${tag}:a`, 'for a');
    expect(texts(await first)).toEqual(['for a']);
  }

  it('readers of 30 sessions (their live events and their history’s news) hold one blocking connection, and each gets its own records', async () => {
    const broker = new LiveBrokerClient({ url: redis.url });
    broker.connection = async () => shared;
    const tag = `many-${Date.now()}`;
    const sessions = Array.from({ length: 30 }, (_, i) => `${tag}-${i}`);
    // Each session has one open model call, so its reader waits on the broker.
    const readers = sessions.map((wf) => new BrokerStreamTransport(openCallUpstream, broker, wf));
    const polls = sessions.map((wf) => new BrokerPollShare(async () => shared, wf, brokerReads(broker)));
    await Promise.all(readers.map((r) => r.snapshot(0)));
    // Each session's history is being polled by another process (it holds the lease): these wait for its news.
    await Promise.all(sessions.map((wf) => admin.sendCommand(['SET', `${brokerPollKey(wf, 'run-1')}:polling`, 'another process', 'PX', '60000'])));
    const live = readers.map((r) => r.waitForLive('run-1'));
    const news = polls.map((p) => p.wait('run-1', 3, async () => undefined));
    await oneBlocked();
    expect(await connections()).toBe(1);
    for (const wf of sessions) {
      await admin.sendCommand(['XADD', liveBrokerKey(wf), '*', ...encodeLiveEntry({ callId: 'call-1', attempt: 1, offset: 0, event: { type: 'text_delta', index: 0, text: wf } })]);
      await admin.sendCommand(['XADD', brokerPollKey(wf, 'run-1'), '*', 'news', JSON.stringify({ historyLength: 9, last: false })]);
    }
    await Promise.all(live);
    expect(await Promise.all(news)).toEqual(sessions.map(() => ({ historyLength: 9, last: false })));
    const snaps = await Promise.all(readers.map((r) => r.snapshot(0)));
    expect(snaps.map((s) => (s.live.get('call-1')?.events[0] as { text?: string } | undefined)?.text)).toEqual(sessions);
    // The connection closes with its last user: a process whose readers ended holds none.
    readers.forEach((r) => r.close());
    polls.forEach((p) => p.close());
    await until(async () => (await connections()) === 0);
    expect(await connections()).toBe(0);
  }, 60_000);

  it('a wait on a stream the read in flight does not cover is answered at once, not when that read’s block ends', async () => {
    const reads = new BlockingReads(async () => shared, LONG_BLOCK_MS);
    const [a, b] = [reads.open(), reads.open()];
    const tag = `join-${Date.now()}`;
    await otherStreamAnsweredAtOnce(a.read(`${tag}:a`, '0'), b, tag, true);
    a.release();
    b.release();
  }, 60_000);

  it('a wait that comes while the blocking connection is being made is in the first read', async () => {
    // A connect that takes a while (a broker across a network).
    const slow: RedisConnection = { ...shared, duplicate: async () => (await new Promise((r) => setTimeout(r, 300)), shared.duplicate()) };
    const reads = new BlockingReads(async () => slow, LONG_BLOCK_MS);
    const [a, b] = [reads.open(), reads.open()];
    const tag = `connecting-${Date.now()}`;
    const first = a.read(`${tag}:a`, '0');
    await new Promise((r) => setTimeout(r, 50)); // b comes while a's read is still connecting
    await otherStreamAnsweredAtOnce(first, b, tag, false);
    a.release();
    b.release();
  }, 60_000);

  it('a wait from an earlier record than the read in flight gets the records in between', async () => {
    const reads = new BlockingReads(async () => shared, LONG_BLOCK_MS);
    const [a, b] = [reads.open(), reads.open()];
    const key = `earlier-${Date.now()}`;
    const one = await add(key, 'one');
    const two = await add(key, 'two');
    const later = a.read(key, two);
    await oneBlocked();
    expect(texts(await b.read(key, one))).toEqual(['two']);
    await add(key, 'three');
    expect(texts(await later)).toEqual(['three']);
    a.release();
    b.release();
  }, 60_000);

  it('a quiet stream answers nothing after its block, however busy the others are; an aborted wait leaves the rest', async () => {
    const reads = new BlockingReads(async () => shared, 300);
    const [quiet, busy, gone] = [reads.open(), reads.open(), reads.open()];
    const tag = `quiet-${Date.now()}`;
    const started = Date.now();
    const nothing = quiet.read(`${tag}:quiet`, '0');
    const stop = new AbortController();
    const aborted = gone.read(`${tag}:gone`, '0', stop.signal);
    stop.abort();
    expect(await aborted).toBe(ABORTED);
    let last = '0';
    for (let i = 0; i < 8; i++) {
      const got = busy.read(`${tag}:busy`, last);
      await add(`${tag}:busy`, `b${i}`);
      const records = await got;
      expect(texts(records)).toEqual([`b${i}`]);
      last = (records as BrokerRecord[]).at(-1)!.id;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(await nothing).toEqual([]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    [quiet, busy, gone].forEach((u) => u.release());
  }, 60_000);

  it('closing the broker client ends its readers’ waits at once (they fall back to Temporal) and leaves no connection', async () => {
    await until(async () => (await connections()) === 0); // the earlier tests' connections, closed as they ended
    const broker = new LiveBrokerClient({ url: redis.url });
    const tag = `closing-${Date.now()}`;
    const reader = new BrokerStreamTransport(openCallUpstream, broker, tag, 50);
    await reader.snapshot(0);
    const waiting = reader.waitForLive('run-1');
    await oneBlocked();
    expect(await connections()).toBe(2); // its commands, and the process's one blocking read
    const closedAt = Date.now();
    await broker.close();
    await waiting;
    expect(Date.now() - closedAt).toBeLessThan(500); // not the read's quiet second, nor a read on a new connection
    // The reader polls Temporal now: its next waits neither block on the broker nor connect to it again.
    await reader.waitForLive('run-1');
    await reader.snapshot(0);
    await until(async () => (await connections()) === 0);
    await new Promise((r) => setTimeout(r, 200)); // and none made again since
    expect(await connections()).toBe(0);
    await expect(broker.connection()).rejects.toMatchObject({ code: 'BROKER_CLOSED' });
    reader.close();
  }, 60_000);

  it('a broker that fails fails the waits (their readers fall back), and the next read connects again', async () => {
    let fail = true;
    const reads = new BlockingReads(async () => (fail ? Promise.reject(new Error('connection refused')) : shared), 300);
    const user = reads.open();
    await expect(user.read(`down-${Date.now()}`, '0')).rejects.toThrow('connection refused');
    fail = false;
    const key = `back-${Date.now()}`;
    const got = user.read(key, '0');
    await add(key, 'back');
    expect(texts(await got)).toEqual(['back']);
    user.release();
  }, 60_000);
});
