/**
 * Attachments on the worker: the bytes a client stored by sha256 (client/attachments.ts), read back just
 * before a model call and verified against their hash, so the provider's blocks can carry them. The
 * conversation keeps only references (core/attachments); these bytes never go through a workflow.
 */
import { createHash } from 'node:crypto';
import { attachmentKey, type AttachmentRef } from '../../core/attachments';
import type { Entry } from '../../core/entries';
import { FabricError } from '../../core/errors';
import { Lru } from '../../core/lru';
import { StoreIntegrityError } from './store-errors';
import type { TranscriptStore } from './transcript-store';

/** An attachment whose bytes the worker's store does not have: the client stored them elsewhere. */
export class AttachmentMissingError extends FabricError {
  constructor(
    readonly name: string,
    readonly hash: string,
    readonly location: string,
  ) {
    super('ATTACHMENT_MISSING', `attachment ${JSON.stringify(name)} (${attachmentKey(hash)}) is not in ${location}: the client and the workers must use one store`);
  }
}

/** Attachments a worker keeps base64-encoded after reading them (a conversation sends its files on every call). */
export const ATTACHMENT_CACHE_SIZE = 16;

/** What a provider needs of an attachment's bytes: base64 (images, PDFs) and, for text, the text. */
export interface AttachmentData {
  base64: string;
  text?: string;
}

export class AttachmentStore {
  private readonly recent: Lru<string, AttachmentData>;

  constructor(
    private readonly store: TranscriptStore,
    cacheSize: number = ATTACHMENT_CACHE_SIZE,
  ) {
    this.recent = new Lru(cacheSize, 'attachments cache size');
  }

  /** The bytes of every attachment `entries` still show (masked ones are not sent), by hash. */
  async resolve(entries: readonly Entry[]): Promise<Map<string, AttachmentData> | undefined> {
    const refs = new Map<string, AttachmentRef>();
    for (const e of entries) {
      if (e.type !== 'user' || !e.attachments) continue;
      for (const a of e.attachments) if (!a.masked) refs.set(a.hash, a);
    }
    if (refs.size === 0) return undefined;
    const out = new Map<string, AttachmentData>();
    for (const ref of refs.values()) out.set(ref.hash, await this.read(ref));
    return out;
  }

  private async read(ref: AttachmentRef): Promise<AttachmentData> {
    const kept = this.recent.get(ref.hash);
    if (kept) return kept;
    const key = attachmentKey(ref.hash);
    const bytes = await this.store.get(key);
    if (!bytes) throw new AttachmentMissingError(ref.name, ref.hash, this.store.location ?? "the worker's store");
    const actual = createHash('sha256').update(bytes).digest('hex');
    if (actual !== ref.hash) throw new StoreIntegrityError(key, `its sha256 is ${actual}`);
    const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const data: AttachmentData = ref.mediaType === 'text/plain' ? { base64: buf.toString('base64'), text: buf.toString('utf8') } : { base64: buf.toString('base64') };
    this.recent.set(ref.hash, data);
    return data;
  }
}
