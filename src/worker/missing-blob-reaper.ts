/**
 * Ends a run whose workflow task needs an offloaded payload the store proved absent.
 *
 * Temporal decodes a workflow task's payloads (an activity result, a start/signal/update argument, or any
 * of them again on replay after cache eviction) before any workflow code runs: the task fails with
 * STORE_BLOB_MISSING, and is retried for ever, with the run RUNNING. Nothing in the run can end it, so the
 * worker does, from outside workflow code (no replay risk): the store driver reports each absence with the
 * run its claim names, and this reaper, after a pause (a blob put back meanwhile, a run that moved on),
 * terminates that run only when all of these hold:
 *
 * - the run is in this worker's namespace and still RUNNING;
 * - its latest workflow task outcome in history is a WorkflowTaskFailed whose failure is STORE_BLOB_MISSING
 *   naming this very blob (an activity-input absence fails no workflow task: workflow code answers it);
 * - the task has failed again since (its attempt count is at least `minAttempts`);
 * - the store, asked again, still answers "not found" (a store that does not answer proves nothing);
 * - it is the store the claim says the blob was put in (same location): a worker pointed at another
 *   directory or bucket finds every blob absent, and must not end the runs it picks up for that.
 *
 * The reason starts with `STORE_BLOB_MISSING:`, which clients decode back into that error.
 */
import { defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { NativeConnection } from '@temporalio/worker';
import type { MissingBlob } from '../activities/stores/external-storage';
import type { TranscriptStore } from '../activities/stores/transcript-store';

type WorkflowService = NativeConnection['workflowService'];
type Failure = temporal.api.failure.v1.IFailure;

const { EventType, WorkflowExecutionStatus } = temporal.api.enums.v1;

export interface MissingBlobReaperOptions {
  workflowService: WorkflowService;
  namespace: string;
  store: TranscriptStore;
  identity?: string;
  /** Pause between a reported absence and each look at the run (ms). Default 2000. */
  delayMs?: number;
  /** Looks at a run before giving up on a report (its failed task may not be in history yet). Default 10. */
  maxChecks?: number;
  /** The failed workflow task's attempt count it takes (1: the first failure). Default 2. */
  minAttempts?: number;
  log?: (message: string, attrs: Record<string, unknown>) => void;
}

export type ReapOutcome = 'terminated' | 'left' | 'later';

export class MissingBlobReaper {
  private readonly pending = new Map<string, NodeJS.Timeout>();
  private stopped = false;

  constructor(private readonly options: MissingBlobReaperOptions) {}

  /**
   * A blob the store proved absent: the run its claim names is looked at shortly (once per run and blob
   * at a time). false when it will not be: a claim of another namespace, or a stopped reaper.
   */
  report(missing: MissingBlob): boolean {
    if (this.stopped) return false;
    if (missing.namespace !== undefined && missing.namespace !== this.options.namespace) return false; // never another namespace's run
    const id = `${missing.workflowId}\u0000${missing.runId ?? ''}\u0000${missing.key}`;
    if (!this.pending.has(id)) this.schedule(id, missing, 1);
    return true;
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.pending.values()) clearTimeout(timer);
    this.pending.clear();
  }

  private schedule(id: string, missing: MissingBlob, check: number): void {
    const timer = setTimeout(() => {
      this.check(missing)
        .catch((err): ReapOutcome => {
          this.options.log?.('missing-blob reaper: could not look at the run', { workflowId: missing.workflowId, error: String(err) });
          return 'later';
        })
        .then((outcome) => {
          this.pending.delete(id);
          if (outcome === 'later' && check < (this.options.maxChecks ?? 10) && !this.stopped) this.schedule(id, missing, check + 1);
        });
    }, this.options.delayMs ?? 2_000);
    timer.unref?.();
    this.pending.set(id, timer);
  }

  /** One look at the run: terminates it when every condition of the module comment holds. */
  async check(missing: MissingBlob): Promise<ReapOutcome> {
    const { workflowService: svc, namespace } = this.options;
    const described = await svc.describeWorkflowExecution({ namespace, execution: { workflowId: missing.workflowId, runId: missing.runId ?? '' } });
    const info = described.workflowExecutionInfo;
    if (info?.status !== WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING) return 'left';
    const runId = info.execution?.runId ?? missing.runId ?? '';
    const failure = await lastWorkflowTaskFailure(svc, namespace, missing.workflowId, runId);
    if (failure === 'none') return 'later'; // its failed task is not in history yet, or the run moved on
    if (!namesMissingBlob(failure, missing.key)) return 'left'; // it fails of something else
    if (!missing.storedIn || missing.storedIn !== this.options.store.location) {
      this.options.log?.('missing-blob reaper: the blob was put in another store than this worker reads; not proof it is lost, the run is left to retry', {
        workflowId: missing.workflowId,
        key: missing.key,
        storedIn: missing.storedIn ?? '(not recorded)',
        thisStore: this.options.store.location ?? '(no location)',
      });
      return 'left';
    }
    if ((described.pendingWorkflowTask?.attempt ?? 0) < (this.options.minAttempts ?? 2)) return 'later';
    let bytes: Uint8Array | undefined;
    try {
      bytes = await this.options.store.get(missing.key);
    } catch {
      return 'later'; // the store did not answer: that proves nothing
    }
    if (bytes) return 'later'; // put back: the next attempt of the task carries on
    const reason =
      `STORE_BLOB_MISSING: ${missing.key} (${missing.origin}) is missing from the store ${missing.location}; ` +
      'a workflow task of this run needs it, so the run cannot go on (see docs/deploying.md, When a blob is missing)';
    await svc.terminateWorkflowExecution({
      namespace,
      workflowExecution: { workflowId: missing.workflowId, runId },
      reason,
      identity: this.options.identity ?? 'fabric-harness missing-blob reaper',
      details: { payloads: [defaultPayloadConverter.toPayload({ code: 'STORE_BLOB_MISSING', key: missing.key, location: missing.location, origin: missing.origin, failure: failure.message ?? '' })] },
    });
    this.options.log?.('missing-blob reaper: terminated a run whose workflow task needs a blob the store does not have', { workflowId: missing.workflowId, runId, key: missing.key });
    return 'terminated';
  }
}

const TASK_OUTCOMES = new Set([
  EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
  EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED,
  EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT,
]);

/** The failure of the run's latest workflow task outcome, newest first; 'none' when that outcome is not a failure. */
async function lastWorkflowTaskFailure(svc: WorkflowService, namespace: string, workflowId: string, runId: string): Promise<Failure | 'none'> {
  let nextPageToken: Uint8Array | undefined;
  for (let page = 0; page < 5; page++) {
    const res = await svc.getWorkflowExecutionHistoryReverse({ namespace, execution: { workflowId, runId }, maximumPageSize: 50, nextPageToken });
    for (const event of res.history?.events ?? []) {
      if (event.eventType == null || !TASK_OUTCOMES.has(event.eventType)) continue;
      return event.workflowTaskFailedEventAttributes?.failure ?? 'none';
    }
    if (!res.nextPageToken?.length) break;
    nextPageToken = res.nextPageToken;
  }
  return 'none';
}

/** Whether the failure (or a cause of it) is STORE_BLOB_MISSING naming `key`. */
function namesMissingBlob(failure: Failure, key: string): boolean {
  for (let f: Failure | null | undefined = failure, depth = 0; f && depth < 10; f = f.cause, depth++) {
    if (f.applicationFailureInfo?.type === 'STORE_BLOB_MISSING' && (f.message ?? '').includes(key)) return true;
  }
  return false;
}
