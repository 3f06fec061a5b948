/**
 * A bundle read back: its entries, its manifest (and signature, when signed), each run's history, and
 * a read-only store over its blobs, so the audit and replay code that reads a store reads the bundle.
 */
import { promises as fsp } from 'node:fs';
import type { StoredBlob, TranscriptStore } from '../../activities/stores/transcript-store';
import { parseHistoryJSON, type History } from '../history-file';
import { BundleFormatError, BundleTamperedError } from './errors';
import { MANIFEST, SIGNATURE, parseManifest, signatureSchema, type BundleManifest, type BundleRun, type BundleSignature } from './format';
import { readTar } from './tar';

export interface OpenBundle {
  entries: Map<string, Buffer>;
  manifestBytes: Buffer;
  manifest: BundleManifest;
  signature?: BundleSignature;
  store: BundleStore;
}

export async function readBundleFile(file: string): Promise<OpenBundle> {
  let bytes: Buffer;
  try {
    bytes = await fsp.readFile(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw Object.assign(new Error(`cannot read ${file}: ${code === 'ENOENT' ? 'no such file' : (code ?? String(err))}`), { code });
  }
  return openBundle(bytes);
}

export interface OpenBundleOptions {
  /**
   * Called with the manifest's bytes and the signature record before the manifest is parsed, so a
   * verifier checks a signed manifest's signature first: a change that also breaks the manifest's
   * shape (a hash that is no longer hex) is then reported as the signature failing, not as a format error.
   */
  beforeManifest?: (manifestBytes: Buffer | undefined, signature: BundleSignature | undefined) => void;
}

export function openBundle(bytes: Uint8Array, opts: OpenBundleOptions = {}): OpenBundle {
  const entries = readTar(bytes);
  const manifestBytes = entries.get(MANIFEST);
  const signature = signatureOf(entries.get(SIGNATURE));
  opts.beforeManifest?.(manifestBytes, signature);
  const manifest = parseManifest(manifestBytes);
  const blobs = new Map<string, Buffer>();
  for (const b of manifest.blobs) {
    const data = entries.get(b.part);
    if (data) blobs.set(b.key, data);
  }
  return { entries, manifestBytes: manifestBytes!, manifest, ...(signature ? { signature } : {}), store: new BundleStore(blobs) };
}

function signatureOf(sig: Buffer | undefined): BundleSignature | undefined {
  if (!sig) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(sig.toString('utf8'));
  } catch {
    throw new BundleTamperedError(SIGNATURE, 'it is not JSON');
  }
  const parsed = signatureSchema.safeParse(value);
  if (!parsed.success) throw new BundleTamperedError(SIGNATURE, `it is not a signature record (${parsed.error.issues[0]?.path.join('.')})`);
  return parsed.data;
}

/** A run's history, parsed (BUNDLE_INVALID when the part is absent; the format error when it is not a history). */
export function runHistory(b: OpenBundle, run: BundleRun): History {
  const data = b.entries.get(run.history);
  if (!data) throw new BundleFormatError(`${run.history} is listed but absent`);
  return parseHistoryJSON(data.toString('utf8'), run.history);
}

/** The bundle's blobs as a store: reads only (a replay or an audit writes nothing worth keeping). */
export class BundleStore implements TranscriptStore {
  readonly location = 'the audit bundle';
  constructor(private readonly blobs: Map<string, Buffer>) {}
  async get(key: string): Promise<Uint8Array | undefined> {
    return this.blobs.get(key);
  }
  async put(key: string, data: Uint8Array): Promise<void> {
    if (!this.blobs.has(key)) this.blobs.set(key, Buffer.from(data));
  }
  async *list(prefix: string): AsyncIterable<StoredBlob> {
    for (const [key, data] of this.blobs) if (key.startsWith(prefix)) yield { key, size: data.length, lastModified: new Date(0) };
  }
  get size(): number {
    return this.blobs.size;
  }
}
