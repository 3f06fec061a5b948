/**
 * Reads of an agent run (its queries: entries, usage, events, the context budget, …), typed. A query only
 * a worker answers: with none polling the run's task queue the server refuses it ("no poller seen") or
 * gives up after about half a minute, and the caller's own bound (`client.withDeadline`,
 * `client.withAbortSignal`) cuts it. Each of those reached the caller as a bare gRPC error; a session's
 * reads were typed (runSessionQuery), a run's were not.
 */
import type { Client, WorkflowHandle } from '@temporalio/client';
import { FabricError } from '../core/errors';
import { typedFailure } from '../wire/failures';
import {
  describeQuietly,
  idleQueue,
  idleQueueOutside,
  isCallCancelled,
  isNoPoller,
  isQueryRefusedForNow,
  isQueryTimeout,
  MAX_QUERY_REFUSALS,
  MAX_QUERY_TIMEOUTS,
  withCause,
} from './session-updates';
import { pause, waitBounds } from './wait-bounds';

/** No worker polls the run's task queue, so nothing can answer a read of it now. Nothing changed; ask again when one polls. */
export class RunNoWorkerError extends FabricError {
  constructor(
    readonly workflowId: string,
    readonly taskQueue: string | undefined,
  ) {
    super('NO_WORKER', `run ${workflowId}: no worker is polling ${taskQueue ? `task queue ${taskQueue}` : "the run's task queue"}, so nothing can answer it now; start one (fh worker) and ask again`);
  }
}

/** The caller's deadline or abort signal ended a read of a run before a worker answered it. Nothing changed. */
export class RunReadEndedError extends FabricError {
  constructor(
    readonly workflowId: string,
    readonly reason: 'timeout' | 'aborted',
    readonly noWorker: { taskQueue: string } | undefined,
  ) {
    super(
      'WAIT_ENDED',
      `run ${workflowId}: stopped waiting (${reason === 'timeout' ? 'the deadline passed' : 'the call was aborted'}) before the run answered` +
        (noWorker ? `; no worker is polling task queue ${noWorker.taskQueue}` : ''),
    );
  }
}

/**
 * A query of the run: a failure is NO_WORKER, WAIT_ENDED (the caller's bound) or our typed error, never a
 * bare gRPC one. As a session's reads (runSessionQuery): a query the server gave up on while a worker polls
 * is asked again, and so is one it refused for now (with no worker, it buffers one query per run and
 * refuses the others), each pause ending at the caller's bound.
 */
export async function runAgentQuery<T>(client: Client, handle: WorkflowHandle, read: () => Promise<T>): Promise<T> {
  for (let timeouts = 0, refused = 0; ; ) {
    try {
      return await read();
    } catch (err) {
      // Read here, not before the query: still the caller's context, and most reads never fail.
      const bounds = waitBounds(client, {});
      const why = bounds.ended();
      if (why === 'aborted' || (why && (isQueryTimeout(err) || isCallCancelled(err)))) throw withCause(new RunReadEndedError(handle.workflowId, why, await idleQueueOutside(client, handle)), err);
      // The server gave up waiting for a worker to take it: asked again while one polls (a busy worker).
      if (isQueryTimeout(err) && timeouts++ < MAX_QUERY_TIMEOUTS) {
        const idle = await idleQueue(handle);
        if (!idle) continue;
        throw withCause(new RunNoWorkerError(handle.workflowId, idle.taskQueue), err);
      }
      if (isQueryRefusedForNow(err) && refused < MAX_QUERY_REFUSALS) {
        refused += 1;
        await pause(Math.min(100 * refused, 1_000), bounds.deadline, bounds.signals);
        continue;
      }
      throw await typedReadError(handle, err);
    }
  }
}

/** The last word on a failed read: the server's "no poller seen" is NO_WORKER; anything else, the run's typed failure or the server's error. */
async function typedReadError(handle: WorkflowHandle, err: unknown): Promise<unknown> {
  if (isNoPoller(err)) return withCause(new RunNoWorkerError(handle.workflowId, (await describeQuietly(handle).catch(() => undefined))?.taskQueue || undefined), err);
  return typedFailure(err);
}
