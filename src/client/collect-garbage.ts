import type { Client } from '@temporalio/client';
import { z } from 'zod';
import { parseWith } from '../core/validate';
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
  /**
   * Histories fetched at once while marking, 1 to 64 (default {@link GC_FETCH_CONCURRENCY}). The mark waits
   * on the server, one round trip per history; lower it for a server that rate-limits its reads.
   */
  concurrency?: number;
}

export interface CollectGarbageReport extends SweepReport {
  histories: number;
  /** Runs listed by visibility whose history was gone by the time it was fetched. */
  vanished: number;
  /** Wall time of the mark (histories) and sweep (store) phases. */
  markMs: number;
  sweepMs: number;
}

/** Histories a collection fetches at once by default: on a local dev server this halved the mark. */
export const GC_FETCH_CONCURRENCY = 8;
/** The most a caller may ask for: beyond it a collection only queues on the server. */
export const GC_MAX_FETCH_CONCURRENCY = 64;

/** A grace period: also the `store.olderThanMs` of SessionHandle.delete's options. */
export const gracePeriodSchema = z.number().finite().nonnegative();

/*
 * The scalar options, checked before anything is read or deleted. A grace period that is not a number
 * would compare false against every blob's age and sweep blobs a running activity has just written.
 */
const gcSettingsSchema = z.object({
  olderThanMs: gracePeriodSchema,
  dryRun: z.boolean().optional(),
  concurrency: z.number().int().min(1).max(GC_MAX_FETCH_CONCURRENCY).optional(),
});

/** Throws INVALID_INPUT naming the field when the grace period, `dryRun` or `concurrency` is not usable. */
function checkGarbageOptions(opts: CollectGarbageOptions): void {
  const { olderThanMs, dryRun, concurrency } = opts ?? ({} as CollectGarbageOptions);
  parseWith(gcSettingsSchema, { olderThanMs, dryRun, concurrency }, 'garbage collection options');
}

/**
 * Mark and sweep: every blob a history of the namespace refers to (open runs, and closed runs it still
 * retains) is kept, with the transcript segments it chains to; the rest, once past the grace period, goes.
 * A run deleted (by hand, or by the namespace retention) stops protecting its blobs.
 */
export async function collectStoreGarbage(client: Client, opts: CollectGarbageOptions): Promise<CollectGarbageReport> {
  checkGarbageOptions(opts);
  const store = collectableStore(opts); // a bad store fails before any history is read
  const refs = new StoreReferences();
  const t0 = Date.now();
  const { histories, vanished } = await markHistories(client, refs, opts.concurrency ?? GC_FETCH_CONCURRENCY);
  const t1 = Date.now();
  const report = await sweepStore(refs, { store, olderThanMs: opts.olderThanMs, dryRun: opts.dryRun ?? false });
  return { ...report, histories, vanished, markMs: t1 - t0, sweepMs: Date.now() - t1 };
}

/** Adds what every listed run's history mentions to `refs`, `concurrency` histories in flight at a time. */
async function markHistories(client: Client, refs: StoreReferences, concurrency: number): Promise<{ histories: number; vanished: number }> {
  let histories = 0;
  let vanished = 0;
  const inFlight = new Set<Promise<void>>();
  let failure: { err: unknown } | undefined;
  const mark = async (workflowId: string, runId: string): Promise<void> => {
    try {
      const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
      refs.addText(decodedText(history));
      histories++;
    } catch (err) {
      if (isNotFound(err)) vanished++;
      else failure ??= { err };
    }
  };
  for await (const wf of client.workflow.list()) {
    if (failure) break;
    const p = mark(wf.workflowId, wf.runId).finally(() => inFlight.delete(p));
    inFlight.add(p);
    if (inFlight.size >= concurrency) await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
  if (failure) throw failure.err;
  return { histories, vanished };
}

function isNotFound(err: unknown): boolean {
  return (err as Error)?.name === 'WorkflowNotFoundError' || (err as { code?: number })?.code === 5;
}
