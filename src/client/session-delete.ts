/**
 * Deleting a session (`SessionHandle.delete`): its worktree ended first, every run of its workflow
 * deleted, the server waited for, and with `store` the blobs nothing else references swept.
 */
import { randomUUID } from 'node:crypto';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { FabricError } from '../core/errors';
import { SessionNotFoundError } from '../core/sessions/host-errors';
import { parseWith } from '../core/validate';
import { collectableStore } from '../activities/stores/store-gc';
import { endSessionUpdate } from '../wire/session-messages';
import { collectStoreGarbage, type CollectGarbageReport } from './collect-garbage';
import { runSessionUpdate } from './session-updates';
import { WORKTREE_MEMO_KEY } from './session-plan';
import { deleteOptionsSchema, type DeleteOptions } from './session-options';

/** The grace period of `delete({ store })` for blobs no history shows yet (a running activity's). */
const DELETE_GRACE_MS = 60_000;

export async function deleteSession(client: Client, handle: WorkflowHandle, id: string, options: DeleteOptions): Promise<{ runs: number; garbage?: CollectGarbageReport }> {
  // Bad options fail before anything is ended or deleted: a misspelt key, a `waitMs` that is not a
  // number (the wait would have no bound), a grace period that is not a number, a store that cannot be swept.
  parseWith(deleteOptionsSchema, options, 'delete options');
  if (options.store) collectableStore(options.store);
  await endWorktree(client, handle, id, options.deleteBranch === true);
  const ns = client.options.namespace;
  let runs = 0;
  // The running run is deleted as it is terminated (fast); closed ones by a background task.
  for await (const wf of client.workflow.list({ query: `WorkflowId = '${id}'` })) {
    try {
      await client.workflowService.deleteWorkflowExecution({ namespace: ns, workflowExecution: { workflowId: wf.workflowId, runId: wf.runId } });
      runs++;
    } catch (err) {
      if ((err as { code?: number }).code !== 5) throw err; // already gone
    }
  }
  if (runs === 0) throw new SessionNotFoundError(id);
  if (options.wait === false && !options.store) return { runs };
  await waitGone(client, id, options.waitMs ?? 120_000);
  if (!options.store) return { runs };
  const garbage = await collectStoreGarbage(client, { ...options.store, olderThanMs: options.store.olderThanMs ?? DELETE_GRACE_MS });
  return { runs, garbage };
}

/** A running session with a worktree is ended first: its worker commits the changes and removes the worktree. */
async function endWorktree(client: Client, handle: WorkflowHandle, id: string, deleteBranch: boolean): Promise<void> {
  const desc = await handle.describe().catch(() => undefined);
  if (!desc || desc.status.name !== 'RUNNING' || desc.memo?.[WORKTREE_MEMO_KEY] !== true) return;
  const args: [{ deleting: true; deleteBranch?: boolean }] = [{ deleting: true, ...(deleteBranch ? { deleteBranch } : {}) }];
  await runSessionUpdate({ client, handle, sessionId: id, def: endSessionUpdate, args, updateId: randomUUID() }).catch((err: unknown) => {
    if (!(err instanceof FabricError && (err.code === 'SESSION_CLOSED' || err.code === 'SESSION_NOT_FOUND'))) throw err;
  });
}

/** Deletion is asynchronous on the server: wait until visibility lists no run of this session. */
async function waitGone(client: Client, id: string, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    let left = 0;
    for await (const _ of client.workflow.list({ query: `WorkflowId = '${id}'` })) left++;
    if (left === 0) return;
    if (Date.now() > deadline) throw new FabricError('DELETE_PENDING', `session ${id}: the server has not finished deleting ${left} run(s) after ${ms} ms; they will go`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
