import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { temporal } from '@temporalio/proto';

/**
 * Garbage collection for the file store: mark every blob some history refers to, sweep the rest once
 * they are older than a grace period. Marking is deliberately conservative: any 16- or 64-hex-digit
 * token in a history's decoded payloads (or in an offloaded payload it claims) keeps the blob with that
 * hash, a kept transcript segment keeps its parents, and the checkpoints its load path names (their
 * heads are in its text, and a checkpoint is classified by its head). Over-keeping costs disk; under-keeping would
 * break a run, so every doubt resolves to keep. Files that are not blobs of a known kind are never touched.
 */
export interface SweepOptions {
  dir: string;
  /** Unreferenced blobs younger than this are kept: a running activity may have stored one its history does not show yet. */
  olderThanMs: number;
  dryRun: boolean;
  now?: number;
}

export interface SweepReport {
  dir: string;
  dryRun: boolean;
  blobs: number;
  referenced: number;
  /** Unreferenced but inside the grace period. */
  young: number;
  removed: string[];
  removedBytes: number;
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

interface Blob {
  file: string;
  kind: 'transcript' | 'checkpoint' | 'tool-result' | 'payload' | 'prelude' | 'temp';
  hash: string;
}

/** The store's blobs by kind and hash (from their keys); other files are left out, so never removed. */
async function listBlobs(dir: string): Promise<Blob[]> {
  const blobs: Blob[] = [];
  const walk = async (d: string): Promise<void> => {
    for (const e of await fs.readdir(d, { withFileTypes: true }).catch(() => [])) {
      const file = path.join(d, e.name);
      if (e.isDirectory()) await walk(file);
      else if (e.isFile()) {
        const blob = classify(path.relative(dir, file).split(path.sep).join('/'));
        if (blob) blobs.push({ ...blob, file });
      }
    }
  };
  await walk(dir);
  return blobs;
}

function classify(key: string): Omit<Blob, 'file'> | undefined {
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

/** Follows references inside kept blobs: a segment's parent, the hashes inside an offloaded payload. */
async function expand(blobs: Blob[], refs: StoreReferences): Promise<Set<Blob>> {
  const byHash = new Map<string, Blob[]>();
  for (const b of blobs) if (b.kind !== 'temp') byHash.set(b.hash, [...(byHash.get(b.hash) ?? []), b]);
  const kept = new Set<Blob>();
  const queue = [...refs.hashes];
  while (queue.length) {
    for (const blob of byHash.get(queue.pop()!) ?? []) {
      if (kept.has(blob)) continue;
      kept.add(blob);
      if (blob.kind !== 'transcript' && blob.kind !== 'payload') continue;
      const bytes = await fs.readFile(blob.file).catch(() => undefined);
      if (!bytes) continue;
      let text = bytes.toString('utf8');
      if (blob.kind === 'payload') {
        try {
          text += decodedText(temporal.api.common.v1.Payload.decode(bytes));
        } catch {
          /* the raw text is scanned anyway */
        }
      }
      queue.push(...refs.addText(text));
    }
  }
  return kept;
}

/** Removes (or, dry, lists) the blobs no reference keeps that are older than the grace period. */
export async function sweepStore(refs: StoreReferences, opts: SweepOptions): Promise<SweepReport> {
  const now = opts.now ?? Date.now();
  const blobs = await listBlobs(opts.dir);
  const kept = await expand(blobs, refs);
  const report: SweepReport = { dir: opts.dir, dryRun: opts.dryRun, blobs: blobs.length, referenced: kept.size, young: 0, removed: [], removedBytes: 0 };
  for (const blob of blobs) {
    if (kept.has(blob)) continue;
    const st = await fs.stat(blob.file).catch(() => undefined);
    if (!st) continue;
    if (now - st.mtimeMs < opts.olderThanMs) {
      report.young++;
      continue;
    }
    if (!opts.dryRun) await fs.rm(blob.file, { force: true });
    report.removed.push(path.relative(opts.dir, blob.file).split(path.sep).join('/'));
    report.removedBytes += st.size;
  }
  return report;
}

/** `90s`, `30m`, `12h`, `7d` (or plain milliseconds) in ms; undefined when it is not a duration. */
export function parseDuration(text: string): number | undefined {
  const m = /^(\d+)(ms|s|m|h|d)?$/.exec(text.trim());
  if (!m) return undefined;
  const unit = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[(m[2] ?? 'ms') as 'ms'];
  return Number(m[1]) * unit;
}
