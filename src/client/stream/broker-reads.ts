/**
 * A process's blocking reads of the broker's streams, on one connection. A blocking read (`XREAD
 * BLOCK`) holds its connection while it waits, so a reader that blocked on its own stream held a
 * connection of its own: two for each session a process followed (its live events and its history's
 * news), 2,000 for a web server following 1,000 sessions. Here every wait of the process joins one
 * `XREAD BLOCK` over all the streams waited on. A wait the read in flight does not cover (another
 * stream, or an earlier id) interrupts it (`CLIENT UNBLOCK`, sent on the shared connection), and the
 * read is sent again at once with the new stream in, so a new wait is not held back by the others.
 */
import type { RedisConnection } from '../../activities/stream/redis-client';
import { onAbort } from '../abort-listeners';

/** A wait that finds nothing new returns no records after this (its caller's "quiet second"). */
const BLOCK_MS = 1_000;
/** Records one read returns per stream at most (a wait gets the rest from its next read). */
const COUNT = 1_000;
/** An interrupt that found the read not blocked yet (it was still on its way) is tried again after this. */
const UNBLOCK_RETRY_MS = 1;
const UNBLOCK_TRIES = 50;

export interface BrokerRecord {
  id: string;
  fields: Record<string, string>;
}

export const ABORTED = Symbol('aborted');

/** One user's handle on the process's blocking reads (a reader of a run, a run's poll share). */
export interface BlockingReader {
  /** The stream's records after `after`, once there are any; none after a second with nothing; ABORTED when `signal` aborts. */
  read(key: string, after: string, signal?: AbortSignal): Promise<BrokerRecord[] | typeof ABORTED>;
  /** This user is done: the connection closes when the last user is (it would keep the process alive). */
  release(): void;
}

interface Wait {
  key: string;
  after: string;
  until: number;
  done(records: BrokerRecord[] | Error): void;
}

/** The read in flight: the streams it covers (from which id) and the waits it answers. */
interface InFlight {
  streams: Map<string, string>;
  waits: Set<Wait>;
  clientId: string;
  unblocked: boolean;
}

export class BlockingReads {
  private users = 0;
  private conn: Promise<{ conn: RedisConnection; clientId: string }> | undefined;
  private readonly waits = new Set<Wait>();
  private current: InFlight | undefined;
  private running = false;
  /** Why these reads ended for good (their broker client was closed): every read fails with it. */
  private ended: Error | undefined;

  constructor(
    private readonly shared: () => Promise<RedisConnection>,
    private readonly blockMs = BLOCK_MS,
  ) {}

  /** A handle for one user; its reads share the connection with every other user's. */
  open(): BlockingReader {
    this.users++;
    let released = false;
    return {
      read: (key, after, signal) => this.read(key, after, signal),
      release: () => {
        if (released) return;
        released = true;
        if (--this.users === 0) this.close();
      },
    };
  }

  /**
   * Ends these reads for good (their broker client was closed): every wait fails with `reason` at once,
   * and so does every later read, so their readers fall back to Temporal instead of connecting again.
   */
  end(reason: Error): void {
    this.ended = reason;
    this.close();
    this.failWaits(reason);
  }

  /** Every wait fails with `err` (their readers fall back to Temporal). */
  private failWaits(err: Error): void {
    const waits = [...this.waits];
    this.waits.clear();
    for (const w of waits) w.done(err);
  }

  /** Closes the blocking connection (the next read makes another). */
  close(): void {
    const conn = this.conn;
    this.conn = undefined;
    void conn?.then((c) => c.conn.close()).catch(() => undefined);
  }

  private read(key: string, after: string, signal?: AbortSignal): Promise<BrokerRecord[] | typeof ABORTED> {
    if (this.ended) return Promise.reject(this.ended);
    if (signal?.aborted) return Promise.resolve(ABORTED);
    return new Promise((resolve, reject) => {
      let off: () => void = () => undefined;
      const wait: Wait = {
        key,
        after,
        until: Date.now() + this.blockMs,
        done: (got) => {
          off();
          if (got instanceof Error) reject(got);
          else resolve(got);
        },
      };
      if (signal)
        off = onAbort(signal, () => {
          this.waits.delete(wait);
          resolve(ABORTED);
        });
      this.waits.add(wait);
      const current = this.current;
      const from = current?.streams.get(key);
      if (current && from !== undefined && compareIds(from, after) <= 0) current.waits.add(wait);
      else if (current) this.interrupt(current);
      this.run();
    });
  }

  private run(): void {
    if (this.running) return;
    this.running = true;
    void this.loop().finally(() => {
      this.running = false;
      if (this.waits.size > 0) this.run();
    });
  }

  private async loop(): Promise<void> {
    while (this.waits.size > 0) {
      // Waits that come back right after a reply (a reader that took its records and waits again) join this read.
      await new Promise((r) => setImmediate(r));
      if (this.waits.size === 0) return;
      const made = (this.conn ??= this.connect());
      try {
        const { conn, clientId } = await made;
        if (this.waits.size === 0) return; // every wait aborted while connecting
        // What to read is taken after the connect, with nothing awaited until the read is sent: a wait
        // that came while connecting is in it, and one that comes after finds it in flight.
        const streams = new Map<string, string>();
        for (const w of this.waits) {
          const from = streams.get(w.key);
          if (from === undefined || compareIds(w.after, from) < 0) streams.set(w.key, w.after);
        }
        const now = Date.now();
        let block = this.blockMs;
        for (const w of this.waits) block = Math.min(block, w.until - now);
        const current: InFlight = (this.current = { streams, waits: new Set(this.waits), clientId, unblocked: false });
        // BLOCK 0 would wait forever: at least a millisecond.
        const reply = await conn.sendCommand(['XREAD', 'COUNT', String(COUNT), 'BLOCK', String(Math.max(1, block)), 'STREAMS', ...streams.keys(), ...streams.values()]);
        this.answer(current, recordsByStream(reply));
      } catch (err) {
        this.current = undefined;
        // Closed on purpose (its last user went) while a read was out: the waits now, if any, get a new connection.
        if (this.conn !== made) continue;
        this.close();
        this.failWaits(err instanceof Error ? err : new Error(String(err)));
        return;
      }
    }
  }

  private answer(current: InFlight, byStream: Map<string, BrokerRecord[]>): void {
    this.current = undefined;
    const now = Date.now();
    for (const w of current.waits) {
      if (!this.waits.has(w)) continue; // aborted meanwhile
      const records = (byStream.get(w.key) ?? []).filter((r) => compareIds(r.id, w.after) > 0);
      if (records.length === 0 && now < w.until) continue;
      this.waits.delete(w);
      w.done(records);
    }
  }

  private async connect(): Promise<{ conn: RedisConnection; clientId: string }> {
    const conn = await (await this.shared()).duplicate();
    try {
      return { conn, clientId: String(await conn.sendCommand(['CLIENT', 'ID'])) };
    } catch (err) {
      void conn.close().catch(() => undefined);
      throw err;
    }
  }

  /** Ends the read in flight early (it answers nothing new; the loop reads again with every wait in). */
  private interrupt(current: InFlight): void {
    if (current.unblocked) return;
    current.unblocked = true;
    const attempt = async (tries: number): Promise<void> => {
      if (this.current !== current || this.ended) return;
      const n = await (await this.shared()).sendCommand(['CLIENT', 'UNBLOCK', current.clientId]);
      // 0: the read had not reached the broker yet; it will block, so try again in a moment.
      if (Number(n) === 0 && tries > 1) {
        await new Promise((r) => setTimeout(r, UNBLOCK_RETRY_MS));
        await attempt(tries - 1);
      }
    };
    // A failed interrupt costs the new wait at most one read's block; the read's own failure is the loop's.
    void attempt(UNBLOCK_TRIES).catch(() => undefined);
  }
}

/** Stream ids (`<ms>-<seq>`, or `0`) in order: negative when `a` is before `b`. */
export function compareIds(a: string, b: string): number {
  const [am = 0, as = 0] = a.split('-').map(Number);
  const [bm = 0, bs = 0] = b.split('-').map(Number);
  return am !== bm ? am - bm : as - bs;
}

/** An XREAD reply (RESP2 `[[key, records], …]` or a RESP3 map), as each stream's records. */
export function recordsByStream(reply: unknown): Map<string, BrokerRecord[]> {
  const out = new Map<string, BrokerRecord[]>();
  if (isXRead(reply)) for (const [key, records] of reply) out.set(key, recordList(records));
  else if (reply && typeof reply === 'object' && !Array.isArray(reply)) for (const [key, records] of Object.entries(reply)) out.set(key, recordList(records));
  return out;
}

/** XRANGE / XREVRANGE records, or a one-stream XREAD reply's. */
export function recordsOf(reply: unknown): BrokerRecord[] {
  if (!reply) return [];
  if (Array.isArray(reply) && !isXRead(reply)) return recordList(reply);
  return [...recordsByStream(reply).values()][0] ?? [];
}

/** RESP2 XREAD: `[[key, [[id, fields], …]], …]` (an XRANGE record is `[id, [field, value, …]]`: its second element holds strings). */
function isXRead(reply: unknown): reply is Array<[string, unknown]> {
  if (!Array.isArray(reply) || reply.length === 0) return false;
  const first: unknown = reply[0];
  return Array.isArray(first) && typeof first[0] === 'string' && Array.isArray(first[1]) && first[1].length > 0 && Array.isArray(first[1][0]);
}

/** Records as RESP2 `[id, [field, value, …]]` or RESP3 `{ id, message }`. */
function recordList(records: unknown): BrokerRecord[] {
  const out: BrokerRecord[] = [];
  for (const r of (Array.isArray(records) ? records : []) as Array<[string, string[]] | { id: string; message: Record<string, string> }>) {
    if (Array.isArray(r)) {
      const [id, flat] = r;
      const fields: Record<string, string> = {};
      for (let i = 0; i + 1 < flat.length; i += 2) fields[flat[i]!] = flat[i + 1]!;
      out.push({ id, fields });
    } else {
      out.push({ id: r.id, fields: r.message });
    }
  }
  return out;
}
