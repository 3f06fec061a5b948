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
import { retryQuery } from './query-retries';

/** No worker polls the run's task queue, so nothing can answer a read of it now. Nothing changed; ask again when one polls. */
export class RunNoWorkerError extends FabricError {
  constructor(
    readonly workflowId: string,
    readonly taskQueue: string | undefined,
  ) {
    super('NO_WORKER', `run ${workflowId}: no worker is polling ${taskQueue ? `task queue ${taskQueue}` : "the run's task queue"}, so nothing can answer it now; start one (\`fh worker --agents <module>${taskQueue ? ` --task-queue ${taskQueue}` : ''}\`) and ask again`);
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
 * bare gRPC one. The same loop as a session's reads (runSessionQuery), without a session's steps: a run has
 * no conversation to restore and no continue-as-new to follow.
 */
export async function runAgentQuery<T>(client: Client, handle: WorkflowHandle, read: () => Promise<T>): Promise<T> {
  return retryQuery(read, {
    client,
    handle,
    waitEnded: (why, noWorker) => new RunReadEndedError(handle.workflowId, why, noWorker),
    noWorker: (taskQueue) => new RunNoWorkerError(handle.workflowId, taskQueue),
    typed: typedFailure,
  });
}
