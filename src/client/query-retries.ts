/**
 * A query only a worker answers (a session's reads, an agent run's): how its failures read, and the one
 * loop that decides which are asked again. With no worker polling, the server refuses a query ("no poller
 * seen") or gives up after about half a minute; the caller's bound (`client.withDeadline`,
 * `client.withAbortSignal`) cuts it. A session's reads (runSessionQuery) and a run's (runAgentQuery) each
 * had a copy of the loop; this is the one both run, each with its own errors. It sits below both.
 */
import type { WorkflowHandle } from '@temporalio/client';
import { callContextStorage, pause, waitBounds, type CallContextClient } from './wait-bounds';

/** Query timeouts asked again before the error is the caller's (each one is the server's query deadline). */
export const MAX_QUERY_TIMEOUTS = 3;
/** Refusals for now asked again before the error is the caller's (with backoff, about 25 s in all). */
export const MAX_QUERY_REFUSALS = 30;

/**
 * One more check of a failed ask, for what only one kind of query meets (a session's restoring run, its
 * run gone under it). True: it waited (with `wait`, which ends at the caller's bound) and the query is
 * asked again. False: the next check decides. An error it throws is the caller's.
 */
export type QueryStep = (err: unknown, at: { wait: (ms: number) => Promise<void> }) => Promise<boolean>;

export interface QueryRetries {
  /** Whose call context bounds the query and the probe of its queue (a run's client, a session handle's). */
  client: CallContextClient;
  handle: WorkflowHandle;
  /** WAIT_ENDED: the caller's bound ended it; `noWorker` when no worker polls the queue. */
  waitEnded: (why: 'timeout' | 'aborted', noWorker: { taskQueue: string } | undefined) => Error;
  /** NO_WORKER: nothing polls the queue (named when it could be read). */
  noWorker: (taskQueue: string | undefined) => Error;
  /** The last word on any other failure: our typed error, or the server's own. */
  typed: (err: unknown) => unknown;
  /** Checked after the query timeouts, before the refusals (the order the session's loop always had). */
  afterTimeouts?: QueryStep;
  /** Checked after "no poller", before the last word. */
  beforeTyped?: QueryStep;
}

/**
 * Asks `query` until it answers or fails for good: a failure is WAIT_ENDED (the caller's bound), NO_WORKER
 * or `typed`'s error, never a bare gRPC one. A query the server gave up on while a worker polls is asked
 * again, and so is one it refused for now (with no worker, it buffers one query per run and refuses the
 * others), each pause ending at the caller's bound.
 */
export async function retryQuery<T>(query: () => Promise<T>, opts: QueryRetries): Promise<T> {
  const { client, handle } = opts;
  // Each limit counts its own kind of failure (a step keeps its own count): one shared counter let
  // refusals and restoring waits use up the run hops of a session's query.
  for (let timeouts = 0, refused = 0; ; ) {
    try {
      return await query();
    } catch (err) {
      // Read here, not before the first ask: still the caller's context, and most reads never fail.
      const bounds = waitBounds(client, {});
      const why = bounds.ended();
      // A deadline ends the call either way: the server's DEADLINE_EXCEEDED, or the client cancelling it first.
      if (why === 'aborted' || (why && (isQueryTimeout(err) || isCallCancelled(err)))) throw withCause(opts.waitEnded(why, await idleQueueOutside(client, handle)), err);
      // Each pause below ends early at the caller's bound: the next ask then fails at once and ends the read.
      const at = { wait: (ms: number) => pause(ms, bounds.deadline, bounds.signals) };
      // The server gave up before a worker took it (a busy worker, or a run between two at a
      // continue-as-new): asked again while a worker polls; with none polling it is NO_WORKER.
      if (isQueryTimeout(err) && timeouts++ < MAX_QUERY_TIMEOUTS) {
        const idle = await idleQueue(handle);
        if (!idle) continue;
        throw withCause(opts.noWorker(idle.taskQueue), err);
      }
      if (opts.afterTimeouts && (await opts.afterTimeouts(err, at))) continue;
      // Refused for now (its one-query buffer was full through all of the SDK's retries, or the run had
      // no workflow task to answer it yet): asked again with backoff.
      if (isQueryRefusedForNow(err) && refused < MAX_QUERY_REFUSALS) {
        refused += 1;
        await at.wait(Math.min(100 * refused, 1_000));
        continue;
      }
      if (isNoPoller(err)) throw withCause(opts.noWorker((await describeQuietly(handle).catch(() => undefined))?.taskQueue || undefined), err);
      if (opts.beforeTyped && (await opts.beforeTyped(err, at))) continue;
      throw opts.typed(err);
    }
  }
}

/**
 * A query the server refused for now, anywhere in the cause chain: RESOURCE_EXHAUSTED (a run buffers one
 * query while a workflow task is in flight, and the SDK's retries ran out while many callers asked), or
 * FAILED_PRECONDITION "workflow not ready" (the run has no workflow task yet, or its task is being retried).
 */
export function isQueryRefusedForNow(err: unknown): boolean {
  return someCause(err, 5, (e) => {
    const text = `${String(e.details ?? '')} ${String(e.message ?? '')}`;
    return e.code === 8 || (e.code === 9 && /not scheduled yet|workflow task in failed state/i.test(text)) || (e.code === 14 && /buffered query cleared/i.test(text));
  });
}

type ErrorLink = { code?: unknown; details?: unknown; message?: unknown; cause?: unknown };

/** Whether `test` holds for the error or one of its first `depth` links down the `cause` chain. */
export function someCause(err: unknown, depth: number, test: (e: ErrorLink) => boolean): boolean {
  for (let e = err as ErrorLink | undefined, d = 0; e && d < depth; e = e.cause as ErrorLink | undefined, d++) {
    if (test(e)) return true;
  }
  return false;
}

/** The server's FAILED_PRECONDITION "no poller seen for task queue recently" to a query, anywhere in the cause chain. */
export function isNoPoller(err: unknown): boolean {
  return someCause(err, 5, (e) => e.code === 9 && /no poller seen/i.test(`${String(e.details ?? '')} ${String(e.message ?? '')}`));
}

/** A call the client cancelled (gRPC CANCELLED), anywhere in the cause chain: how a spent deadline sometimes ends it. */
export function isCallCancelled(err: unknown): boolean {
  return someCause(err, 5, (e) => e.code === 1);
}

/** The server's "query timed out before a worker could process it" (gRPC DEADLINE_EXCEEDED), anywhere in the cause chain. */
export function isQueryTimeout(err: unknown): boolean {
  return someCause(err, 5, (e) => e.code === 4 || (typeof e.message === 'string' && e.message.includes('DEADLINE_EXCEEDED')));
}

export function withCause<E extends Error>(e: E, cause: unknown): E {
  (e as { cause?: unknown }).cause = cause;
  return e;
}

/**
 * A run's task queue and its pending workflow task's attempt, read from the service directly: the SDK's
 * own checks (is a worker serving it? does it know the agent?) are not the user's operations, and through
 * the client's interceptors each made a DescribeWorkflow span of its own, a second trace beside the run's.
 */
export async function describeQuietly(handle: WorkflowHandle): Promise<{ taskQueue: string; workflowTaskAttempt: number }> {
  const res = await handle.client.workflowService.describeWorkflowExecution({
    namespace: handle.client.options.namespace,
    execution: { workflowId: handle.workflowId },
  });
  return { taskQueue: res.workflowExecutionInfo?.taskQueue ?? res.executionConfig?.taskQueue?.name ?? '', workflowTaskAttempt: res.pendingWorkflowTask?.attempt ?? 0 };
}

/** The run's task queue when no worker has polled it lately (why a wait can end with no answer). */
export async function idleQueue(handle: WorkflowHandle): Promise<{ taskQueue: string } | undefined> {
  try {
    const { taskQueue } = await describeQuietly(handle);
    const res = await handle.client.workflowService.describeTaskQueue({
      namespace: handle.client.options.namespace,
      taskQueue: { name: taskQueue },
      taskQueueType: 1, // workflow tasks
    });
    return (res.pollers ?? []).length === 0 ? { taskQueue } : undefined;
  } catch {
    return undefined; // a nicety for the message: never hide the real error behind it
  }
}

/** Why nothing answered, asked outside the caller's (spent) deadline with a short one of its own. */
export function idleQueueOutside(client: CallContextClient, handle: WorkflowHandle): Promise<{ taskQueue: string } | undefined> {
  const storage = callContextStorage(client);
  const probe = () => client.withDeadline(Date.now() + 3_000, () => idleQueue(handle));
  return storage ? storage.exit(probe) : probe();
}
