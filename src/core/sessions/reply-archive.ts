/**
 * A session's replies over its whole life, without growing workflow state: a run carries its last
 * replies by value and archives older ones in the store as a chain of content-addressed chunks; what it
 * carries of them is the chain's head and a fixed-size Bloom filter of their message ids. The filter
 * answers "certainly never archived" at once (an unknown id is refused without reading the store) and
 * "maybe" otherwise, which a lookup in the chain settles. Pure code (workflow and activities share it).
 */
import { hashString } from '../hash';

/** A reply, with `asked`: the hash of the message's text (a reused message id with other text is refused). */
export type StoredReply = ({ text: string } | { error: { code: string; message: string } }) & { asked?: string };

/**
 * Replies older than the carried ones, by reference: `head` names the newest chunk of a chain of stored
 * chunks (each names the one before it), and `bloom` is a filter of every message id archived there.
 */
export interface ReplyArchiveIndex {
  head: string;
  bloom: string;
  count: number;
}

/** One stored chunk of archived replies (content-addressed: its key is the hash of its JSON). */
export interface ReplyArchiveChunk {
  prev: string | null;
  replies: Array<[string, StoredReply]>;
}

/**
 * 16 Kibit (2 KiB, 2,732 base64 characters carried per run) and 7 probes: about 1 in 1,600 false
 * "maybe" at 1,000 archived ids, 1 in 40 at 2,500; past that a new message id costs one lookup more
 * often, never a wrong answer.
 */
export const BLOOM_BITS = 16_384;
const PROBES = 7;

/** The hash of a message's text, kept with its reply (`asked`). */
export function askedHash(text: string): string {
  return hashString(text);
}

function probes(id: string): number[] {
  const h = hashString(id);
  const h1 = parseInt(h.slice(0, 8), 16);
  const h2 = parseInt(h.slice(8), 16) | 1;
  const out: number[] = [];
  for (let i = 0; i < PROBES; i++) out.push(((h1 + Math.imul(i, h2)) >>> 0) % BLOOM_BITS);
  return out;
}

/** The filter with `ids` added (a new one when `bloom` is undefined). */
export function bloomAdd(bloom: string | undefined, ids: readonly string[]): string {
  const bits = bloom ? fromBase64(bloom) : new Uint8Array(BLOOM_BITS / 8);
  for (const id of ids) for (const p of probes(id)) bits[p >> 3]! |= 1 << (p & 7);
  return toBase64(bits);
}

/** False: `id` was certainly never added. True: it may have been (look it up). */
export function bloomMayHave(bloom: string, id: string): boolean {
  const bits = fromBase64(bloom);
  return probes(id).every((p) => (bits[p >> 3]! & (1 << (p & 7))) !== 0);
}

// Base64 by hand: the workflow sandbox has neither Buffer nor a guaranteed btoa.
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

function toBase64(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    out += ALPHABET[(n >> 18) & 63]! + ALPHABET[(n >> 12) & 63]! + (i + 1 < bytes.length ? ALPHABET[(n >> 6) & 63]! : '=') + (i + 2 < bytes.length ? ALPHABET[n & 63]! : '=');
  }
  return out;
}

function fromBase64(s: string): Uint8Array {
  const clean = s.replace(/=+$/, '');
  const out = new Uint8Array(Math.floor((clean.length * 6) / 8));
  let buf = 0;
  let bits = 0;
  let j = 0;
  for (const ch of clean) {
    buf = (buf << 6) | ALPHABET.indexOf(ch);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[j++] = (buf >> bits) & 255;
    }
  }
  return out;
}
