import { createHash } from 'node:crypto';
import type { Entry, ToolResultBlock } from '../../core/entries';
import { Lru } from '../../core/lru';
import type { ToolResultRef } from '../../wire/activity-contract';
import { StoreIntegrityError } from './store-errors';
import type { TranscriptStore } from './transcript-store';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Results shorter than this travel inline: a store round trip costs more than they do. */
const MIN_REF_CHARS = 256;

/** Tool results a worker keeps after storing them, by default (see WorkerCacheSizes.toolResults). */
export const TOOL_RESULT_CACHE_SIZE = 32;
/** Longer results are not kept (a whole offloaded log): the cache holds at most its size times this many characters. */
const MAX_KEPT_RESULT_CHARS = 64 * 1024;

/** Tool results by content hash, so a model call's delta can refer to what the tool activity stored. */
export class ToolResultStore {
  /**
   * Results this worker stored or read recently, by ref: the next model call of the same conversation
   * sends them, and most of the time it runs here, so it need not read back what was just written.
   * Kept as the text hashed to its ref here, so a hit is verified by how it got in.
   */
  private readonly recent: Lru<string, string>;

  constructor(
    private readonly store: TranscriptStore,
    cacheSize: number = TOOL_RESULT_CACHE_SIZE,
  ) {
    this.recent = new Lru(cacheSize, 'toolResults cache size');
  }

  /** Stores `content` when it is worth referring to; returns its reference. */
  async save(content: string): Promise<string | undefined> {
    if (content.length < MIN_REF_CHARS) return undefined;
    const ref = createHash('sha256').update(content).digest('hex');
    const key = toolResultKey(ref);
    // Written whatever the store holds: equal keys hold equal bytes, and a write is what reading first
    // to skip it cost. A result this worker stored a moment ago is only touched, for a running gc.
    if (this.recent.get(ref) === undefined) await this.store.put(key, encoder.encode(content));
    else await this.store.touch?.(key);
    this.keep(ref, content);
    return ref;
  }

  /** A stored result by its ref, verified against it; undefined when the store does not have it. */
  async read(ref: string): Promise<string | undefined> {
    const kept = this.recent.get(ref);
    if (kept !== undefined) return kept;
    const key = toolResultKey(ref);
    const blob = await this.store.get(key);
    if (!blob) return undefined;
    const actual = createHash('sha256').update(blob).digest('hex');
    if (actual !== ref) throw new StoreIntegrityError(key, `its sha256 is ${actual}`);
    const content = decoder.decode(blob);
    this.keep(ref, content);
    return content;
  }

  private keep(ref: string, content: string): void {
    if (content.length <= MAX_KEPT_RESULT_CHARS) this.recent.set(ref, content);
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
        const content = await this.read(r.contentRef);
        if (content === undefined) return undefined;
        const { contentRef: _ref, ...rest } = r;
        results.push({ ...rest, content });
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
