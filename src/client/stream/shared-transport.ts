/**
 * One upstream reader per run per process. Readers of the same session in one process (the board's
 * tabs, a web chat's viewers, `fh chat` windows) share it and fan out in memory: a snapshot fetched for
 * one reader serves every reader whose previous snapshot is older than it, and one long poll on the
 * history wakes them all. Temporal's load per turn then stays that of one reader however many watch
 * in this process (`npm run bench -- watchers` measures it).
 *
 * Sharing never makes a reader see less: a reader only takes a snapshot whose fetch started after the
 * one it saw last, which covers its offset (see `covers`), so each reader still sees every event once,
 * in order, exactly as readStream promises for a transport of its own.
 */
import type { Client } from '@temporalio/client';
import type { StreamPage } from '../../wire/stream';
import { TemporalStreamTransport, untilAborted, type StreamSnapshot, type StreamTransport } from './transport';
import { BrokerStreamTransport, brokerReads, type LiveBrokerClient } from './broker-transport';
import { BrokerPageShare } from './broker-pages';
import { BrokerPollShare } from './broker-polls';

/** One upstream fetch: when it started (a sequence number), from where, and what it got. */
interface Fetched {
  seq: number;
  from: number;
  snap: StreamSnapshot;
}

/** A long poll on one run's history that any number of readers wait on; it ends when the last stops waiting. */
interface SharedPoll {
  done: Promise<void>;
  waiters: number;
  abort: AbortController;
}

/**
 * The page a fetch got holds everything a reader at `from` needs next. A page cut at its limit (or an
 * older worker's) reaches to its last event only (blocks after it are left for the next page:
 * fh.stream.read pages by events), so it serves a reader at or before that event; a page without
 * events, or one marked `toEnd`, holds every block to the end.
 */
function covers(f: Fetched, from: number): boolean {
  if (f.from > from) return false;
  const page = f.snap.page;
  return page.events.length === 0 || page.toEnd === true || from <= page.events[page.events.length - 1]!.offset;
}

/** The readers of one workflow in this process, and the one upstream they share. */
export class StreamHub {
  private seq = 0;
  private latest: Fetched | undefined;
  private inflight: { seq: number; from: number; promise: Promise<Fetched> } | undefined;
  private readonly polls = new Map<string, SharedPoll>();
  /** Readers following now; the registry drops the hub when it reaches 0. */
  readers = 0;


  constructor(readonly upstream: StreamTransport) {}

  /**
   * The sequence number a new reader starts after: a fetch already in flight serves it (it started a
   * moment ago), a finished one does not (it may be from long before this reader came).
   */
  current(): number {
    return this.latest?.seq ?? 0;
  }

  /** A snapshot from a fetch that started after `after` and covers `from`: shared when one is there, else fetched. */
  async snapshot(from: number, after: number): Promise<Fetched> {
    const latest = this.latest;
    if (latest && latest.seq > after && covers(latest, from)) return latest;
    const flying = this.inflight;
    if (flying && flying.seq > after && flying.from <= from) {
      const got = await flying.promise;
      if (covers(got, from)) return got;
    }
    // From this reader's position: a reader behind it fetches for itself (and for those behind it).
    return this.fetch(from);
  }

  private fetch(from: number): Promise<Fetched> {
    const seq = ++this.seq;
    const promise = this.upstream.snapshot(from).then((snap) => {
      const got = { seq, from, snap };
      if (!this.latest || this.latest.seq < seq) this.latest = got;
      return got;
    });
    const flying = { seq, from, promise };
    this.inflight = flying;
    // Cleared when it settles (a failed fetch is not kept: the next reader asks again).
    const clear = () => {
      if (this.inflight === flying) this.inflight = undefined;
    };
    promise.then(clear, clear);
    return promise;
  }

  /**
   * Resolves when the run did something new: one long poll for all the readers of `runId`, joined by
   * each (an earlier poll wakes on anything after its own start, which is before what its new waiter
   * read). Cancelled upstream only when no reader waits on it any more.
   */
  waitForChange(runId: string, signal?: AbortSignal): Promise<void> {
    return this.joined(`change:${runId}`, (s) => this.upstream.waitForChange(runId, s), signal);
  }

  /** A broker's blocking read, one for all the readers (absent upstream: they poll). */
  get waitsForLive(): boolean {
    return this.upstream.waitForLive !== undefined;
  }

  waitForLive(runId: string, signal?: AbortSignal): Promise<void> {
    return this.joined(`live:${runId}`, (s) => this.upstream.waitForLive!(runId, s), signal);
  }

  /** One wait per key for every reader; cancelled upstream only when no reader waits on it any more. */
  private async joined(key: string, start: (signal: AbortSignal) => Promise<void>, signal?: AbortSignal): Promise<void> {
    let poll = this.polls.get(key);
    if (!poll) {
      const abort = new AbortController();
      const done: Promise<void> = start(abort.signal).finally(() => {
        if (this.polls.get(key) === poll) this.polls.delete(key);
      });
      poll = { done, waiters: 0, abort };
      this.polls.set(key, poll);
    }
    const shared = poll;
    shared.waiters++;
    try {
      await untilAborted(shared.done, signal);
    } finally {
      shared.waiters--;
      if (shared.waiters === 0 && signal?.aborted) {
        shared.abort.abort();
        if (this.polls.get(key) === shared) this.polls.delete(key);
      }
    }
  }
}

/** One reader's view of a hub: its own place in the sequence of fetches. */
export class SharedStreamTransport implements StreamTransport {
  private seen: number;

  constructor(
    private readonly hub: StreamHub,
    private readonly child?: (workflowId: string) => { transport: StreamTransport; started(): Promise<boolean> },
  ) {
    this.seen = hub.current();
    if (hub.waitsForLive) this.waitForLive = (runId, signal) => hub.waitForLive(runId, signal);
  }

  async snapshot(from: number): Promise<StreamSnapshot> {
    const got = await this.hub.snapshot(from, this.seen);
    this.seen = got.seq;
    return got.snap;
  }

  readRun(runId: string, from: number): Promise<StreamPage> {
    return this.hub.upstream.readRun(runId, from);
  }

  previousRun(runId: string): Promise<string | undefined> {
    return this.hub.upstream.previousRun(runId);
  }

  waitForChange(runId: string, signal?: AbortSignal): Promise<void> {
    return this.hub.waitForChange(runId, signal);
  }

  /** Present only when the upstream has a broker to block on (the reader polls otherwise). */
  readonly waitForLive?: (runId: string, signal?: AbortSignal) => Promise<void>;

  subAgent(workflowId: string): { transport: StreamTransport; started(): Promise<boolean> } {
    return this.child ? this.child(workflowId) : this.hub.upstream.subAgent!(workflowId);
  }
}

/** The hubs of one client (a process may hold several clients: each has its own connection and namespace). */
const hubsByClient = new WeakMap<Client, Map<string, StreamHub>>();

/**
 * A reader of `workflowId` on the hub this process shares for it; `release` when the reader stops
 * (the hub goes when its last reader does, so a long-lived process keeps none for ended readers).
 */
export function sharedReader(client: Client, workflowId: string, broker?: LiveBrokerClient): { transport: StreamTransport; release(): void } {
  let hubs = hubsByClient.get(client);
  if (!hubs) hubsByClient.set(client, (hubs = new Map()));
  const key = broker ? `${workflowId}\u0000${brokerId(broker)}` : workflowId;
  let hub = hubs.get(key);
  if (!hub) {
    // With a broker, the run's pages and its history's long poll are shared with its readers in other processes too.
    const connection = broker && (() => broker.connection());
    const temporal = connection
      ? new TemporalStreamTransport(client, workflowId, new BrokerPageShare(connection, workflowId), new BrokerPollShare(connection, workflowId, brokerReads(broker)))
      : new TemporalStreamTransport(client, workflowId);
    hubs.set(key, (hub = new StreamHub(broker ? new BrokerStreamTransport(temporal, broker, workflowId) : temporal)));
  }
  const own = hub;
  own.readers++;
  // A sub-agent's child is read through its own shared hub too (viewers of a parent all follow its children).
  const children: Array<() => void> = [];
  const child = (id: string) => {
    const reader = sharedReader(client, id, broker);
    children.push(reader.release);
    const upstream = own.upstream.subAgent!(id);
    return { transport: reader.transport, started: () => upstream.started() };
  };
  let released = false;
  const transport = new SharedStreamTransport(own, child);
  return {
    transport,
    release() {
      if (released) return;
      released = true;
      children.forEach((r) => r());
      own.readers--;
      if (own.readers === 0 && hubs.get(key) === own) {
        hubs.delete(key);
        own.upstream.close?.();
      }
    },
  };
}

const brokerIds = new WeakMap<LiveBrokerClient, number>();
let brokers = 0;
function brokerId(broker: LiveBrokerClient): number {
  let id = brokerIds.get(broker);
  if (id === undefined) brokerIds.set(broker, (id = ++brokers));
  return id;
}

/** How many hubs (workflows read) this client shares now: what a test looks at. */
export function sharedHubCount(client: Client): number {
  return hubsByClient.get(client)?.size ?? 0;
}
