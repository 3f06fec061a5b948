/**
 * Where a client reads a run's stream from. The default needs nothing but Temporal: durable events
 * through the stream query, live deltas from the pending activities' heartbeat details (describe),
 * and a long poll on the history to wake when the workflow did something. None of it writes history.
 * Another transport (a broker for many subscribers) implements the same interface.
 */
import { WorkflowNotFoundError, type Client, type WorkflowHandle } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import { onAbort } from '../abort-listeners';
import { isQueryTimeout } from '../query-retries';
import { pause, underSignal, waitBounds } from '../wait-bounds';
import { isLiveStreamDetails, pageFrom, streamReadQuery, type LiveStreamDetails, type StreamPage } from '../../wire/stream';

export interface StreamSnapshot {
  /** The run that answered (a continued session has a new run). */
  runId: string;
  running: boolean;
  /** The run closed by continuing as new: its stream goes on in the next run. */
  continued: boolean;
  page: StreamPage;
  /** Live events of the pending calls, by call id. */
  live: Map<string, LiveStreamDetails>;
}

export interface StreamTransport {
  /** The latest run's stream from `from` on, and what its pending calls streamed so far. */
  snapshot(from: number): Promise<StreamSnapshot>;
  /** An earlier run's durable events (a reader that lagged behind a continue-as-new). */
  readRun(runId: string, from: number): Promise<StreamPage>;
  /** The run this one continued (continue-as-new), if any. */
  previousRun(runId: string): Promise<string | undefined>;
  /** Resolves when the run did something new (or after a while); live deltas are polled instead. */
  waitForChange(runId: string, signal?: AbortSignal): Promise<void>;
  /**
   * Resolves when a streaming call may have new live events (absent: the reader polls every
   * `livePollMs`). A broker's transport blocks on the broker here instead.
   */
  waitForLive?(runId: string, signal?: AbortSignal): Promise<void>;
  /** Releases what the transport holds open (a broker's blocking-read connection), when its readers are gone. */
  close?(): void;
  /** A sub-agent's child workflow's stream (absent: this transport does not read sub-agents; their blocks are skipped). */
  subAgent?(workflowId: string): { transport: StreamTransport; started(): Promise<boolean> };
}

/**
 * Where a transport may get a run's page from besides the stream query: another process's answer for
 * the same history length (the broker's, see BrokerPageShare), or `ask()`'s, which it then shares.
 */
export interface PageShare {
  read(runId: string, historyLength: number, from: number, ask: () => Promise<StreamPage>): Promise<StreamPage>;
}

/** What a long poll on a run's history answered: its length, and whether that was the end of a running run. */
export interface PollNews {
  historyLength: number;
  /** A last page without the run's close: the run still ran, and this length stands in for describe. */
  last: boolean;
}

/**
 * Where a transport may learn that a run's history grew besides its own long poll: from the process
 * polling for all (the broker's, see BrokerPollShare), or from `poll()`, which this process then runs
 * for the others. Resolves with news past `known` events, or undefined after a while without any.
 */
export interface PollShare {
  wait(runId: string, known: number, poll: () => Promise<PollNews | undefined>, signal?: AbortSignal): Promise<PollNews | undefined>;
  /** The latest news of the workflow's latest run polled for all (absent: none, or not known here). */
  latest?(): Promise<{ runId: string; news: PollNews } | undefined>;
  /** This process follows the run no more: another polls from now on. */
  close?(): void;
}

/** History events per page while finding the end (small pages: the server warns past a few hundred). */
const PAGE = 200;

/** How long a stream query may go unanswered before it is asked again (a query answers in ~10 ms). */
export const QUERY_HEDGE_MS = 250;

/**
 * `ask()`, and once more if it has not settled within `ms`: the first to succeed wins, and it fails only
 * when both fail, with the first ask's failure (the query's own: a run with no worker holds one query and
 * refuses another "for now" at once, so the second ask's failure names the wrong cause). Once it settles
 * the other ask is cancelled (its signal aborts): a query left waiting on the server held up the run's
 * next update when a worker came (by 30 s on a dev server). A failure once `ended()` says the caller's
 * bound passed ends it at once: the other ask cannot answer in time either (its deadline, the same, was
 * seen to end up to 0.7 s late on a dev server). So does a first failure `conclusive` says the second ask
 * shares: the server's query timeout, after which the second, queued behind the first, timed out ~30 s
 * later still (a read of a run with no worker took 61 s instead of 30).
 */
export function hedged<T>(
  ask: (cancel: AbortSignal) => Promise<T>,
  ms: number,
  ended: () => boolean = () => false,
  conclusive: (err: unknown) => boolean = () => false,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let failures = 0;
    const errors = new Map<number, unknown>();
    const asks: AbortController[] = [];
    let settled = false;
    const settle = (): void => {
      settled = true;
      clearTimeout(timer);
      for (const c of asks) c.abort();
    };
    const start = (which: number): void => {
      const cancel = new AbortController();
      asks.push(cancel);
      ask(cancel.signal).then(
        (v) => {
          if (settled) return;
          settle();
          resolve(v);
        },
        (err: unknown) => {
          if (settled) return;
          errors.set(which, err);
          if (++failures === asks.length || ended() || (which === 0 && conclusive(err))) {
            settle();
            reject(errors.has(0) ? errors.get(0) : err);
          }
        },
      );
    };
    const timer = setTimeout(() => {
      if (!settled && failures === 0) start(1);
    }, ms);
    start(0);
  });
}

/** The last stream query's answer, and the history length of the run it was asked of. */
interface LastRead {
  runId: string;
  historyLength: number;
  from: number;
  page: StreamPage;
}

/** What a long poll on the history showed: the run's length then, while it was still running. */
interface Polled {
  runId: string;
  historyLength: number;
}

export class TemporalStreamTransport implements StreamTransport {
  private waiter: { runId: string; token?: Uint8Array | null; ready: boolean } | undefined;
  private lastRead: LastRead | undefined;
  /** Set by a long poll that woke, taken by the next snapshot: it stands in for describe there. */
  private polled: Polled | undefined;
  /** The pending calls' live events as the last describe of this run showed them. */
  private lastLive: { runId: string; live: Map<string, LiveStreamDetails> } | undefined;

  constructor(
    private readonly client: Client,
    private readonly workflowId: string,
    /** Pages shared with the run's readers in other processes (through the broker); absent: each asks. */
    private readonly pages?: PageShare,
    /** The history's long poll shared with them the same way; absent: each polls. */
    private readonly polls?: PollShare,
  ) {}

  async snapshot(from: number): Promise<StreamSnapshot> {
    const polled = this.polled ?? (this.lastRead ? undefined : await this.sharedStart());
    this.polled = undefined;
    if (polled) return this.snapshotPolled(polled, from);
    const described = await this.client.workflow.getHandle(this.workflowId).describe();
    const runId = described.runId;
    const status = described.status.name;
    const page = this.unchangedPage(runId, described.historyLength, from) ?? (await this.readAt(runId, described.historyLength, from));
    const live = new Map<string, LiveStreamDetails>();
    for (const a of described.raw.pendingActivities ?? []) {
      const payloads = a.heartbeatDetails?.payloads;
      if (!payloads?.length) continue;
      try {
        const details = await decodeFromPayloadsAtIndex(this.client.options.loadedDataConverter, 0, payloads);
        if (isLiveStreamDetails(details)) live.set(details.callId, details);
      } catch {
        // details a tool wrote for itself: not ours
      }
    }
    this.lastLive = { runId, live };
    return { runId, running: status === 'RUNNING', continued: status === 'CONTINUED_AS_NEW', page, live };
  }

  /**
   * The snapshot right after a long poll woke, without describe: the poll's own answer says the run
   * was still running and how long its history was, which is all describe told besides the heartbeat
   * details. Why: a reader learns of a new call here (the workflow task that schedules it completed),
   * and with five processes each asking describe and then the stream query at that moment, each took
   * 30-60 ms on two cores: the turn's first delta reached 500 readers in 5 processes 74-95 ms after
   * the model's, through the broker (the watchers bench). The live events are those the last describe
   * showed (a call that just started has none yet; the next poll, or the broker, brings the rest).
   */
  private async snapshotPolled(polled: Polled, from: number): Promise<StreamSnapshot> {
    const { runId, historyLength } = polled;
    const page = this.unchangedPage(runId, historyLength, from) ?? (await this.readAt(runId, historyLength, from));
    const live = this.lastLive?.runId === runId ? this.lastLive.live : new Map<string, LiveStreamDetails>();
    return { runId, running: true, continued: false, page, live: new Map(live) };
  }

  /**
   * A reader's first snapshot in this process, without describe when the run's readers in other
   * processes share their long poll: its latest answer names the run and its length, if the run was
   * still running then. A length that is behind by now only means the page is read again sooner (news
   * past it is already there).
   */
  private async sharedStart(): Promise<Polled | undefined> {
    const latest = await this.polls?.latest?.().catch(() => undefined);
    return latest?.news.last ? { runId: latest.runId, historyLength: latest.news.historyLength } : undefined;
  }

  /**
   * Keeps what a long poll's answer says of the run, for the next snapshot: only a last page (a full one
   * may stop before the end) without the run's close (a closed run is described: how it ended matters).
   */
  private notePolled(runId: string, news: PollNews | undefined): void {
    this.polled = news?.last ? { runId, historyLength: news.historyLength } : undefined;
  }

  /**
   * The page from `from`, without asking the workflow, when its history did not grow since the last
   * query: the stream changes only in workflow tasks, and each adds events to the history (describe was
   * asked before that query, so the length kept is never newer than the state it answered from). While
   * a call streams, a reader polls describe for the live deltas every 100 ms; the stream query, which
   * the worker answers, was asked on each poll too, and is now asked only when something happened.
   */
  private unchangedPage(runId: string, historyLength: number, from: number): StreamPage | undefined {
    const last = this.lastRead;
    if (!last || last.runId !== runId || last.historyLength !== historyLength) return undefined;
    return pageFrom(last.page, last.from, from);
  }

  private async readAt(runId: string, historyLength: number, from: number): Promise<StreamPage> {
    const ask = () => this.read(this.client.workflow.getHandle(this.workflowId, runId), from);
    const page = await (this.pages ? this.pages.read(runId, historyLength, from, ask) : ask());
    this.lastRead = { runId, historyLength, from, page };
    return page;
  }

  subAgent(workflowId: string): { transport: StreamTransport; started(): Promise<boolean> } {
    const handle = this.client.workflow.getHandle(workflowId);
    return {
      transport: new TemporalStreamTransport(this.client, workflowId),
      started: () =>
        handle.describe().then(
          () => true,
          (err: unknown) => {
            if (err instanceof WorkflowNotFoundError) return false;
            throw err;
          },
        ),
    };
  }

  readRun(runId: string, from: number): Promise<StreamPage> {
    return this.read(this.client.workflow.getHandle(this.workflowId, runId), from);
  }

  async previousRun(runId: string): Promise<string | undefined> {
    const res = await this.client.workflowService.getWorkflowExecutionHistory({
      namespace: this.client.options.namespace,
      execution: { workflowId: this.workflowId, runId },
      maximumPageSize: 1,
    });
    return res.history?.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
  }

  /**
   * The stream query, asked again if the first has no answer within QUERY_HEDGE_MS (the first answer
   * wins). Why: two queries reaching one workflow at once (readers in different processes) can leave
   * one of them unanswered until the workflow's next task, a second or more later; measured with two
   * readers, the turn's first delta reached one of them 1.4 s late. A query asked again then is answered
   * at once. A query only reads, so asking twice is harmless.
   */
  private read(handle: WorkflowHandle, from: number): Promise<StreamPage> {
    return hedged((cancel) => underSignal(this.client, cancel, () => handle.query(streamReadQuery, { from })), QUERY_HEDGE_MS, () => waitBounds(this.client, {}).ended() !== undefined, isQueryTimeout);
  }

  async waitForChange(runId: string, signal?: AbortSignal): Promise<void> {
    const service = this.client.workflowService;
    const namespace = this.client.options.namespace;
    if (this.waiter?.runId !== runId) this.waiter = { runId, ready: false };
    const w = this.waiter;
    const call = (token: Uint8Array | null | undefined, wait: boolean) =>
      service.getWorkflowExecutionHistory({
        namespace,
        execution: { workflowId: this.workflowId, runId },
        ...(token ? { nextPageToken: token } : {}),
        waitNewEvent: wait,
        maximumPageSize: PAGE,
      });
    // Page to the end first (pages come back at once while there are events): waiting starts from the
    // history as it is now. A short page is the last one.
    const toEnd = async (): Promise<PollNews | undefined> => {
      let res = await call(undefined, true);
      while (res.nextPageToken?.length && (res.history?.events?.length ?? 0) >= PAGE) res = await call((w.token = res.nextPageToken), true);
      w.token = res.nextPageToken?.length ? res.nextPageToken : null;
      w.ready = true;
      return newsOf(res.history?.events);
    };
    const poll = async (): Promise<PollNews | undefined> => {
      if (!w.ready) return toEnd(); // the caller reads once more before it really waits
      // The long poll itself is cancelled when the reader stops (not left running behind it: an abandoned
      // call would outlive the reader and fail once its connection closes).
      const token = w.token;
      if (!token) return undefined; // a poll of this process's, earlier, found the run closed
      const res = signal
        ? await linkedSignal(signal, (one) => this.client.withAbortSignal(one, () => call(token, true))).catch((err: unknown) => {
            if (signal.aborted) return undefined;
            throw err;
          })
        : await call(token, true);
      if (res && res.nextPageToken?.length) w.token = res.nextPageToken;
      else if (res) w.token = null;
      return newsOf(res?.history?.events);
    };
    if (w.ready && !w.token) {
      await sleep(500, signal); // a closed run: nothing to wait on
      return;
    }
    if (!this.polls) {
      this.notePolled(runId, await poll());
      return;
    }
    // Shared: what this process last read is what it knows, and news past it wakes it. Only a process
    // that polls for the others pages to the end first.
    const known = this.lastRead?.runId === runId ? this.lastRead.historyLength : 0;
    this.notePolled(runId, await this.polls.wait(runId, known, poll, signal));
  }

  /** This process reads the run no more: the shared poll goes to another. */
  close(): void {
    this.polls?.close?.();
  }
}

/** What a long poll's answer says of the run: its length (the last event's id), and whether it ended a running run's history. */
function newsOf(events: HistoryEvent[] | null | undefined): PollNews | undefined {
  if (!events?.length) return undefined;
  const historyLength = Number(events[events.length - 1]!.eventId);
  if (!Number.isSafeInteger(historyLength) || historyLength <= 0) return undefined;
  return { historyLength, last: events.length < PAGE && !events.some(closesRun) };
}

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** The events a run's history ends with when the run closed (completed, failed, continued as new, ...). */
function closesRun(e: HistoryEvent): boolean {
  return Boolean(
    e.workflowExecutionCompletedEventAttributes ||
      e.workflowExecutionFailedEventAttributes ||
      e.workflowExecutionTimedOutEventAttributes ||
      e.workflowExecutionCanceledEventAttributes ||
      e.workflowExecutionTerminatedEventAttributes ||
      e.workflowExecutionContinuedAsNewEventAttributes,
  );
}

/**
 * Runs `fn` with a signal of its own that `outer` aborts. The connection adds an abort listener for each
 * call to the signal it is given and never removes it; on a reader's long-lived signal those piled up,
 * one per long poll (MaxListenersExceededWarning after ten). Here each call's listener dies with its signal.
 */
async function linkedSignal<T>(outer: AbortSignal, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const inner = new AbortController();
  const off = onAbort(outer, () => inner.abort());
  try {
    return await fn(inner.signal);
  } finally {
    off();
  }
}

/** A pause that ends early when `signal` aborts: wait-bounds' `pause`, whose timer is cleared then too. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return pause(ms, undefined, signal ? [signal] : []);
}

/**
 * `p`, or undefined as soon as `signal` aborts (unregistered either way). Twenty readers given one signal
 * share one listener on it (abort-listeners.ts), not twenty.
 */
export async function untilAborted<T>(p: Promise<T>, signal?: AbortSignal): Promise<T | undefined> {
  if (!signal) return p;
  if (signal.aborted) return undefined;
  let off: () => void = () => undefined;
  const aborted = new Promise<undefined>((resolve) => {
    off = onAbort(signal, () => resolve(undefined));
  });
  try {
    return await Promise.race([p, aborted]);
  } finally {
    off();
  }
}
