/**
 * Stream pages shared between processes through the broker. Each process that follows a session keeps
 * one upstream reader (the shared reader), and when the run's history grows each of them asks the
 * stream query, which the worker answers one after another: with five processes the last answer came
 * 13-15 ms a process after the first, and with fifty it would be most of a second. Here the first
 * process to need the page for a history length asks, and puts its answer on the broker for the others,
 * which wait for it instead of asking. A page stands for the run's state at that length in any process
 * (the query is asked after the length was seen, so it answers from that state or a newer one, the same
 * rule a process's own reuse of a page follows). Pages are kept for seconds: they matter at the moment
 * the processes wake together. With the broker unreachable, each process asks as before.
 */
import { pageFrom, type StreamPage } from '../../wire/stream';
import type { RedisConnection } from '../../activities/stream/redis-client';
import { sleep, QUERY_HEDGE_MS, type PageShare } from './transport';

/** How long a page is kept on the broker. */
const KEEP_MS = 10_000;
/**
 * How long the process that asks holds the right to, and the longest the others wait for its answer
 * (a process that died asking frees it then; a query that failed frees it at once). Its query is asked
 * again after QUERY_HEDGE_MS when it has no answer, so this is several of those.
 */
const ASKING_MS = 8 * QUERY_HEDGE_MS;
/** How often a waiting process looks for the answer. */
const LOOK_MS = 3;
/** After the broker failed, how long pages are asked of Temporal only (a broker that is away may take seconds to refuse a connect). */
const OFF_MS = 30_000;

/** The broker's key for a run's page at a history length. */
export function brokerPageKey(workflowId: string, runId: string, historyLength: number): string {
  return `fh:page:${workflowId}:${runId}:${historyLength}`;
}

interface SharedPage {
  from: number;
  page: StreamPage;
}

export class BrokerPageShare implements PageShare {
  private offUntil = 0;

  constructor(
    private readonly connection: () => Promise<RedisConnection>,
    private readonly workflowId: string,
  ) {}

  async read(runId: string, historyLength: number, from: number, ask: () => Promise<StreamPage>): Promise<StreamPage> {
    if (Date.now() < this.offUntil) return ask();
    const key = brokerPageKey(this.workflowId, runId, historyLength);
    let conn: RedisConnection;
    try {
      conn = await this.connection();
      const shared = pageOf(await conn.sendCommand(['GET', key]), from);
      if (shared) return shared;
      const asking = await conn.sendCommand(['SET', `${key}:asking`, '1', 'NX', 'PX', String(ASKING_MS)]);
      // This process asks. Returned, not awaited here: the query's own failure is the caller's, not the broker's.
      if (asking === 'OK') return this.askAndShare(conn, key, from, ask);
      // Another process is asking: its answer, as soon as it is there.
      for (const until = Date.now() + ASKING_MS; Date.now() < until; ) {
        await sleep(LOOK_MS);
        const [got, asking] = (await conn.sendCommand(['MGET', key, `${key}:asking`])) as [unknown, unknown];
        const page = pageOf(got, from);
        if (page) return page;
        // An answer that does not hold this reader's offset (it is behind the one who asked), or nobody
        // asking any more (the query failed): ask.
        if (got || !asking) break;
      }
    } catch {
      // The broker is down or answered something unexpected: ask Temporal, as without it.
      this.offUntil = Date.now() + OFF_MS;
    }
    return ask();
  }

  private async askAndShare(conn: RedisConnection, key: string, from: number, ask: () => Promise<StreamPage>): Promise<StreamPage> {
    let page: StreamPage;
    try {
      page = await ask();
    } catch (err) {
      void conn.sendCommand(['DEL', `${key}:asking`]).catch(() => undefined); // the others ask for themselves
      throw err;
    }
    const shared: SharedPage = { from, page };
    // Not waited on: the reader goes on with its page, and the others find it a moment later.
    void conn.sendCommand(['SET', key, JSON.stringify(shared), 'PX', String(KEEP_MS)]).catch(() => undefined);
    return page;
  }
}

/** The page at `from` from a shared answer (undefined: none, or one that does not hold `from`). */
function pageOf(raw: unknown, from: number): StreamPage | undefined {
  if (typeof raw !== 'string') return undefined;
  let shared: SharedPage;
  try {
    shared = JSON.parse(raw) as SharedPage;
  } catch {
    return undefined;
  }
  if (typeof shared?.from !== 'number' || !shared.page || !Array.isArray(shared.page.events) || !Array.isArray(shared.page.blocks)) return undefined;
  return shared.from === from ? shared.page : pageFrom(shared.page, shared.from, from);
}
