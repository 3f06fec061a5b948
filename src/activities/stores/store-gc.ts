import { existsSync } from 'node:fs';
import { temporal } from '@temporalio/proto';
import { FabricError } from '../../core/errors';
import { FileTranscriptStore, isCollectable, type CollectableStore, type StoredBlob, type TranscriptStore } from './transcript-store';

/**
 * Garbage collection for a store that can list and delete (the file store, S3): mark every blob some
 * history refers to, sweep the rest once they are older than a grace period. Marking is deliberately
 * conservative: any 16- or 64-hex-digit token in a history's decoded payloads (or in an offloaded payload
 * it claims) keeps the blob with that hash, a kept transcript segment keeps its parents, and the
 * checkpoints its load path names (their heads are in its text, and a checkpoint is classified by its
 * head). Over-keeping costs storage; under-keeping would break a run, so every doubt resolves to keep.
 * Keys that are not blobs of a known kind are never touched.
 */
export interface SweepOptions {
  /** The store to sweep; or `dir`, a file store's directory. */
  store?: CollectableStore;
  dir?: string;
  /** Unreferenced blobs younger than this are kept: a running activity may have stored one its history does not show yet. */
  olderThanMs: number;
  dryRun: boolean;
  now?: number;
}

export interface SweepReport {
  /** Where the store is (its directory or bucket URL); same as `location`, kept for the file-store callers. */
  dir: string;
  location: string;
  dryRun: boolean;
  blobs: number;
  /** Bytes of those blobs, before the sweep. */
  bytes: number;
  referenced: number;
  /** Unreferenced but inside the grace period. */
  young: number;
  removed: string[];
  removedBytes: number;
}

/** The options name no store, both, or one that cannot list and delete. */
export class StoreNotCollectableError extends FabricError {
  constructor(reason: string) {
    super('STORE_NOT_COLLECTABLE', `cannot collect garbage: ${reason}`);
  }
}

/** The store the options name: `store` (which must list and delete) or a file store at `dir`. */
export function collectableStore(opts: { store?: TranscriptStore; dir?: string }): CollectableStore {
  if (opts.store && opts.dir !== undefined) throw new StoreNotCollectableError('give `store` or `dir`, not both');
  if (opts.store) {
    if (!isCollectable(opts.store)) {
      throw new StoreNotCollectableError(`the store${opts.store.location ? ` ${opts.store.location}` : ''} cannot list() and delete() its blobs`);
    }
    return opts.store;
  }
  if (typeof opts.dir === 'string' && opts.dir) {
    // Never made here: a misspelt directory would be created empty and reported as "0 blobs removed".
    if (!existsSync(opts.dir)) throw new StoreNotCollectableError(`the store directory ${opts.dir} does not exist (check the path: it is not created)`);
    return new FileTranscriptStore(opts.dir);
  }
  throw new StoreNotCollectableError('name the store: `store` (a FileTranscriptStore, an S3Store, …) or `dir` (a file store directory)');
}

const HASH_TOKEN = /\b(?:[0-9a-f]{64}|[0-9a-f]{16})\b/g;

/** The hashes a history (or any decoded payload) mentions. */
export class StoreReferences {
  readonly hashes = new Set<string>();

  /** Adds the hashes `text` mentions; returns the ones not seen before. */
  addText(text: string): string[] {
    const added: string[] = [];
    for (const m of text.matchAll(HASH_TOKEN)) {
      if (this.hashes.has(m[0])) continue;
      this.hashes.add(m[0]);
      added.push(m[0]);
    }
    return added;
  }

  /** A history as fetched from Temporal (proto objects): every string and every payload's bytes. */
  addHistory(history: unknown): void {
    this.addText(decodedText(history));
  }
}

/** Every string of a proto object, with byte fields (payload data) decoded as UTF-8. */
export function decodedText(value: unknown): string {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (v === null || v === undefined) return;
    if (typeof v === 'string') out.push(v);
    else if (v instanceof Uint8Array) out.push(Buffer.from(v).toString('utf8'));
    else if (Array.isArray(v)) v.forEach(walk);
    else if (typeof v === 'object') Object.values(v as Record<string, unknown>).forEach(walk);
  };
  walk(value);
  return out.join('\n');
}

interface Blob extends StoredBlob {
  kind: 'transcript' | 'checkpoint' | 'tool-result' | 'payload' | 'prelude' | 'temp';
  hash: string;
}

/** The store's blobs by kind and hash (from their keys); other keys are left out, so never removed. */
async function listBlobs(store: CollectableStore): Promise<{ blobs: Blob[]; bytes: number }> {
  const blobs: Blob[] = [];
  let bytes = 0;
  for await (const b of store.list('')) {
    const kind = classify(b.key);
    if (!kind) continue;
    blobs.push({ ...b, ...kind });
    bytes += b.size;
  }
  return { blobs, bytes };
}

function classify(key: string): Pick<Blob, 'kind' | 'hash'> | undefined {
  if (/\.\d+\.[a-z0-9]+\.tmp$/.test(key)) return { kind: 'temp', hash: '' };
  let m = /^transcripts\/[0-9a-f]{2}\/([0-9a-f]{16})\.json$/.exec(key);
  if (m) return { kind: 'transcript', hash: m[1]! };
  // By its head: every segment whose path names the head keeps it. Not read when kept: its entries
  // are those of segments the same chain keeps anyway.
  m = /^checkpoints\/[0-9a-f]{2}\/([0-9a-f]{16})\.(?:[0-9a-f]{16}|root)\.json$/.exec(key);
  if (m) return { kind: 'checkpoint', hash: m[1]! };
  m = /^tool-results\/[0-9a-f]{2}\/([0-9a-f]{64})$/.exec(key);
  if (m) return { kind: 'tool-result', hash: m[1]! };
  m = /^payloads\/([0-9a-f]{64})$/.exec(key);
  if (m) return { kind: 'payload', hash: m[1]! };
  m = /^preludes\/([0-9a-f]{16})\.json$/.exec(key);
  if (m) return { kind: 'prelude', hash: m[1]! };
  return undefined;
}

/** Blobs read at once while following references (S3 round trips dominate a large mark phase). */
const READ_CONCURRENCY = 16;

/** Follows references inside kept blobs: a segment's parent, the hashes inside an offloaded payload. */
async function expand(store: CollectableStore, blobs: Blob[], refs: StoreReferences): Promise<Set<Blob>> {
  const byHash = new Map<string, Blob[]>();
  for (const b of blobs) if (b.kind !== 'temp') byHash.set(b.hash, [...(byHash.get(b.hash) ?? []), b]);
  const kept = new Set<Blob>();
  const queue = [...refs.hashes];
  const follow = async (blob: Blob): Promise<string[]> => {
    if (blob.kind !== 'transcript' && blob.kind !== 'payload') return [];
    const bytes = await store.get(blob.key);
    if (!bytes) return [];
    let text = Buffer.from(bytes).toString('utf8');
    if (blob.kind === 'payload') {
      try {
        text += decodedText(temporal.api.common.v1.Payload.decode(bytes));
      } catch {
        /* the raw text is scanned anyway */
      }
    }
    return refs.addText(text);
  };
  while (queue.length) {
    const toRead: Blob[] = [];
    while (queue.length && toRead.length < READ_CONCURRENCY) {
      for (const blob of byHash.get(queue.pop()!) ?? []) {
        if (kept.has(blob)) continue;
        kept.add(blob);
        toRead.push(blob);
      }
    }
    for (const found of await Promise.all(toRead.map(follow))) queue.push(...found);
  }
  return kept;
}

/** Removes (or, dry, lists) the blobs no reference keeps that are older than the grace period. */
export async function sweepStore(refs: StoreReferences, opts: SweepOptions): Promise<SweepReport> {
  const store = collectableStore(opts);
  const now = opts.now ?? Date.now();
  const { blobs, bytes } = await listBlobs(store);
  const kept = await expand(store, blobs, refs);
  const location = store.location ?? '(store)';
  const report: SweepReport = { dir: location, location, dryRun: opts.dryRun, blobs: blobs.length, bytes, referenced: kept.size, young: 0, removed: [], removedBytes: 0 };
  for (const blob of blobs) {
    if (kept.has(blob)) continue;
    if (now - blob.lastModified.getTime() < opts.olderThanMs) {
      report.young++;
      continue;
    }
    report.removed.push(blob.key);
    report.removedBytes += blob.size;
  }
  if (!opts.dryRun && report.removed.length > 0) await store.delete(report.removed);
  return report;
}

/** `90s`, `30m`, `12h`, `7d` (or plain milliseconds) in ms; undefined when it is not a duration. */
export function parseDuration(text: string): number | undefined {
  const m = /^(\d+)(ms|s|m|h|d)?$/.exec(text.trim());
  if (!m) return undefined;
  const unit = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[(m[2] ?? 'ms') as 'ms'];
  return Number(m[1]) * unit;
}
