/**
 * Memory files in a store: the text content-addressed (`memory/blobs/<sha256>.md`), and a
 * small pointer per key (`memory/<key>.json` → { hash, tokens, updatedAt }). A read checks the text
 * against the pointer's hash, so a file altered in the store never reaches a model. Store GC leaves
 * `memory/` alone (it touches only blob kinds it knows).
 */
import { createHash } from 'node:crypto';
import type { MemoryFile } from '../../core/context/memory';
import { estimateTextTokens } from '../../core/tokens';
import { StoreIntegrityError } from './store-errors';
import type { TranscriptStore } from './transcript-store';
import { loadJson, saveJson } from './transcripts';

export interface MemoryPointer {
  hash: string;
  tokens: number;
  updatedAt: string;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function memoryPointerKey(key: string): string {
  return `memory/${key}.json`;
}

export function memoryBlobKey(hash: string): string {
  return `memory/blobs/${hash}.md`;
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

export class MemoryFiles {
  constructor(private readonly store: TranscriptStore) {}

  async load(key: string): Promise<MemoryFile | undefined> {
    const pointerKey = memoryPointerKey(key);
    const pointer = await loadJson<MemoryPointer>(this.store, pointerKey);
    if (!pointer) return undefined;
    if (typeof pointer.hash !== 'string' || !/^[0-9a-f]{64}$/.test(pointer.hash)) throw new StoreIntegrityError(pointerKey, 'its hash is not a sha256');
    const blobKey = memoryBlobKey(pointer.hash);
    const blob = await this.store.get(blobKey);
    if (!blob) throw new StoreIntegrityError(blobKey, 'the memory text it points at is missing');
    const text = decoder.decode(blob);
    const actual = sha256(text);
    if (actual !== pointer.hash) throw new StoreIntegrityError(blobKey, `it hashes to ${actual}`);
    return { text, hash: pointer.hash, tokens: pointer.tokens };
  }

  async save(key: string, text: string, now = new Date()): Promise<MemoryFile> {
    const hash = sha256(text);
    const tokens = estimateTextTokens(text);
    // Text first: a pointer never names a blob that is not there yet.
    await this.store.put(memoryBlobKey(hash), encoder.encode(text));
    await saveJson(this.store, memoryPointerKey(key), { hash, tokens, updatedAt: now.toISOString() } satisfies MemoryPointer);
    return { text, hash, tokens };
  }
}
