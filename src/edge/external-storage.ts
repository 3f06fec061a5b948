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
import { encodeFailure } from '../wire/failures';
import { StoreBlobMissingError, StoreIntegrityError, StoreUnreachableError } from './store-errors';
import type { TranscriptStore } from './transcript-store';

/**
 * Temporal's own external storage, backed by the transcript store: payloads over the threshold (a big
 * tool output, a large file) are stored by content hash and history holds only a claim. Equal payloads
 * (the same tool output as activity result and as the next model call's input) are stored once.
 *
 * A claim also records who offloaded it (workflow id and run, or activity id): Temporal gives the
 * driver no workflow identity when it retrieves, so this is what lets a missing-blob failure name its
 * origin. A blob the store proves absent is STORE_BLOB_MISSING, a non-retryable failure: an activity whose
 * input it was fails for good (workflow code then ends the run, or answers the session's message with it);
 * a workflow task that needs it fails, is recorded in the run's history and shown by `describe`, and is
 * retried (Temporal decodes a task before any workflow code runs: nothing there can end the run). A store
 * that does not answer is STORE_UNREACHABLE, retried until it does. A blob that does not hash to its key
 * is STORE_INTEGRITY.
 */
export class TranscriptStoreDriver implements StorageDriver {
  readonly name = 'fh-store';
  readonly type = 'fabric-harness.transcript-store';

  constructor(private readonly blobs: TranscriptStore) {}

  async store(ctx: StorageDriverStoreContext | undefined, payloads: Payload[]): Promise<StorageDriverClaim[]> {
    const origin = originOf(ctx);
    return Promise.all(
      payloads.map(async (payload) => {
        const bytes = temporal.api.common.v1.Payload.encode(payload).finish();
        const key = payloadKey(sha256(bytes));
        if (!(await this.blobs.get(key))) await this.blobs.put(key, bytes);
        else await this.blobs.touch?.(key); // a new reference to an old blob: keep it from a running gc
        return new StorageDriverClaim({ key, ...origin });
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
        if (!bytes) throw encodeFailure(new StoreBlobMissingError(key, location, describeOrigin(claim.claimData)));
        const actual = sha256(bytes);
        if (payloadKey(actual) !== key) throw new StoreIntegrityError(key, `its sha256 is ${actual}`);
        return temporal.api.common.v1.Payload.decode(bytes) as Payload;
      }),
    );
  }
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

export function externalStorageFor(store: TranscriptStore, payloadSizeThreshold = DEFAULT_OFFLOAD_THRESHOLD_BYTES): ExternalStorage {
  return new ExternalStorage({ drivers: [new TranscriptStoreDriver(store)], payloadSizeThreshold });
}
