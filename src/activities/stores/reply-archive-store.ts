/**
 * The store side of a session's reply archive (see core/sessions/reply-archive.ts): chunks are
 * content-addressed JSON blobs under `replies/`, verified against their hash when read, and chained
 * newest to oldest. A lookup walks the chain from its head; chunks read once are kept in memory (they
 * never change), so asking again costs no store read.
 */
import { canonicalJson, hashString } from '../../core/hash';
import type { ReplyArchiveChunk, StoredReply } from '../../core/sessions/reply-archive';
import { StoreBlobMissingError, StoreIntegrityError } from './store-errors';
import type { TranscriptStore } from './transcript-store';
import { loadJson, saveJson } from './transcripts';

const CACHED_CHUNKS = 256;

export function replyChunkKey(head: string): string {
  return `replies/${head.slice(0, 2)}/${head}.json`;
}

export class ReplyArchiveStore {
  private readonly cache = new Map<string, ReplyArchiveChunk>();

  constructor(private readonly store: TranscriptStore) {}

  /** Stores one chunk; its hash (the chain's new head). */
  async append(chunk: ReplyArchiveChunk): Promise<string> {
    const head = hashString(canonicalJson(chunk));
    await saveJson(this.store, replyChunkKey(head), chunk);
    this.remember(head, chunk);
    return head;
  }

  /** The reply to `messageId` in the chain ending at `head`, newest chunk first (null: not archived). */
  async find(head: string, messageId: string): Promise<StoredReply | null> {
    for (let at: string | null = head; at !== null; ) {
      const chunk = await this.read(at);
      const hit = chunk.replies.find(([id]) => id === messageId);
      if (hit) return hit[1];
      at = chunk.prev;
    }
    return null;
  }

  private async read(head: string): Promise<ReplyArchiveChunk> {
    if (!/^[0-9a-f]{16}$/.test(head)) throw new StoreIntegrityError(replyChunkKey(head), 'not a chunk hash');
    const cached = this.cache.get(head);
    if (cached) return cached;
    const key = replyChunkKey(head);
    const chunk = await loadJson<ReplyArchiveChunk>(this.store, key);
    if (!chunk) throw new StoreBlobMissingError(`reply archive ${head}`, this.store.location ?? '(store)', "a session's older replies");
    if (hashString(canonicalJson(chunk)) !== head) throw new StoreIntegrityError(key, 'its content does not hash to its name');
    this.remember(head, chunk);
    return chunk;
  }

  private remember(head: string, chunk: ReplyArchiveChunk): void {
    this.cache.set(head, chunk);
    if (this.cache.size > CACHED_CHUNKS) this.cache.delete(this.cache.keys().next().value as string);
  }
}
