/**
 * Terminating a run (Temporal terminate): the way to end a run no worker can serve, where a close
 * request or a prompt would wait forever (an agent no worker has, a task that keeps failing).
 */
import { WorkflowNotFoundError, type Client, type WorkflowHandle } from '@temporalio/client';
import { FabricError } from '../core/errors';

/** No run has this workflow id in the namespace. */
export class RunNotFoundError extends FabricError {
  declare readonly code: 'RUN_NOT_FOUND';
  constructor(readonly workflowId: string) {
    super('RUN_NOT_FOUND', `No run '${workflowId}' in this namespace.`);
  }
}

/** The run has ended already (completed, failed, terminated, …): there is nothing to terminate. */
export class RunClosedError extends FabricError {
  declare readonly code: 'RUN_CLOSED';
  constructor(
    readonly workflowId: string,
    readonly status: string,
  ) {
    super('RUN_CLOSED', `Run '${workflowId}' has already ended (${status}): there is nothing to terminate.`);
  }
}

/** Terminates the run's current execution with `reason` (in its history); resolves to the run id it ended. */
export async function terminateRun(client: Client, workflowId: string, reason: string): Promise<{ runId: string }> {
  const handle = client.workflow.getHandle(workflowId);
  const { status, runId } = await currentRun(handle);
  if (status !== 'RUNNING') throw new RunClosedError(workflowId, status);
  try {
    await client.workflow.getHandle(workflowId, runId).terminate(reason);
    return { runId };
  } catch (err) {
    // It ended between the look and the terminate: say how.
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    const now = await currentRun(handle);
    throw now.status === 'RUNNING' ? err : new RunClosedError(workflowId, now.status);
  }
}

async function currentRun(handle: WorkflowHandle): Promise<{ status: string; runId: string }> {
  try {
    const d = await handle.describe();
    return { status: d.status.name, runId: d.runId };
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw new RunNotFoundError(handle.workflowId);
    throw err;
  }
}
