/**
 * The store blobs a history refers to, found by walking its payloads (decoded with the default
 * converter) and, in turn, the blobs they name:
 *
 * - required: what a run cannot be read or replayed without: payloads offloaded to external storage
 *   (Temporal's reference payloads: their claim key), transcript segments (every `{ head, count }`
 *   transcript ref: model inputs' base, replies' stored, segments' parents and load paths), tool results
 *   by `contentRef`, artifacts (`artifact.ref`, and the `[artifact <sha256>:` a model reads), and a
 *   prelude a model call names by hash only;
 * - candidates: any other 16- or 64-hex token (as `fh store gc` marks), tried under each key shape; the
 *   exporter keeps those the store has (reply archive chunks, a prelude also carried inline), verify
 *   does not ask for them.
 *
 * Export and verify run the same walk: what export followed, verify checks is in the bundle.
 */
import { temporal } from '@temporalio/proto';
import { decodeReferencePayload, isReferencePayload } from '@temporalio/common/lib/internal-non-workflow';
import type { Payload } from '@temporalio/common';
import { segmentKey } from '../../activities/stores/transcripts';
import { toolResultKey } from '../../activities/stores/tool-results';
import { replyChunkKey } from '../../activities/stores/reply-archive-store';

export interface BlobReference {
  key: string;
  /** Where it was found: a history part and event, or a blob's key. */
  from: string;
  required: boolean;
}

const HEAD = /^[0-9a-f]{16}$/;
const SHA = /^[0-9a-f]{64}$/;
const ARTIFACT = /\[artifact ([0-9a-f]{64}):/g;
const TOKEN = /\b(?:[0-9a-f]{64}|[0-9a-f]{16})\b/g;

const preludeKey = (hash: string): string => `preludes/${hash}.json`;

/** The references in a history (proto objects as parseHistoryJSON returns), each named `${part} event N`. */
export function historyReferences(events: readonly unknown[], part: string): BlobReference[] {
  const out: BlobReference[] = [];
  events.forEach((e, i) => {
    const id = Number((e as { eventId?: unknown }).eventId ?? i + 1);
    const from = `${part} event ${id}`;
    forEachPayload(e, (p) => payloadReferences(p, from, out));
  });
  return out;
}

/** The references inside a stored blob, by its key's kind. */
export function blobReferences(key: string, bytes: Uint8Array): BlobReference[] {
  const out: BlobReference[] = [];
  const from = `blob ${key}`;
  if (key.startsWith('payloads/')) {
    try {
      payloadReferences(temporal.api.common.v1.Payload.decode(bytes) as Payload, from, out);
    } catch {
      // not a payload: it is still hashed, only not followed
    }
    return out;
  }
  if (key.startsWith('transcripts/') || key.startsWith('replies/') || key.startsWith('checkpoints/')) {
    const text = Buffer.from(bytes).toString('utf8');
    try {
      valueReferences(JSON.parse(text), from, out);
    } catch {
      tokenCandidates(text, from, out);
    }
  }
  return out;
}

function payloadReferences(p: Payload, from: string, out: BlobReference[]): void {
  if (isReferencePayload(p)) {
    try {
      const key = decodeReferencePayload(p).claimData.key;
      if (key) out.push({ key, from, required: true });
    } catch {
      // an unreadable claim names nothing to fetch
    }
    return;
  }
  const encoding = p.metadata?.encoding ? Buffer.from(p.metadata.encoding).toString('utf8') : '';
  if (encoding !== 'json/plain' || !p.data) return;
  const text = Buffer.from(p.data).toString('utf8');
  try {
    valueReferences(JSON.parse(text), from, out);
  } catch {
    tokenCandidates(text, from, out);
  }
}

/** References in a decoded JSON value. */
export function valueReferences(value: unknown, from: string, out: BlobReference[]): void {
  const walk = (v: unknown, parentKey?: string): void => {
    if (typeof v === 'string') {
      for (const m of v.matchAll(ARTIFACT)) out.push({ key: toolResultKey(m[1]!), from, required: true });
      tokenCandidates(v, from, out);
      return;
    }
    if (Array.isArray(v)) return v.forEach((x) => walk(x));
    if (!v || typeof v !== 'object') return;
    const o = v as Record<string, unknown>;
    if (typeof o.head === 'string' && HEAD.test(o.head) && typeof o.count === 'number' && o.count > 0) {
      out.push({ key: segmentKey(o.head), from, required: true });
    }
    if (typeof o.contentRef === 'string' && SHA.test(o.contentRef)) out.push({ key: toolResultKey(o.contentRef), from, required: true });
    if (parentKey === 'artifact' && typeof o.ref === 'string' && SHA.test(o.ref)) out.push({ key: toolResultKey(o.ref), from, required: true });
    // A model call's prelude by hash only: the store holds it (since the fh-prelude-first patch).
    if (parentKey === 'prelude' && typeof o.hash === 'string' && HEAD.test(o.hash)) {
      out.push({ key: preludeKey(o.hash), from, required: o.value === undefined });
    }
    for (const [k, x] of Object.entries(o)) walk(x, k);
  };
  walk(value);
}

/** Every key shape a bare hash token could name (kept only when the store has it). */
function tokenCandidates(text: string, from: string, out: BlobReference[]): void {
  for (const [t] of text.matchAll(TOKEN)) {
    const keys = t.length === 64 ? [toolResultKey(t), `payloads/${t}`] : [segmentKey(t), preludeKey(t), replyChunkKey(t)];
    for (const key of keys) out.push({ key, from, required: false });
  }
}

/** Calls `fn` with every Payload-shaped object in a proto message tree. */
function forEachPayload(value: unknown, fn: (p: Payload) => void): void {
  const seen = new Set<unknown>();
  const walk = (v: unknown): void => {
    if (!v || typeof v !== 'object' || seen.has(v) || v instanceof Uint8Array) return;
    seen.add(v);
    if (Array.isArray(v)) return v.forEach(walk);
    const o = v as Record<string, unknown>;
    if (o.metadata && typeof o.metadata === 'object' && !Array.isArray(o.metadata) && (o.data === undefined || o.data === null || o.data instanceof Uint8Array)) {
      const meta = o.metadata as Record<string, unknown>;
      if (Object.values(meta).every((m) => m instanceof Uint8Array)) {
        fn(o as Payload);
        return;
      }
    }
    for (const x of Object.values(o)) walk(x);
  };
  walk(value);
}
