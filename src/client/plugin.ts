import type { DataConverter } from '@temporalio/common';
import { SimplePlugin } from '@temporalio/plugin';
import { externalStorageFor } from '../activities/stores/external-storage';
import { FileTranscriptStore, type TranscriptStore } from '../activities/stores/transcript-store';

export interface FabricHarnessClientPluginOptions {
  /** Where large payloads live: the store the workers use (default FH_STORE_DIR or the OS temp dir). */
  store?: TranscriptStore;
  /** Offload payloads above this many bytes to the store; must match the workers'. */
  offloadThresholdBytes?: number;
}

/**
 * The harness for a Temporal `Client`: external storage on the data converter, so the client reads
 * the large payloads workers offload (and offloads its own the same way). Only that: it loads
 * neither the worker nor the bundler. Workers use FabricHarnessPlugin from `/worker`.
 */
export class FabricHarnessClientPlugin extends SimplePlugin {
  readonly store: TranscriptStore;

  constructor(options: FabricHarnessClientPluginOptions = {}) {
    const store = options.store ?? new FileTranscriptStore();
    const externalStorage = externalStorageFor(store, options.offloadThresholdBytes);
    super({ name: 'fabric-harness', dataConverter: (existing?: DataConverter) => ({ ...existing, externalStorage }) });
    this.store = store;
  }
}
