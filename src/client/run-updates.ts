/**
 * Updates to an agent run (a prompt, a decision on a waiting tool call) under the caller's bound: its own
 * `timeoutMs` / `signal`, and the client's call context (`client.withDeadline`, `client.withAbortSignal`).
 * Without one, a prompt to a run no worker serves waited for ever; under the client's call context alone it
 * ended with a bare gRPC error. At the bound it is RunWaitEndedError, naming the update id to reattach with.
 */
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { UpdateDefinition } from '@temporalio/common';
import { FabricError } from '../core/errors';
import { typedFailure } from '../wire/failures';
import { checkWaitLimits } from './call-options';
import { idleQueueOutside } from './query-retries';
import { RunReadEndedError, runAgentQuery } from './run-queries';
import { underBounds, waitBounds, type WaitLimits } from './wait-bounds';

/**
 * The caller stopped waiting for an agent run to take an update. Nothing is withdrawn: the server holds
 * the update for the run, and a worker that comes runs it. Send it again with the same `updateId` (and the
 * same text) to get its answer; a new one would run it twice.
 */
export class RunWaitEndedError extends FabricError {
  constructor(
    readonly workflowId: string,
    readonly updateId: string,
    readonly reason: 'timeout' | 'aborted',
    readonly noWorker: { taskQueue: string } | undefined,
    /** false: the wait ended in a read made before the update (a promptStream's position), so nothing was sent. */
    readonly sent: boolean = true,
  ) {
    const why = `stopped waiting (${reason === 'timeout' ? 'the deadline passed' : 'the call was aborted'})`;
    const idle = noWorker ? `; no worker is polling task queue ${noWorker.taskQueue}` : '';
    super(
      'WAIT_ENDED',
      sent
        ? `run ${workflowId}: ${why} before the run took update ${updateId}${idle}. It is not withdrawn: send it again with { updateId: '${updateId}' } to get its answer; a new one would run it twice`
        : `run ${workflowId}: ${why} before the run answered where its stream stands${idle}. Nothing was sent (update ${updateId} was not)`,
    );
  }
}

export interface RunUpdateCall<Ret, Args extends unknown[]> {
  client: Client;
  handle: WorkflowHandle;
  def: UpdateDefinition<Ret, Args>;
  args: Args;
  updateId: string;
  limits: WaitLimits;
}

/** Sends the update and waits for its result within the caller's bound; a refusal is our typed error. */
export async function runAgentUpdate<Ret, Args extends unknown[]>(call: RunUpdateCall<Ret, Args>): Promise<Ret> {
  const { client, handle, def, args, updateId, limits } = call;
  checkWaitLimits(limits, 'wait options');
  const bounds = waitBounds(client, limits);
  try {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the SDK overloads on the argument tuple's length
    return await underBounds(client, bounds, () => handle.executeUpdate(def as any, { args: args as any, updateId }));
  } catch (err) {
    const why = bounds.ended();
    if (!why) throw typedFailure(err);
    const ended = new RunWaitEndedError(handle.workflowId, updateId, why, await idleQueueOutside(client, handle));
    (ended as { cause?: unknown }).cause = err;
    throw ended;
  }
}

/**
 * A read made before an update is sent (where a promptStream's stream stands, a query) within the update's
 * bound: with no worker the query would wait the server's ~29 s whatever the caller's bound said. At the
 * bound it is RunWaitEndedError with `sent: false`; without one, no worker polling is NO_WORKER (RunNoWorkerError).
 */
export async function readBeforeUpdate<T>(client: Client, handle: WorkflowHandle, updateId: string, limits: WaitLimits, read: () => Promise<T>): Promise<T> {
  const bounds = waitBounds(client, limits);
  try {
    return await underBounds(client, bounds, () => runAgentQuery(client, handle, read));
  } catch (err) {
    const why = bounds.ended();
    if (!why) throw err;
    const noWorker = err instanceof RunReadEndedError ? err.noWorker : await idleQueueOutside(client, handle);
    const ended = new RunWaitEndedError(handle.workflowId, updateId, why, noWorker, false);
    (ended as { cause?: unknown }).cause = err;
    throw ended;
  }
}
