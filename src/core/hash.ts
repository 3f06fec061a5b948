/**
 * Pure-JS content hashing for transcripts. Runs inside the Temporal workflow sandbox, so no `crypto`:
 * two independent 32-bit multiply/xor lanes (cyrb53-style) give a 64-bit hex digest that is stable
 * across runs, processes and platforms. Not cryptographic — it content-addresses, it does not protect.
 */
import type { Entry } from './entries';

// A module-level binding, not a global lookup per character: inside a vm context (the workflow
// sandbox, jest) every access to the global `Math` goes through a slow interceptor.
const imul = Math.imul;

/** 16 hex characters (two 32-bit lanes) of `s`, hashed over its UTF-16 code units. */
export function hashString(s: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < s.length; i++) {
    const ch = s.charCodeAt(i);
    h1 = imul(h1 ^ ch, 2654435761);
    h2 = imul(h2 ^ ch, 1597334677);
  }
  // Final avalanche so that similar inputs differ in every output bit.
  h1 = imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= imul(h1 ^ (h1 >>> 13), 3266489909);
  return hex32(h2) + hex32(h1);
}

function hex32(n: number): string {
  return (n >>> 0).toString(16).padStart(8, '0');
}

/**
 * JSON with object keys sorted at every level, so that two structurally equal values hash equally
 * whatever order their keys were built in. `undefined` properties are omitted (as JSON.stringify does).
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    const s = JSON.stringify(value);
    return s === undefined ? 'null' : s;
  }
  if (Array.isArray(value)) {
    return '[' + value.map((v) => canonicalJson(v)).join(',') + ']';
  }
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined && typeof obj[k] !== 'function')
    .sort();
  return '{' + keys.map((k) => JSON.stringify(k) + ':' + canonicalJson(obj[k])).join(',') + '}';
}

/** Hash of one history entry (canonical JSON, so key order does not matter). */
export function hashEntry(e: Entry): string {
  return hashString(canonicalJson(e));
}

/** Links an entry hash onto the previous chain hash: chain(n) = H(chain(n-1) ":" entry(n)). */
export function chainHash(prev: string, entryHash: string): string {
  return hashString(prev + ':' + entryHash);
}
