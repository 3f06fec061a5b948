import type { Entry } from '../../core/entries';
import type { TranscriptRef } from '../../wire/activity-contract';
import { chainHash, hashEntry } from '../../core/hash';
import { Lru } from '../../core/lru';
import { StoreIntegrityError } from './store-errors';
import type { TranscriptStore } from './transcript-store';

/**
 * Transcripts as a content-addressed chain of segments. The head of a transcript is the chain hash of
 * its entries; a segment stored under a head holds the entries added since its parent head. A model
 * activity therefore receives (parent head, entries since) instead of the whole conversation, which
 * keeps workflow history linear in the conversation rather than quadratic.
 *
 * Cold loads (a worker that has not cached the transcript) take two round trips, whatever the length:
 * every segment carries a *load path* to its parent (the checkpoints from the root, then the segments
 * after the last checkpoint), so a load reads the head segment, then everything on its path at once.
 * Checkpoints are stored every `checkpointEvery` segments and merged like a binary counter: a
 * checkpoint spans the 1, 2, 4, … times `checkpointEvery` segments before it, so a path holds at most
 * log2(segments / checkpointEvery) + 1 checkpoints and fewer than `checkpointEvery` segments, and each
 * entry is stored in about log2(segments / checkpointEvery) / 2 + 1 checkpoints (a full checkpoint every
 * K segments instead would store the transcript segments / 2K times over). Compaction starts a new
 * chain, which keeps both bounded.
 */
export type { TranscriptRef };

/** A checkpoint on a load path; it continues the one before it on the path (the first, the root). */
interface CheckpointRef extends TranscriptRef {
  /** Spans 2^level × checkpointEvery segments; two neighbours of one level merge into the next. */
  level: number;
}

/** How to load a transcript without walking it: these checkpoints in order, then these segments. */
interface LoadPath {
  checkpoints: CheckpointRef[];
  segments: TranscriptRef[];
}

interface Segment {
  parent: TranscriptRef | null;
  entries: Entry[];
  /** The load path of `parent`. Absent in segments written before 0.4: those load by walking parents. */
  path?: LoadPath;
  /** A checkpoint of this segment's head was stored with it. */
  checkpoint?: true;
}

/** The entries from `from` (null: the root) up to the head in the checkpoint's key. */
interface Checkpoint {
  from: TranscriptRef | null;
  entries: Entry[];
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** Transcripts a worker keeps in memory by default (see TranscriptsOptions.cacheSize). */
export const TRANSCRIPT_CACHE_SIZE = 64;
const NO_PATH: LoadPath = { checkpoints: [], segments: [] };
/** The level of the checkpoint written under a chain of pre-0.4 segments: never merged. */
const UPGRADE_LEVEL = 64;

/** The default checkpoint interval in segments (model calls); see the class comment for its costs. */
export const CHECKPOINT_EVERY = 16;
const MAX_CHECKPOINT_EVERY = 1024;

export interface TranscriptsOptions {
  /** A checkpoint every this many segments, 1 to 1024 (default {@link CHECKPOINT_EVERY}). */
  checkpointEvery?: number;
  /**
   * Recently used transcripts kept in memory, by head (default {@link TRANSCRIPT_CACHE_SIZE}; 0: none).
   * A hit saves loading the stored chain on the next call of the same conversation; each holds one
   * array of the conversation's entries (the entries themselves are shared along a chain).
   */
  cacheSize?: number;
}

export function transcriptHead(entries: readonly Entry[], from: TranscriptRef | null = null): TranscriptRef {
  let head = from?.head ?? '';
  for (const e of entries) head = chainHash(head, hashEntry(e));
  return { head, count: (from?.count ?? 0) + entries.length };
}

interface Cached {
  entries: Entry[];
  /** Undefined when the transcript was loaded by walking (no usable load path): the next append checkpoints it. */
  path: LoadPath | undefined;
}

export class Transcripts {
  /** Recently used transcripts by head: most calls extend the previous one, so this saves the load. */
  private readonly cache: Lru<string, Cached>;
  private readonly checkpointEvery: number;

  constructor(
    private readonly store: TranscriptStore,
    options: TranscriptsOptions = {},
  ) {
    const every = options.checkpointEvery ?? CHECKPOINT_EVERY;
    // Bounded: a segment lists the segments since the last checkpoint, so a huge interval is quadratic.
    if (!Number.isInteger(every) || every < 1 || every > MAX_CHECKPOINT_EVERY) {
      throw new RangeError(`Transcripts: checkpointEvery must be an integer from 1 to ${MAX_CHECKPOINT_EVERY}, got ${every}`);
    }
    this.checkpointEvery = every;
    this.cache = new Lru(options.cacheSize ?? TRANSCRIPT_CACHE_SIZE, 'Transcripts: cacheSize');
  }

  /**
   * The transcript with this head, or undefined when the store does not have it. A segment or
   * checkpoint whose entries do not chain-hash to its key throws StoreIntegrityError: altered text
   * never reaches a model.
   */
  async load(ref: TranscriptRef): Promise<Entry[] | undefined> {
    const cached = this.cache.get(ref.head);
    if (cached) return cached.entries.length === ref.count ? cached.entries : undefined;
    const segment = await this.readSegment(ref);
    if (!segment) return undefined;
    let before = segment.path ? await this.readPath(segment.path, segment.parent) : undefined;
    const path = before && segment.path ? pathAfter(segment.path, ref, segment.checkpoint === true) : undefined;
    // An older segment, or a path whose blobs are gone or were rewritten by another chain: walk instead.
    before ??= segment.parent ? await this.walk(segment.parent) : [];
    if (!before) return undefined;
    const entries = before.concat(segment.entries);
    if (entries.length !== ref.count) return undefined;
    this.remember(ref.head, { entries, path });
    return entries;
  }

  /** Stores `added` as the segment after `parent` (and a checkpoint when one is due); returns the new head. */
  async append(parent: TranscriptRef | null, parentEntries: Entry[], added: Entry[]): Promise<TranscriptRef> {
    const ref = transcriptHead(added, parent);
    const existing = this.cache.get(ref.head);
    if (existing) {
      this.remember(ref.head, existing);
      return ref;
    }
    const writes: Promise<void>[] = [];
    let toParent = parent ? this.cache.get(parent.head)?.path : NO_PATH;
    if (!toParent && parent) {
      // The parent was loaded by walking segments of an older release: checkpoint it once, so this
      // chain loads in two round trips from here on.
      toParent = { checkpoints: [{ ...parent, level: UPGRADE_LEVEL }], segments: [] };
      writes.push(this.writeCheckpoint(parent, null, parentEntries));
    }
    const checkpoint = toParent!.segments.length + 1 >= this.checkpointEvery;
    const path = pathAfter(toParent!, ref, checkpoint);
    const all = parentEntries.concat(added);
    if (checkpoint) {
      const from = path.checkpoints.at(-2) ?? null;
      writes.push(this.writeCheckpoint(ref, from, all.slice(from?.count ?? 0)));
    }
    const segment: Segment = { parent, entries: added, path: toParent! };
    if (checkpoint) segment.checkpoint = true;
    writes.push(this.store.put(segmentKey(ref.head), encoder.encode(JSON.stringify(segment))));
    await Promise.all(writes);
    this.remember(ref.head, { entries: all, path });
    return ref;
  }

  private async writeCheckpoint(at: TranscriptRef, from: TranscriptRef | null, entries: Entry[]): Promise<void> {
    const checkpoint: Checkpoint = { from: from && { head: from.head, count: from.count }, entries };
    await this.store.put(checkpointKey(at.head, from), encoder.encode(JSON.stringify(checkpoint)));
  }

  /** The segment stored under `ref`, verified against it; undefined when missing. */
  private async readSegment(ref: TranscriptRef): Promise<Segment | undefined> {
    const key = segmentKey(ref.head);
    const blob = await this.store.get(key);
    if (!blob) return undefined;
    const segment = parseSegment(key, blob);
    const check = transcriptHead(segment.entries, segment.parent);
    if (check.head !== ref.head || check.count !== ref.count) {
      throw new StoreIntegrityError(key, `its entries chain-hash to ${check.head}/${check.count}, not ${ref.head}/${ref.count}`);
    }
    return segment;
  }

  /** The checkpoint at `at` that continues `from`, verified against both; undefined when missing. */
  private async readCheckpoint(at: TranscriptRef, from: TranscriptRef | null): Promise<Entry[] | undefined> {
    const key = checkpointKey(at.head, from);
    const blob = await this.store.get(key);
    if (!blob) return undefined;
    const checkpoint = parseCheckpoint(key, blob);
    if (!sameRef(checkpoint.from, from)) {
      throw new StoreIntegrityError(key, `it continues ${describe(checkpoint.from)}, not ${describe(from)}`);
    }
    const check = transcriptHead(checkpoint.entries, from);
    if (check.head !== at.head || check.count !== at.count) {
      throw new StoreIntegrityError(key, `its entries chain-hash to ${check.head}/${check.count}, not ${at.head}/${at.count}`);
    }
    return checkpoint.entries;
  }

  /**
   * The entries up to `end` by its load path, every blob fetched at once; undefined when one is missing
   * or the segments no longer chain (another chain stored a segment of the same head differently).
   */
  private async readPath(path: LoadPath, end: TranscriptRef | null): Promise<Entry[] | undefined> {
    const [checkpoints, segments] = await Promise.all([
      Promise.all(path.checkpoints.map((c, i) => this.readCheckpoint(c, path.checkpoints[i - 1] ?? null))),
      Promise.all(path.segments.map((s) => this.readSegment(s))),
    ]);
    const parts: Entry[][] = [];
    let at: TranscriptRef | null = path.checkpoints.at(-1) ?? null;
    for (const entries of checkpoints) {
      if (!entries) return undefined;
      parts.push(entries);
    }
    for (const [i, segment] of segments.entries()) {
      if (!segment || !sameRef(segment.parent, at)) return undefined;
      parts.push(segment.entries);
      at = path.segments[i]!;
    }
    return sameRef(at, end) ? ([] as Entry[]).concat(...parts) : undefined;
  }

  /** The transcript up to `ref` by following parents: one read per segment (pre-0.4 segments, repairs). */
  private async walk(ref: TranscriptRef): Promise<Entry[] | undefined> {
    const parts: Entry[][] = [];
    let cursor: TranscriptRef | null = ref;
    let base: Entry[] = [];
    while (cursor) {
      const hit = this.cache.get(cursor.head);
      if (hit) {
        base = hit.entries;
        break;
      }
      const segment = await this.readSegment(cursor);
      if (!segment) return undefined;
      parts.push(segment.entries);
      cursor = segment.parent;
    }
    return base.concat(...parts.reverse());
  }

  private remember(head: string, value: Cached): void {
    this.cache.set(head, value);
  }
}

/** The load path of `head`, whose parent's path is `toParent`; `checkpointed` when a checkpoint was stored at `head`. */
function pathAfter(toParent: LoadPath, head: TranscriptRef, checkpointed: boolean): LoadPath {
  const at = { head: head.head, count: head.count };
  if (!checkpointed) return { checkpoints: toParent.checkpoints, segments: [...toParent.segments, at] };
  const checkpoints = [...toParent.checkpoints, { ...at, level: 0 }];
  // Binary-counter carry: two neighbours of one level become one checkpoint of the next, which
  // continues the earlier one's predecessor and ends at `head` (the blob written for `head`).
  while (checkpoints.length >= 2 && checkpoints.at(-1)!.level === checkpoints.at(-2)!.level) {
    const last = checkpoints.pop()!;
    checkpoints[checkpoints.length - 1] = { head: last.head, count: last.count, level: last.level + 1 };
  }
  return { checkpoints, segments: [] };
}

function sameRef(a: TranscriptRef | null, b: TranscriptRef | null): boolean {
  return a === null || b === null ? a === b : a.head === b.head && a.count === b.count;
}

function describe(ref: TranscriptRef | null): string {
  return ref ? `${ref.head}/${ref.count}` : 'the root';
}

function parseSegment(key: string, blob: Uint8Array): Segment {
  try {
    const segment = JSON.parse(decoder.decode(blob)) as Segment;
    if (Array.isArray(segment.entries) && segment.parent !== undefined && (segment.path === undefined || isLoadPath(segment.path))) return segment;
  } catch {
    /* reported below */
  }
  throw new StoreIntegrityError(key, 'not a transcript segment');
}

function parseCheckpoint(key: string, blob: Uint8Array): Checkpoint {
  try {
    const checkpoint = JSON.parse(decoder.decode(blob)) as Checkpoint;
    if (Array.isArray(checkpoint.entries) && (checkpoint.from === null || isTranscriptRef(checkpoint.from))) return checkpoint;
  } catch {
    /* reported below */
  }
  throw new StoreIntegrityError(key, 'not a transcript checkpoint');
}

function isLoadPath(p: LoadPath): boolean {
  return (
    Array.isArray(p.checkpoints) &&
    Array.isArray(p.segments) &&
    p.checkpoints.every((c) => isTranscriptRef(c) && Number.isInteger(c.level)) &&
    p.segments.every(isTranscriptRef)
  );
}

function isTranscriptRef(r: unknown): r is TranscriptRef {
  const ref = r as Partial<TranscriptRef> | null;
  return typeof ref?.head === 'string' && /^[0-9a-f]{16}$/.test(ref.head) && Number.isInteger(ref.count);
}

export function segmentKey(head: string): string {
  return `transcripts/${head.slice(0, 2)}/${head}.json`;
}

/** Checkpoints are keyed by both ends: two chains may reach one head through different checkpoints. */
export function checkpointKey(head: string, from: TranscriptRef | null): string {
  return `checkpoints/${head.slice(0, 2)}/${head}.${from ? from.head : 'root'}.json`;
}

export async function loadJson<T>(store: TranscriptStore, key: string): Promise<T | undefined> {
  const blob = await store.get(key);
  if (!blob) return undefined;
  try {
    return JSON.parse(decoder.decode(blob)) as T;
  } catch {
    throw new StoreIntegrityError(key, 'not valid JSON');
  }
}

export async function saveJson(store: TranscriptStore, key: string, value: unknown): Promise<void> {
  await store.put(key, encoder.encode(JSON.stringify(value)));
}
