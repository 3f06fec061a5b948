import { createHash } from 'node:crypto';
import { ExternalStorage, StorageDriverClaim, type Payload, type StorageDriver } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { TranscriptStore } from './transcript-store';

/**
 * Temporal's own external storage, backed by the transcript store: payloads over the threshold (a big
 * tool output, a large file) are stored by content hash and history holds only a claim. Equal payloads
 * (the same tool output as activity result and as the next model call's input) are stored once.
 */
export class TranscriptStoreDriver implements StorageDriver {
  readonly name = 'fh-store';
  readonly type = 'fabric-harness.transcript-store';

  constructor(private readonly blobs: TranscriptStore) {}

  async store(_ctx: unknown, payloads: Payload[]): Promise<StorageDriverClaim[]> {
    return Promise.all(
      payloads.map(async (payload) => {
        const bytes = temporal.api.common.v1.Payload.encode(payload).finish();
        const key = `payloads/${createHash('sha256').update(bytes).digest('hex')}`;
        if (!(await this.blobs.get(key))) await this.blobs.put(key, bytes);
        return new StorageDriverClaim({ key });
      }),
    );
  }

  async retrieve(_ctx: unknown, claims: StorageDriverClaim[]): Promise<Payload[]> {
    return Promise.all(
      claims.map(async (claim) => {
        const bytes = await this.blobs.get(claim.claimData.key);
        if (!bytes) throw new Error(`external payload ${claim.claimData.key} is missing from the store`);
        return temporal.api.common.v1.Payload.decode(bytes) as Payload;
      }),
    );
  }
}

/** Payloads above this go to the store (Temporal's hard limit is 2 MB per payload). */
export const DEFAULT_OFFLOAD_THRESHOLD_BYTES = 128 * 1024;

export function externalStorageFor(store: TranscriptStore, payloadSizeThreshold = DEFAULT_OFFLOAD_THRESHOLD_BYTES): ExternalStorage {
  return new ExternalStorage({ drivers: [new TranscriptStoreDriver(store)], payloadSizeThreshold });
}
