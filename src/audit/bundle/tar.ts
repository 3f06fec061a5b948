/**
 * A deterministic ustar archive, written and read with Node's Buffer only: entries sorted by name,
 * mtime 0, uid/gid 0, mode 0644, no user or group names. The same entries always make the same bytes,
 * which is what lets two exports of one run compare equal. Any `tar` reads it (`tar -tvf bundle.tar`).
 *
 * The reader accepts regular files only, refuses names that climb out (`..`, absolute paths) and
 * repeated names, and checks every header's checksum.
 */
import { BundleFormatError } from './errors';

export interface TarEntry {
  name: string;
  data: Uint8Array;
}

const BLOCK = 512;

/** The archive of these entries (sorted by name here: callers need not). */
export function writeTar(entries: readonly TarEntry[]): Buffer {
  const sorted = [...entries].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const chunks: Buffer[] = [];
  let last: string | undefined;
  for (const e of sorted) {
    if (e.name === last) throw new BundleFormatError(`two entries named ${e.name}`);
    last = e.name;
    chunks.push(header(e.name, e.data.length));
    chunks.push(Buffer.from(e.data.buffer, e.data.byteOffset, e.data.byteLength));
    const pad = (BLOCK - (e.data.length % BLOCK)) % BLOCK;
    if (pad) chunks.push(Buffer.alloc(pad));
  }
  chunks.push(Buffer.alloc(BLOCK * 2)); // the end-of-archive marker: two zero blocks
  return Buffer.concat(chunks);
}

function header(name: string, size: number): Buffer {
  checkName(name);
  const h = Buffer.alloc(BLOCK);
  const [prefix, base] = splitName(name);
  h.write(base, 0, 100, 'utf8');
  octal(h, 100, 8, 0o644);
  octal(h, 108, 8, 0);
  octal(h, 116, 8, 0);
  octal(h, 124, 12, size);
  octal(h, 136, 12, 0);
  h.fill(0x20, 148, 156); // the checksum counts its own field as spaces
  h.write('0', 156, 1, 'ascii'); // a regular file
  h.write('ustar\u000000', 257, 8, 'ascii');
  h.write(prefix, 345, 155, 'utf8');
  const sum = checksum(h);
  h.write(`${sum.toString(8).padStart(6, '0')}\u0000 `, 148, 8, 'ascii');
  return h;
}

/** ustar keeps names of up to 100 bytes, or a prefix of up to 155 and a name of up to 100 split at a '/'. */
function splitName(name: string): [string, string] {
  if (Buffer.byteLength(name) <= 100) return ['', name];
  for (let i = name.lastIndexOf('/'); i > 0; i = name.lastIndexOf('/', i - 1)) {
    const prefix = name.slice(0, i);
    const base = name.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(base) <= 100) return [prefix, base];
  }
  throw new BundleFormatError(`entry name too long for ustar: ${name}`);
}

function octal(h: Buffer, at: number, len: number, value: number): void {
  h.write(`${value.toString(8).padStart(len - 1, '0')}\u0000`, at, len, 'ascii');
}

function checksum(h: Buffer): number {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : h[i]!;
  return sum;
}

function checkName(name: string): void {
  if (!name || name.startsWith('/') || name.split('/').some((p) => p === '..' || p === '') || name.includes('\u0000')) {
    throw new BundleFormatError(`unsafe entry name ${JSON.stringify(name)}`);
  }
}

/** The entries of an archive, by name, in archive order. Throws BundleFormatError on anything else. */
export function readTar(buf: Uint8Array): Map<string, Buffer> {
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  const out = new Map<string, Buffer>();
  let at = 0;
  while (at + BLOCK <= b.length) {
    const h = b.subarray(at, at + BLOCK);
    if (h.every((x) => x === 0)) return out;
    const stored = parseInt(field(h, 148, 8).trim() || 'x', 8);
    if (stored !== checksum(h)) throw new BundleFormatError(`the tar header at byte ${at} is damaged (checksum)`);
    const type = String.fromCharCode(h[156]!);
    const prefix = field(h, 345, 155);
    const name = prefix ? `${prefix}/${field(h, 0, 100)}` : field(h, 0, 100);
    const size = parseInt(field(h, 124, 12).trim() || '0', 8);
    if (type !== '0' && type !== '\u0000') throw new BundleFormatError(`entry ${name} is not a regular file (type ${JSON.stringify(type)})`);
    checkName(name);
    if (out.has(name)) throw new BundleFormatError(`entry ${name} appears twice`);
    const start = at + BLOCK;
    if (!Number.isFinite(size) || size < 0 || start + size > b.length) throw new BundleFormatError(`entry ${name} is cut short`);
    out.set(name, b.subarray(start, start + size));
    at = start + Math.ceil(size / BLOCK) * BLOCK;
  }
  throw new BundleFormatError('the archive has no end marker (it is cut short)');
}

function field(h: Buffer, at: number, len: number): string {
  const raw = h.subarray(at, at + len);
  const end = raw.indexOf(0);
  return raw.subarray(0, end < 0 ? len : end).toString('utf8');
}
