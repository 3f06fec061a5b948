import type { Client } from '@temporalio/client';
import { decodedText, StoreReferences, sweepStore, type SweepReport } from '../activities/store-gc';

export interface CollectGarbageOptions {
  /** The file store's directory. */
  dir: string;
  /** Keep unreferenced blobs younger than this: a running activity may have stored one its history does not show yet. */
  olderThanMs: number;
  dryRun?: boolean;
}

export interface CollectGarbageReport extends SweepReport {
  histories: number;
  /** Runs listed by visibility whose history was gone by the time it was fetched. */
  vanished: number;
}

/**
 * Mark and sweep: every blob a history of the namespace refers to (open runs, and closed runs it still
 * retains) is kept, with the transcript segments it chains to; the rest, once past the grace period, goes.
 */
export async function collectStoreGarbage(client: Client, opts: CollectGarbageOptions): Promise<CollectGarbageReport> {
  const refs = new StoreReferences();
  let histories = 0;
  let vanished = 0;
  for await (const wf of client.workflow.list()) {
    try {
      const history = await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
      refs.addText(decodedText(history));
      histories++;
    } catch (err) {
      if (isNotFound(err)) vanished++;
      else throw err;
    }
  }
  const report = await sweepStore(refs, { dir: opts.dir, olderThanMs: opts.olderThanMs, dryRun: opts.dryRun ?? false });
  return { ...report, histories, vanished };
}

function isNotFound(err: unknown): boolean {
  return (err as Error)?.name === 'WorkflowNotFoundError' || (err as { code?: number })?.code === 5;
}
