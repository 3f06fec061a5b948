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
import { loadRedis, redisModule, type RedisConnection } from '../../activities/stream/redis-client';
import { ABORTED, BlockingReads, recordsOf, type BlockingReader, type BrokerRecord } from './broker-reads';
import { FabricError } from '../../core/errors';
import { sleep, type StreamSnapshot, type StreamTransport } from './transport';

/**
 * A process's connections to the broker, for readers: `stream({ broker })`. Two, however many sessions
 * the process follows: one for commands, and one that every blocking read of the process shares
 * (broker-reads.ts: the live events of each run read, the news of each run's history, broker-polls.ts).
 */
export class LiveBrokerClient {
  private conn: Promise<RedisConnection> | undefined;
  private closed = false;

  constructor(readonly settings: LiveBrokerSettings) {
    redisModule(); // no `redis` package: PROVIDER_PACKAGE_MISSING at once (a reader would otherwise fall back silently forever)
  }

  /** The shared connection (made on first use); rejects while the broker is unreachable, and once this client is closed. */
  connection(): Promise<RedisConnection> {
    if (this.closed) return Promise.reject(new BrokerClosedError());
    const made = (this.conn ??= loadRedis(this.settings.url));
    made.catch(() => {
      if (this.conn === made) this.conn = undefined; // try again next time
    });
    return made;
  }

  /**
   * Closes the connections for good: a connect still under way is closed when it lands (never waited on),
   * and readers still on the broker fall back to Temporal at once (a closed client does not connect again,
   * so it holds nothing that keeps the process alive).
   */
  async close(): Promise<void> {
    this.closed = true;
    readsByBroker.get(this)?.end(new BrokerClosedError());
    const pending = this.conn;
    this.conn = undefined;
    void pending?.then((c) => c.close()).catch(() => undefined);
  }
}

/** A closed broker client was asked for its connection (its readers fall back to Temporal on it). */
export class BrokerClosedError extends FabricError {
  declare readonly code: 'BROKER_CLOSED';
  constructor() {
    super('BROKER_CLOSED', 'The live broker client was closed: make another with liveBroker({ url }) to read from the broker again.');
  }
}

/** Each broker client's blocking reads (kept off the class: they are not part of its public shape). */
const readsByBroker = new WeakMap<LiveBrokerClient, BlockingReads>();

/** The blocking reads of every reader on `broker` in the process (one `XREAD BLOCK` over all their streams). */
export function brokerReads(broker: LiveBrokerClient): BlockingReads {
  let reads = readsByBroker.get(broker);
  if (!reads) readsByBroker.set(broker, (reads = new BlockingReads(() => broker.connection())));
  return reads;
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

export class BrokerStreamTransport implements StreamTransport {
  private open: { snap: StreamSnapshot; callId: string } | undefined;
  private readonly calls = new Map<string, CallEntries>();
  /** The last stream id read (Redis ids only grow); '0' reads the stream from its start. */
  private lastId = '0';
  private down = false;
  private stale = true;
  /** A blocking read returned since the last durable page (so a page without the call's entries may be reused). */
  private waited = false;
  /** This reader's handle on the process's blocking reads (taken at its first wait, released when it closes). */
  private reader: BlockingReader | undefined;

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
      const records = await (this.reader ??= brokerReads(this.broker).open()).read(liveBrokerKey(this.workflowId), this.lastId, signal);
      if (records === ABORTED) return;
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

  private apply(records: BrokerRecord[]): void {
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

  /** Lets go of the blocking reads (their connection closes with its last user), and closes its upstream. */
  close(): void {
    this.releaseReader();
    this.upstream.close?.();
  }

  private releaseReader(): void {
    this.reader?.release();
    this.reader = undefined;
  }

  /**
   * The reader polls from now on, and lets go of the blocking reads: a connection nobody reads on is
   * closed, not just dropped (the client library reconnects forever in the background, which would keep
   * the process alive after its readers end).
   */
  private brokerDown(): void {
    this.down = true;
    this.releaseReader();
  }
}
