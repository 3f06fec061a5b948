import type { Client } from '@temporalio/client';
import { collectableStore, decodedText, StoreReferences, sweepStore, type SweepReport } from '../activities/stores/store-gc';
import type { TranscriptStore } from '../activities/stores/transcript-store';

export interface CollectGarbageOptions {
  /** The workers' store; it must list and delete (FileTranscriptStore, S3Store). Or `dir`. */
  store?: TranscriptStore;
  /** A file store's directory (instead of `store`). */
  dir?: string;
  /** Keep unreferenced blobs younger than this: a running activity may have stored one its history does not show yet. */
  olderThanMs: number;
  dryRun?: boolean;
}

export interface CollectGarbageReport extends SweepReport {
  histories: number;
  /** Runs listed by visibility whose history was gone by the time it was fetched. */
  vanished: number;
  /** Wall time of the mark (histories) and sweep (store) phases. */
  markMs: number;
  sweepMs: number;
}

/**
 * Mark and sweep: every blob a history of the namespace refers to (open runs, and closed runs it still
 * retains) is kept, with the transcript segments it chains to; the rest, once past the grace period, goes.
 * A run deleted (by hand, or by the namespace retention) stops protecting its blobs.
 */
export async function collectStoreGarbage(client: Client, opts: CollectGarbageOptions): Promise<CollectGarbageReport> {
  const store = collectableStore(opts); // a bad store fails before any history is read
  const refs = new StoreReferences();
  let histories = 0;
  let vanished = 0;
  const t0 = Date.now();
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
  const t1 = Date.now();
  const report = await sweepStore(refs, { store, olderThanMs: opts.olderThanMs, dryRun: opts.dryRun ?? false });
  return { ...report, histories, vanished, markMs: t1 - t0, sweepMs: Date.now() - t1 };
}

function isNotFound(err: unknown): boolean {
  return (err as Error)?.name === 'WorkflowNotFoundError' || (err as { code?: number })?.code === 5;
}
