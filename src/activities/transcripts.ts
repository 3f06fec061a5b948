import { createHash } from 'node:crypto';
import type { Entry, ToolResultBlock } from '../core/entries';
import type { ToolResultRef } from './contract';
import { chainHash, hashEntry } from '../core/hash';
import { StoreIntegrityError } from './store-errors';
import type { TranscriptStore } from './transcript-store';

/**
 * Transcripts as a content-addressed chain of segments. The head of a transcript is the chain hash of
 * its entries; a segment stored under a head holds the entries added since its parent head. A model
 * activity therefore receives (parent head, entries since) instead of the whole conversation, which
 * keeps workflow history linear in the conversation rather than quadratic.
 */
export interface TranscriptRef {
  head: string;
  count: number;
}

interface Segment {
  parent: TranscriptRef | null;
  entries: Entry[];
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const CACHE_LIMIT = 64;

export function transcriptHead(entries: readonly Entry[], from: TranscriptRef | null = null): TranscriptRef {
  let head = from?.head ?? '';
  for (const e of entries) head = chainHash(head, hashEntry(e));
  return { head, count: (from?.count ?? 0) + entries.length };
}

export class Transcripts {
  /** Recently used transcripts by head: most calls extend the previous one, so this saves the walk. */
  private readonly cache = new Map<string, Entry[]>();

  constructor(private readonly store: TranscriptStore) {}

  /**
   * The transcript with this head, or undefined when the store does not have it. A segment whose
   * entries do not chain-hash to its key throws StoreIntegrityError: altered text never reaches a model.
   */
  async load(ref: TranscriptRef): Promise<Entry[] | undefined> {
    const cached = this.cache.get(ref.head);
    if (cached) return cached.length === ref.count ? cached : undefined;
    const parts: Entry[][] = [];
    let cursor: TranscriptRef | null = ref;
    let base: Entry[] = [];
    while (cursor) {
      const hit = this.cache.get(cursor.head);
      if (hit) {
        base = hit;
        break;
      }
      const key = segmentKey(cursor.head);
      const blob = await this.store.get(key);
      if (!blob) return undefined;
      const segment = parseSegment(key, blob);
      const check = transcriptHead(segment.entries, segment.parent);
      if (check.head !== cursor.head || check.count !== cursor.count) {
        throw new StoreIntegrityError(key, `its entries chain-hash to ${check.head}/${check.count}, not ${cursor.head}/${cursor.count}`);
      }
      parts.push(segment.entries);
      cursor = segment.parent;
    }
    const entries = base.concat(...parts.reverse());
    if (entries.length !== ref.count) return undefined;
    this.remember(ref.head, entries);
    return entries;
  }

  /** Stores `added` as the segment after `parent`; returns the new head. */
  async append(parent: TranscriptRef | null, parentEntries: Entry[], added: Entry[]): Promise<TranscriptRef> {
    const ref = transcriptHead(added, parent);
    if (!this.cache.has(ref.head)) {
      const segment: Segment = { parent, entries: added };
      await this.store.put(segmentKey(ref.head), encoder.encode(JSON.stringify(segment)));
    }
    this.remember(ref.head, parentEntries.concat(added));
    return ref;
  }

  private remember(head: string, entries: Entry[]): void {
    this.cache.delete(head);
    this.cache.set(head, entries);
    if (this.cache.size > CACHE_LIMIT) this.cache.delete(this.cache.keys().next().value as string);
  }
}

function parseSegment(key: string, blob: Uint8Array): Segment {
  try {
    const segment = JSON.parse(decoder.decode(blob)) as Segment;
    if (Array.isArray(segment.entries) && segment.parent !== undefined) return segment;
  } catch {
    /* reported below */
  }
  throw new StoreIntegrityError(key, 'not a transcript segment');
}

export function segmentKey(head: string): string {
  return `transcripts/${head.slice(0, 2)}/${head}.json`;
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

/** Results shorter than this travel inline: a store round trip costs more than they do. */
const MIN_REF_CHARS = 256;

/** Tool results by content hash, so a model call's delta can refer to what the tool activity stored. */
export class ToolResultStore {
  constructor(private readonly store: TranscriptStore) {}

  /** Stores `content` when it is worth referring to; returns its reference. */
  async save(content: string): Promise<string | undefined> {
    if (content.length < MIN_REF_CHARS) return undefined;
    const ref = createHash('sha256').update(content).digest('hex');
    const key = toolResultKey(ref);
    if (!(await this.store.get(key))) await this.store.put(key, encoder.encode(content));
    else await this.store.touch?.(key); // a new reference to an old blob: keep it from a running gc
    return ref;
  }

  /** The delta with every referenced tool result filled in, or undefined when one is missing. */
  async resolve(delta: Entry[]): Promise<Entry[] | undefined> {
    const out: Entry[] = [];
    for (const entry of delta) {
      if (entry.type !== 'tool_results' || !entry.results.some(isRef)) {
        out.push(entry);
        continue;
      }
      const results: ToolResultBlock[] = [];
      for (const r of entry.results) {
        if (!isRef(r)) {
          results.push(r);
          continue;
        }
        const key = toolResultKey(r.contentRef);
        const blob = await this.store.get(key);
        if (!blob) return undefined;
        const actual = createHash('sha256').update(blob).digest('hex');
        if (actual !== r.contentRef) throw new StoreIntegrityError(key, `its sha256 is ${actual}`);
        const { contentRef: _ref, ...rest } = r;
        results.push({ ...rest, content: decoder.decode(blob) });
      }
      out.push({ ...entry, results });
    }
    return out;
  }
}

function isRef(r: ToolResultBlock): r is ToolResultBlock & ToolResultRef {
  return typeof (r as Partial<ToolResultRef>).contentRef === 'string';
}

export function toolResultKey(ref: string): string {
  return `tool-results/${ref.slice(0, 2)}/${ref}`;
}
