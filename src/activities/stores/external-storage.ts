import { createHash } from 'node:crypto';
import {
  ExternalStorage,
  StorageDriverClaim,
  type Payload,
  type StorageDriver,
  type StorageDriverRetrieveContext,
  type StorageDriverStoreContext,
} from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { encodeFailure } from '../../wire/failures';
import { StoreBlobMissingError, StoreIntegrityError, StoreUnreachableError } from './store-errors';
import type { TranscriptStore } from './transcript-store';

/**
 * Temporal's own external storage, backed by the transcript store: payloads over the threshold (a big
 * tool output, a large file) are stored by content hash and history holds only a claim. Equal payloads
 * (the same tool output as activity result and as the next model call's input) are stored once.
 *
 * A claim also records who offloaded it (namespace, workflow id and run, or a standalone activity's id):
 * Temporal gives the driver no workflow identity when it retrieves, so this is what lets a missing-blob
 * failure name its origin and the run it belongs to. (A workflow's activity result is stored with the
 * workflow as its target, so its claim names the run too; a client's start, signal or update argument
 * names the workflow id, and the run when the client knew it.)
 *
 * A blob the store proves absent is STORE_BLOB_MISSING, a non-retryable failure: an activity whose input
 * it was fails for good (workflow code then ends the run, or answers the session's message with it). A
 * workflow task that needs it fails before any workflow code runs, so nothing in the run can end it:
 * `onMissing` tells the worker (its missing-blob reaper, src/worker/missing-blob-reaper.ts), which ends
 * such a run. A store that does not answer is STORE_UNREACHABLE, retried until it does, and never
 * reported. A blob that does not hash to its key is STORE_INTEGRITY.
 */
export class TranscriptStoreDriver implements StorageDriver {
  readonly name = 'fh-store';
  readonly type = 'fabric-harness.transcript-store';

  constructor(
    private readonly blobs: TranscriptStore,
    /** Told of every blob the store proved absent (never of one it could not reach), with the run its claim names. */
    private readonly onMissing?: (missing: MissingBlob) => void,
  ) {}

  async store(ctx: StorageDriverStoreContext | undefined, payloads: Payload[]): Promise<StorageDriverClaim[]> {
    const origin = originOf(ctx);
    return Promise.all(
      payloads.map(async (payload) => {
        const bytes = temporal.api.common.v1.Payload.encode(payload).finish();
        const key = payloadKey(sha256(bytes));
        if (!(await this.blobs.get(key))) await this.blobs.put(key, bytes);
        else await this.blobs.touch?.(key); // a new reference to an old blob: keep it from a running gc
        // Which store holds it: a worker that later finds it absent in another store proves nothing.
        return new StorageDriverClaim({ key, ...origin, ...(this.blobs.location ? { storedIn: this.blobs.location } : {}) });
      }),
    );
  }

  async retrieve(_ctx: StorageDriverRetrieveContext | undefined, claims: StorageDriverClaim[]): Promise<Payload[]> {
    return Promise.all(
      claims.map(async (claim) => {
        const key = claim.claimData.key;
        const location = this.blobs.location ?? 'the configured store';
        let bytes: Uint8Array | undefined;
        try {
          bytes = await this.blobs.get(key);
        } catch (err) {
          // Nothing is known of the blob: a retryable failure, so the task runs again once the store answers.
          throw encodeFailure(new StoreUnreachableError(key, location, err instanceof Error ? err.message : String(err)));
        }
        // Proven absent (the store answered "not found"): final. Where an activity's input needed it, the
        // activity fails for good and workflow code ends the run or the session's turn with this error.
        if (!bytes) {
          const error = new StoreBlobMissingError(key, location, describeOrigin(claim.claimData));
          this.report(claim.claimData, error);
          throw encodeFailure(error);
        }
        const actual = sha256(bytes);
        if (payloadKey(actual) !== key) throw new StoreIntegrityError(key, `its sha256 is ${actual}`);
        return temporal.api.common.v1.Payload.decode(bytes) as Payload;
      }),
    );
  }

  /** A listener's own failure must not replace the STORE_BLOB_MISSING failure the task reports. */
  private report(claim: Record<string, string>, error: StoreBlobMissingError): void {
    if (!this.onMissing || claim.originKind !== 'workflow' || !claim.originId) return;
    try {
      this.onMissing({
        key: error.key,
        location: error.location,
        origin: error.origin,
        workflowId: claim.originId,
        ...(claim.originRunId ? { runId: claim.originRunId } : {}),
        ...(claim.originNamespace ? { namespace: claim.originNamespace } : {}),
        ...(claim.storedIn ? { storedIn: claim.storedIn } : {}),
      });
    } catch {
      // The reaper is best effort: the task still fails with the named error and is visible in history.
    }
  }
}

/** A blob the store proved absent, and the workflow run whose claim it was (as the claim recorded it). */
export interface MissingBlob {
  key: string;
  location: string;
  /** What offloaded it, in words (as the failure says). */
  origin: string;
  workflowId: string;
  /** Absent for an argument a client offloaded before the run existed (a start argument). */
  runId?: string;
  /** Absent in claims written before 0.6.7. */
  namespace?: string;
  /** The store the blob was put in (its location), as the claim recorded it; absent before 0.6.7. */
  storedIn?: string;
}

export function payloadKey(hash: string): string {
  return `payloads/${hash}`;
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

function originOf(ctx: StorageDriverStoreContext | undefined): Record<string, string> {
  const t = ctx?.target;
  if (!t) return {};
  const out: Record<string, string> = { originKind: t.kind };
  if (t.namespace) out.originNamespace = t.namespace;
  if (t.id) out.originId = t.id;
  if (t.runId) out.originRunId = t.runId;
  if (t.type) out.originType = t.type;
  return out;
}

function describeOrigin(claim: Record<string, string>): string {
  if (claim.originKind === 'workflow') return `offloaded by workflow ${claim.originId ?? '?'} run ${claim.originRunId ?? '?'}`;
  if (claim.originKind === 'activity') return `offloaded as the result of activity ${claim.originId ?? '?'} (${claim.originType ?? '?'}) of this run`;
  return 'origin not recorded';
}

/** Payloads above this go to the store (Temporal's hard limit is 2 MB per payload). */
export const DEFAULT_OFFLOAD_THRESHOLD_BYTES = 128 * 1024;

export function externalStorageFor(
  store: TranscriptStore,
  payloadSizeThreshold = DEFAULT_OFFLOAD_THRESHOLD_BYTES,
  onMissing?: (missing: MissingBlob) => void,
): ExternalStorage {
  return new ExternalStorage({ drivers: [new TranscriptStoreDriver(store, onMissing)], payloadSizeThreshold });
}
