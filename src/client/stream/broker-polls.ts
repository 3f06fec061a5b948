/**
 * One long poll on a run's history for every process that follows it, through the broker. Each process
 * that follows a session keeps one upstream reader (the shared reader), and each of those kept a long
 * poll of its own on the run's history: Temporal's work per turn grew with the processes (the watchers
 * bench: 90-100 ms of server CPU a turn with 5 processes, 150 with 10, 65-90 with one). Here one process
 * at a time holds the run's lease and polls; each answer it gets (the history's new length, and whether
 * that was the end of a running run) goes on a short Redis stream, and the other processes wait on that
 * stream (`XREAD BLOCK`) instead of asking Temporal. A poller that stops (its readers ended, the process
 * died) stops renewing its lease, and the first process to find it gone polls from then on. With the
 * broker unreachable, each process polls for itself, as without it.
 */
import { randomUUID } from 'node:crypto';
import type { RedisConnection } from '../../activities/stream/redis-client';
import { ABORTED, BlockingReads, recordsOf, type BlockingReader, type BrokerRecord } from './broker-reads';
import type { PollNews, PollShare } from './transport';

/** How long the polling process holds the run's lease without renewing it. */
const LEASE_MS = 3_000;
/** How often the polling process renews its lease while its long poll waits. */
const RENEW_MS = 1_000;
/** A wait with no news returns after this, as a long poll does (its reader then reads again). */
const WAIT_MS = 20_000;
/** News entries kept on the broker, and how long the stream outlives its last entry. */
const KEEP_ENTRIES = 16;
const KEEP_MS = 60_000;
/**
 * How long the latest news stands for a process's first read (it may be behind by then: that process
 * only reads again sooner; kept short so a run that ended unwatched is soon described instead).
 */
const LATEST_MS = 10_000;
/** After the broker failed, how long this process polls for itself. */
const OFF_MS = 30_000;

/** The lease is renewed or given up only by the process that holds it. */
const RENEW = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0";
const RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

/** The broker's stream of news of a run's history (its lease is the same key with `:polling`). */
export function brokerPollKey(workflowId: string, runId: string): string {
  return `fh:poll:${workflowId}:${runId}`;
}

/** The latest news of the workflow's latest run, with the run's id: where a process's first read starts. */
function latestKey(workflowId: string): string {
  return `fh:poll:${workflowId}:latest`;
}

interface Latest {
  id: string;
  news: PollNews | undefined;
}

export class BrokerPollShare implements PollShare {
  private offUntil = 0;
  /** This process's name on the lease. */
  private readonly me = randomUUID();
  /** This share's handle on the process's blocking reads (a wait blocks on the news there, a second at a time). */
  private reader: BlockingReader | undefined;
  /** The lease this process may hold (and its renewal while it polls), released when its readers are gone. */
  private lease: { conn: RedisConnection; key: string; renew?: ReturnType<typeof setInterval> } | undefined;

  /** `reads`: the process's blocking reads (the broker client's); without them, this share blocks on a connection of its own. */
  constructor(
    private readonly connection: () => Promise<RedisConnection>,
    private readonly workflowId: string,
    private readonly reads: BlockingReads = new BlockingReads(connection),
  ) {}

  async wait(runId: string, known: number, poll: () => Promise<PollNews | undefined>, signal?: AbortSignal): Promise<PollNews | undefined> {
    if (Date.now() < this.offUntil) return poll();
    const key = brokerPollKey(this.workflowId, runId);
    const lease = `${key}:polling`;
    let conn: RedisConnection;
    try {
      conn = await this.connection();
      let latest = await latestOf(conn, key);
      for (const until = Date.now() + WAIT_MS; ; ) {
        if (latest?.news && latest.news.historyLength > known) return latest.news;
        if (signal?.aborted) return undefined;
        const took = await conn.sendCommand(['SET', lease, this.me, 'NX', 'PX', String(LEASE_MS)]);
        if (took === 'OK' || (await conn.sendCommand(['GET', lease])) === this.me) break; // this process polls
        if (Date.now() >= until) return undefined;
        const got = await (this.reader ??= this.reads.open()).read(key, latest?.id ?? '0', signal);
        if (got === ABORTED) return undefined;
        const newest = got.at(-1);
        if (newest) latest = latestFrom(newest);
      }
    } catch {
      // The broker is down or answered something unexpected: poll for this process, as without it.
      this.offUntil = Date.now() + OFF_MS;
      this.close();
      return poll();
    }
    return this.poll(conn, runId, key, lease, poll);
  }

  /** Polls for every process: renews the lease while the long poll waits, and tells the others what it answered. */
  private async poll(conn: RedisConnection, runId: string, key: string, lease: string, poll: () => Promise<PollNews | undefined>): Promise<PollNews | undefined> {
    const held = (this.lease = { conn, key: lease, renew: setInterval(() => void conn.sendCommand(['EVAL', RENEW, '1', lease, this.me, String(LEASE_MS)]).catch(() => undefined), RENEW_MS) });
    let news: PollNews | undefined;
    try {
      news = await poll(); // its failure is the caller's, not the broker's
    } finally {
      clearInterval(held.renew);
    }
    if (news) {
      // Not waited on: this process goes on with its own read, and the others wake a moment later.
      void conn
        .sendCommand(['XADD', key, 'MAXLEN', '~', String(KEEP_ENTRIES), '*', 'news', JSON.stringify(news)])
        .then(() => conn.sendCommand(['PEXPIRE', key, String(KEEP_MS)]))
        .then(() => conn.sendCommand(['SET', latestKey(this.workflowId), JSON.stringify({ runId, news }), 'PX', String(LATEST_MS)]))
        .catch(() => undefined);
    }
    return news;
  }

  async latest(): Promise<{ runId: string; news: PollNews } | undefined> {
    if (Date.now() < this.offUntil) return undefined;
    try {
      const raw = await (await this.connection()).sendCommand(['GET', latestKey(this.workflowId)]);
      if (typeof raw !== 'string') return undefined;
      const { runId, news } = JSON.parse(raw) as { runId?: unknown; news?: unknown };
      const checked = checkedNews(news);
      return typeof runId === 'string' && checked ? { runId, news: checked } : undefined;
    } catch {
      this.offUntil = Date.now() + OFF_MS;
      return undefined;
    }
  }

  /** Gives up the lease (another process polls from its next wait) and lets go of the blocking reads. */
  close(): void {
    const lease = this.lease;
    this.lease = undefined;
    clearInterval(lease?.renew);
    void lease?.conn.sendCommand(['EVAL', RELEASE, '1', lease.key, this.me]).catch(() => undefined);
    this.reader?.release();
    this.reader = undefined;
  }
}

async function latestOf(conn: RedisConnection, key: string): Promise<Latest | undefined> {
  const [newest] = recordsOf(await conn.sendCommand(['XREVRANGE', key, '+', '-', 'COUNT', '1']));
  return newest && latestFrom(newest);
}

function latestFrom(record: BrokerRecord): Latest {
  return { id: record.id, news: newsOf(record.fields.news) };
}

function newsOf(raw: string | undefined): PollNews | undefined {
  if (raw === undefined) return undefined;
  try {
    return checkedNews(JSON.parse(raw));
  } catch {
    return undefined;
  }
}

/** `value` as news, if it has news's shape (what the broker holds is read, not trusted). */
function checkedNews(value: unknown): PollNews | undefined {
  const news = value as PollNews | undefined;
  return Number.isSafeInteger(news?.historyLength) && typeof news?.last === 'boolean' ? news : undefined;
}
