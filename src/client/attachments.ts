/**
 * Attachments on the client side: a file given by path or bytes is checked (media type, the provider's
 * and our size limits, PDF pages) before anything is queued, then written to the store under its sha256,
 * and the prompt carries only its reference (core/attachments). The store is the one the client's
 * harness plugin uses for offloaded payloads, which must be the workers' store already: a worker reads
 * the bytes there just before the model call (activities/stores/attachments.ts).
 *
 * Why the client writes them and not the worker: a prompt update's payload is history, and an update
 * carrying the bytes once would put them in history (or, offloaded, keep a claim there and make the
 * workflow hold them in memory until an activity stored them again). Written here, nothing but a
 * reference of about a hundred bytes ever crosses the workflow.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@temporalio/client';
import {
  ATTACHMENT_LIMITS,
  AttachmentTooLargeError,
  AttachmentUnsupportedTypeError,
  attachmentKey,
  checkAttachmentLimits,
  isImage,
  pdfPageCount,
  type AttachmentMediaType,
  type AttachmentRef,
} from '../core/attachments';
import { FabricError } from '../core/errors';
import { FileTranscriptStore, type TranscriptStore } from '../activities/stores/transcript-store';
import { FabricHarnessClientPlugin } from './plugin';

/** A file to send with a prompt: read from a path, or given as bytes (with its media type). */
export type PromptAttachment =
  | { path: string; mediaType?: string; name?: string }
  | { bytes: Uint8Array; mediaType: string; name?: string };

const BY_EXTENSION: Record<string, AttachmentMediaType> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.pdf': 'application/pdf',
  '.txt': 'text/plain',
  '.md': 'text/plain',
  '.csv': 'text/plain',
  '.log': 'text/plain',
  '.json': 'text/plain',
};

/** The media type a file name implies (undefined: none we send). */
export function mediaTypeOf(name: string): AttachmentMediaType | undefined {
  return BY_EXTENSION[path.extname(name).toLowerCase()];
}

/** The store a client writes attachments to: the one given, else its harness plugin's, else the default (FH_STORE_DIR). */
export function attachmentStore(client: Client, store?: TranscriptStore): TranscriptStore {
  if (store) return store;
  // The client's plugin, or the worker's (which a client may be built with too): both are named 'fabric-harness' and hold the store.
  const plugin = (client.options.plugins ?? []).find((p) => p instanceof FabricHarnessClientPlugin || (p.name === 'fabric-harness' && isStore((p as { store?: unknown }).store)));
  return (plugin as { store?: TranscriptStore } | undefined)?.store ?? new FileTranscriptStore();
}

function isStore(v: unknown): v is TranscriptStore {
  return typeof v === 'object' && v !== null && typeof (v as TranscriptStore).get === 'function' && typeof (v as TranscriptStore).put === 'function';
}

/** Checks every attachment, then stores each by hash; returns their references (none stored when one is refused). */
export async function storeAttachments(store: TranscriptStore, attachments: readonly PromptAttachment[] | undefined): Promise<AttachmentRef[] | undefined> {
  if (!attachments || attachments.length === 0) return undefined;
  if (!Array.isArray(attachments)) throw new FabricError('INVALID_INPUT', 'attachments: must be a list');
  const files = [];
  // Sizes first (a stat for a path), so an oversized file is refused before it is read.
  checkAttachmentLimits(await Promise.all(attachments.map((a, i) => describe(a, i))));
  for (const [i, a] of attachments.entries()) files.push(await load(a, `attachments.${i}`));
  const refs: AttachmentRef[] = [];
  for (const f of files) {
    const hash = createHash('sha256').update(f.bytes).digest('hex');
    await store.put(attachmentKey(hash), f.bytes);
    refs.push({ name: f.name, mediaType: f.mediaType, hash, size: f.bytes.length });
  }
  return refs;
}

async function describe(a: PromptAttachment, i: number): Promise<{ mediaType: string; size: number }> {
  const field = `attachments.${i}`;
  if (!a || typeof a !== 'object') throw new FabricError('INVALID_INPUT', `${field}: must be { path } or { bytes, mediaType }`);
  if ('bytes' in a) {
    if (!(a.bytes instanceof Uint8Array)) throw new FabricError('INVALID_INPUT', `${field}.bytes: must be a Uint8Array`);
    if (typeof a.mediaType !== 'string') throw new FabricError('INVALID_INPUT', `${field}.mediaType: required with bytes`);
    return { mediaType: a.mediaType, size: a.bytes.length };
  }
  if (typeof a.path !== 'string') throw new FabricError('INVALID_INPUT', `${field}: must be { path } or { bytes, mediaType }`);
  const mediaType = a.mediaType ?? mediaTypeOf(a.path);
  if (!mediaType) throw new AttachmentUnsupportedTypeError(`${field}.path`, path.extname(a.path) || '(no extension)');
  const stat = await fs.stat(a.path).catch((err: NodeJS.ErrnoException) => {
    throw new FabricError('INVALID_INPUT', `${field}.path: cannot read ${a.path} (${err.code ?? err.message})`);
  });
  if (!stat.isFile()) throw new FabricError('INVALID_INPUT', `${field}.path: ${a.path} is not a file`);
  return { mediaType, size: stat.size };
}

async function load(a: PromptAttachment, field: string): Promise<{ name: string; mediaType: AttachmentMediaType; bytes: Uint8Array }> {
  const bytes = 'bytes' in a ? a.bytes : new Uint8Array(await fs.readFile(a.path));
  const mediaType = (a.mediaType ?? mediaTypeOf((a as { path: string }).path)) as AttachmentMediaType;
  const name = (a.name ?? ('path' in a ? path.basename(a.path) : `attachment${extensionOf(mediaType)}`)).slice(0, ATTACHMENT_LIMITS.nameChars);
  if (bytes.length === 0) throw new FabricError('INVALID_INPUT', `${field}: the file is empty`);
  const sniffed = sniff(bytes);
  // The provider refuses an image whose bytes are not of the type it is sent as.
  if ((isImage(mediaType) || mediaType === 'application/pdf') && sniffed !== mediaType) {
    throw new AttachmentUnsupportedTypeError(`${field}.mediaType`, `${mediaType} (the bytes are ${sniffed ?? 'of no supported type'})`);
  }
  if (mediaType === 'text/plain') {
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      throw new AttachmentUnsupportedTypeError(`${field}.mediaType`, 'text/plain (the bytes are not UTF-8 text)');
    }
  }
  if (mediaType === 'application/pdf') {
    const pages = pdfPageCount(Buffer.from(bytes).toString('latin1'));
    if (pages > ATTACHMENT_LIMITS.pdfPages) throw new AttachmentTooLargeError(`${field}.pages`, pages, ATTACHMENT_LIMITS.pdfPages, 'pages');
  }
  return { name, mediaType, bytes };
}

/** The media type the bytes' signature says, for the types that have one. */
export function sniff(b: Uint8Array): AttachmentMediaType | undefined {
  const starts = (...sig: number[]) => sig.every((v, i) => b[i] === v);
  if (starts(0x89, 0x50, 0x4e, 0x47)) return 'image/png';
  if (starts(0xff, 0xd8, 0xff)) return 'image/jpeg';
  if (starts(0x47, 0x49, 0x46, 0x38)) return 'image/gif';
  if (starts(0x52, 0x49, 0x46, 0x46) && b[8] === 0x57 && b[9] === 0x45 && b[10] === 0x42 && b[11] === 0x50) return 'image/webp';
  if (starts(0x25, 0x50, 0x44, 0x46)) return 'application/pdf';
  return undefined;
}

function extensionOf(mediaType: string): string {
  return Object.entries(BY_EXTENSION).find(([, t]) => t === mediaType)?.[0] ?? '';
}

