/**
 * Reading a run's live events from the broker (Redis Streams) instead of polling Temporal. While a
 * call streams, a reader blocks on `XREAD` and builds the call's live events from the broker's entries,
 * asking Temporal nothing; it reads the durable page again when the call's attempt ends (the activity
 * adds an end entry), when the broker says nothing for a second, or when the broker is down (then it
 * polls the heartbeat details as a reader without a broker does). The durable page and the history stay
 * the source of truth: the broker's entries have the same offsets as the heartbeat details.
 */
import { decodeLiveEntry, liveBrokerKey, type LiveBrokerSettings } from '../../wire/live-broker';
import type { LiveStreamDetails, StreamEvent, StreamPage } from '../../wire/stream';
import { loadRedis, type RedisConnection } from '../../activities/stream/redis-client';
import { sleep, type StreamSnapshot, type StreamTransport } from './transport';

/** How long one blocking read waits before the reader looks at the durable page again. */
const BLOCK_MS = 1_000;

/**
 * A process's connection to the broker, for readers: `stream({ broker })`. One connection for reads,
 * and two per session being waited on (a blocking read holds its connection: one waits for the live
 * events, the other for news of the history's long poll, broker-polls.ts).
 */
export class LiveBrokerClient {
  private conn: Promise<RedisConnection> | undefined;

  constructor(readonly settings: LiveBrokerSettings) {}

  /** The shared connection (made on first use); rejects while the broker is unreachable. */
  connection(): Promise<RedisConnection> {
    const made = (this.conn ??= loadRedis(this.settings.url));
    made.catch(() => {
      if (this.conn === made) this.conn = undefined; // try again next time
    });
    return made;
  }

  /** Closes the connection if one is open; a connect still under way is closed when it lands (never waited on). */
  async close(): Promise<void> {
    const pending = this.conn;
    this.conn = undefined;
    void pending?.then((c) => c.close()).catch(() => undefined);
  }
}

/** Redis for readers of the live path: `stream({ broker: liveBroker({ url }) })`. */
export function liveBroker(settings: LiveBrokerSettings): LiveBrokerClient {
  return new LiveBrokerClient(settings);
}

/** What the broker said of one call's latest attempt. */
interface CallEntries {
  attempt: number;
  from: number;
  events: StreamEvent[];
  ended: boolean;
}

type XRecords = Array<[string, string[]]> | Array<{ id: string; message: Record<string, string> }>;

export class BrokerStreamTransport implements StreamTransport {
  private open: { snap: StreamSnapshot; callId: string } | undefined;
  private readonly calls = new Map<string, CallEntries>();
  /** The last stream id read (Redis ids only grow); '0' reads the stream from its start. */
  private lastId = '0';
  private down = false;
  private stale = true;
  /** A blocking read returned since the last durable page (so a page without the call's entries may be reused). */
  private waited = false;
  private waiter: Promise<RedisConnection> | undefined;

  constructor(
    private readonly upstream: StreamTransport,
    private readonly broker: LiveBrokerClient,
    private readonly workflowId: string,
    private readonly livePollMs = 100,
  ) {}

  async snapshot(from: number): Promise<StreamSnapshot> {
    const open = this.open;
    const call = open && this.calls.get(open.callId);
    if (open && !call?.ended && !this.stale && !this.down && (call || this.waited)) return { ...open.snap, live: this.liveOf(open.snap, open.callId) };
    this.waited = false;
    const snap = await this.upstream.snapshot(from);
    this.stale = false;
    const block = snap.page.blocks.find((b) => !b.closed && b.kind !== 'subagent');
    this.open = block ? { snap, callId: block.callId } : undefined;
    if (!block || this.down) return snap;
    if (!this.calls.has(block.callId)) await this.catchUp();
    return { ...snap, live: this.liveOf(snap, block.callId) };
  }

  /**
   * Waits for the broker to say something new of this run (a delta, or an attempt's end). An ended
   * call waits for the workflow to record it instead; a broker that is down, the poll interval.
   */
  async waitForLive(runId: string, signal?: AbortSignal): Promise<void> {
    // No open call: the reader waits on the history (its caller does); an open call the broker has said
    // nothing of yet is waited for on the broker too, not polled.
    const call = this.open && this.calls.get(this.open.callId);
    if (this.down || !this.open) return sleep(this.livePollMs, signal);
    if (call?.ended) return this.upstream.waitForChange(runId, signal);
    try {
      const conn = await (this.waiter ??= this.broker.connection().then((c) => c.duplicate()));
      const got = await abortable(conn.sendCommand(['XREAD', 'COUNT', '1000', 'BLOCK', String(BLOCK_MS), 'STREAMS', liveBrokerKey(this.workflowId), this.lastId]), signal);
      if (got === ABORTED) return;
      const records = recordsOf(got);
      if (records.length === 0) this.stale = true; // a quiet second: look at the durable page
      this.apply(records);
      this.waited = true;
    } catch {
      this.brokerDown();
    }
  }

  readRun(runId: string, from: number): Promise<StreamPage> {
    return this.upstream.readRun(runId, from);
  }

  previousRun(runId: string): Promise<string | undefined> {
    return this.upstream.previousRun(runId);
  }

  waitForChange(runId: string, signal?: AbortSignal): Promise<void> {
    return this.upstream.waitForChange(runId, signal);
  }

  subAgent(workflowId: string): { transport: StreamTransport; started(): Promise<boolean> } {
    const child = this.upstream.subAgent!(workflowId);
    return { transport: new BrokerStreamTransport(child.transport, this.broker, workflowId, this.livePollMs), started: () => child.started() };
  }

  /** Everything the broker still holds for this run since the last read. */
  private async catchUp(): Promise<void> {
    try {
      const conn = await this.broker.connection();
      const start = this.lastId === '0' ? '-' : `(${this.lastId}`;
      this.apply(recordsOf(await conn.sendCommand(['XRANGE', liveBrokerKey(this.workflowId), start, '+'])));
    } catch {
      this.brokerDown();
    }
  }

  private apply(records: Array<{ id: string; fields: Record<string, string> }>): void {
    for (const { id, fields } of records) {
      this.lastId = id;
      const entry = decodeLiveEntry(fields);
      if (!entry) continue;
      let call = this.calls.get(entry.callId);
      // A newer attempt replaces the older one's events, as it does in the heartbeat details.
      if (!call || entry.attempt > call.attempt) {
        if ('end' in entry) continue;
        this.calls.set(entry.callId, (call = { attempt: entry.attempt, from: entry.offset, events: [], ended: false }));
      }
      if (entry.attempt < call.attempt) continue;
      if ('end' in entry) call.ended = true;
      else if (entry.offset === call.from + call.events.length) call.events.push(entry.event);
    }
    // Only the open call matters: ended calls' entries are dropped once it moves on.
    for (const id of this.calls.keys()) if (id !== this.open?.callId && this.calls.size > 1) this.calls.delete(id);
  }

  /** The open call's live events: the broker's, or the heartbeat details' when those have more. */
  private liveOf(snap: StreamSnapshot, callId: string): Map<string, LiveStreamDetails> {
    const live = new Map(snap.live);
    const call = this.calls.get(callId);
    const details = live.get(callId);
    if (call && (!details || details.attempt < call.attempt || (details.attempt === call.attempt && details.from + details.events.length < call.from + call.events.length))) {
      live.set(callId, { fhStream: 1, callId, attempt: call.attempt, from: call.from, events: call.events });
    }
    return live;
  }

  /** Closes this transport's blocking-read connection (the shared one is the broker client's), and its upstream's. */
  close(): void {
    this.closeWaiter();
    this.upstream.close?.();
  }

  private closeWaiter(): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    void waiter?.then((c) => c.close()).catch(() => undefined);
  }

  /**
   * The reader polls from now on. Its blocking-read connection is closed, not just dropped: the client
   * library reconnects forever in the background, which would keep the process alive after its readers end.
   */
  private brokerDown(): void {
    this.down = true;
    this.closeWaiter();
  }
}

export const ABORTED = Symbol('aborted');

/** `p`, or ABORTED as soon as `signal` aborts (what `p` does after is left to it). */
export function abortable<T>(p: Promise<T>, signal?: AbortSignal): Promise<T | typeof ABORTED> {
  if (!signal) return p;
  if (signal.aborted) return Promise.resolve(ABORTED);
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(ABORTED);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => (signal.removeEventListener('abort', onAbort), resolve(v)),
      (e: unknown) => (signal.removeEventListener('abort', onAbort), reject(e)),
    );
  });
}

/** XRANGE / XREVRANGE / XREAD replies (RESP2 arrays or RESP3 maps, as the client returns them) as records. */
export function recordsOf(reply: unknown): Array<{ id: string; fields: Record<string, string> }> {
  if (!reply) return [];
  // XREAD: [[key, records]] (or { key: records }); XRANGE: records.
  let records: unknown = reply;
  if (Array.isArray(reply) && reply.length > 0 && Array.isArray(reply[0]) && typeof reply[0][0] === 'string' && Array.isArray(reply[0][1]) && reply[0][1].length > 0 && Array.isArray(reply[0][1][0])) records = reply[0][1];
  else if (!Array.isArray(reply) && typeof reply === 'object') records = Object.values(reply as Record<string, unknown>)[0];
  const out: Array<{ id: string; fields: Record<string, string> }> = [];
  for (const r of (records as XRecords) ?? []) {
    if (Array.isArray(r)) {
      const [id, flat] = r as [string, string[]];
      const fields: Record<string, string> = {};
      for (let i = 0; i + 1 < flat.length; i += 2) fields[flat[i]!] = flat[i + 1]!;
      out.push({ id, fields });
    } else {
      out.push({ id: r.id, fields: r.message });
    }
  }
  return out;
}
