import { mkdirSync, promises as fs, readFileSync, renameSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { StoreUnsafeError } from './store-errors';

/**
 * A content-addressed blob store shared by the workers of one deployment: transcript segments and
 * large payloads (through the external-storage driver) live here instead of in workflow history.
 * The default is a local directory; workers on several machines need a shared implementation
 * (an object store, a database) of this same interface.
 *
 * Durability contract: a blob must live as long as any workflow history that refers to it (open runs,
 * and closed runs for the namespace retention). `fh store gc` removes what no retained history refers to.
 */
export interface TranscriptStore {
  get(key: string): Promise<Uint8Array | undefined>;
  put(key: string, data: Uint8Array): Promise<void>;
  /** Where the blobs live, for error messages (a directory, a bucket URL). */
  readonly location?: string;
  /**
   * Marks an existing blob as just used (a store that deduplicates instead of writing again), so a
   * garbage collection running now keeps it for its grace period. Optional.
   */
  touch?(key: string): Promise<void>;
  /**
   * Every blob whose key starts with `prefix` (the store's own keys, without any prefix the store adds).
   * Optional: with `delete`, it makes the store collectable by `collectStoreGarbage` / `fh store gc`.
   */
  list?(prefix: string): AsyncIterable<StoredBlob>;
  /** Removes these keys; a key that is already gone is not an error. Optional (see `list`). */
  delete?(keys: string[]): Promise<void>;
}

/** A blob as a store lists it: what garbage collection needs to decide and to measure. */
export interface StoredBlob {
  key: string;
  size: number;
  /** When it was written or last touched: the grace period counts from here. */
  lastModified: Date;
}

/** A store garbage collection can sweep: it lists and deletes. */
export type CollectableStore = TranscriptStore & Required<Pick<TranscriptStore, 'list' | 'delete'>>;

export function isCollectable(store: TranscriptStore): store is CollectableStore {
  return typeof store.list === 'function' && typeof store.delete === 'function';
}

const SAFE_KEY = /^[A-Za-z0-9_\-/.]+$/;
/** Writes up to this size are synchronous (see FileTranscriptStore.get). */
const SYNC_WRITE_MAX_BYTES = 256 * 1024;

/**
 * The default store: a private directory (0700, files 0600). A directory owned by another user, or
 * writable by group or others, is refused (STORE_UNSAFE): whoever can write it could feed a model
 * altered transcripts, and whoever can read it reads every conversation.
 */
export class FileTranscriptStore implements TranscriptStore {
  readonly dir: string;
  private ready: Promise<void> | undefined;

  constructor(dir: string = defaultStoreDir()) {
    this.dir = path.resolve(dir);
  }

  get location(): string {
    return this.dir;
  }

  /*
   * Reads, and writes up to SYNC_WRITE_MAX_BYTES, are synchronous. A model call reads and writes a
   * few small blobs (a transcript segment, a tool result: a few KB), which on a local disk take
   * microseconds, while each asynchronous file operation costs a thread-pool round trip and several
   * promises (each one more expensive under the activity context's async hooks): in the worker's
   * CPU profile the async open/write/close/rename of two small blobs per call cost more than the
   * rest of the store's work. Larger writes (merged checkpoints of long conversations) stay
   * asynchronous, so the event loop never blocks on megabytes.
   */
  async get(key: string): Promise<Uint8Array | undefined> {
    const file = this.file(key);
    await this.checked();
    try {
      return readFileSync(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  async put(key: string, data: Uint8Array): Promise<void> {
    const file = this.file(key);
    await this.checked();
    const dir = path.dirname(file);
    this.madeDir(dir);
    // Write then rename: a reader never sees half a blob, and equal keys hold equal content anyway.
    const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    const write = (): Promise<void> | void => (data.length <= SYNC_WRITE_MAX_BYTES ? writeFileSync(tmp, data, { mode: 0o600 }) : fs.writeFile(tmp, data, { mode: 0o600 }));
    try {
      await write();
    } catch (err) {
      // The directory went away since it was made (another process swept or cleared the store).
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      this.dirs.delete(dir);
      this.madeDir(dir);
      await write();
    }
    renameSync(tmp, file);
  }

  /**
   * Directories this store made: a put makes its directory once, not on every call (a recursive mkdir
   * per put showed up in the worker's CPU profile). Keys use a few hundred directories; bounded anyway.
   */
  private readonly dirs = new Set<string>();

  private madeDir(dir: string): void {
    if (this.dirs.has(dir)) return;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (this.dirs.size >= 1024) this.dirs.clear();
    this.dirs.add(dir);
  }

  async touch(key: string): Promise<void> {
    const now = new Date();
    await fs.utimes(this.file(key), now, now).catch(() => undefined);
  }

  async *list(prefix: string): AsyncIterable<StoredBlob> {
    if (prefix && (!SAFE_KEY.test(prefix) || prefix.includes('..'))) throw new Error(`invalid store key prefix: ${prefix}`);
    await this.checked();
    // Walk only the directory the prefix names, then filter by the rest (S3's prefix semantics).
    const start = path.join(this.dir, prefix.slice(0, prefix.lastIndexOf('/') + 1));
    const walk = async function* (dir: string, root: string): AsyncGenerator<StoredBlob> {
      const entries = await fs.readdir(dir, { withFileTypes: true }).catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return [];
        throw err;
      });
      for (const e of entries) {
        const file = path.join(dir, e.name);
        if (e.isDirectory()) yield* walk(file, root);
        else if (e.isFile()) {
          const key = path.relative(root, file).split(path.sep).join('/');
          if (!key.startsWith(prefix)) continue;
          const st = await fs.stat(file).catch(() => undefined);
          if (st) yield { key, size: st.size, lastModified: st.mtime };
        }
      }
    };
    yield* walk(start, this.dir);
  }

  async delete(keys: string[]): Promise<void> {
    const files = keys.map((k) => this.file(k));
    await this.checked();
    for (const file of files) await fs.rm(file, { force: true });
  }

  /** Creates the directory (0700) or checks an existing one, once per store object. */
  checked(): Promise<void> {
    this.ready ??= ensurePrivateDir(this.dir).catch((err) => {
      this.ready = undefined; // a fixed directory can be retried
      throw err;
    });
    return this.ready;
  }

  private file(key: string): string {
    if (!SAFE_KEY.test(key) || key.includes('..')) throw new Error(`invalid store key: ${key}`);
    return path.join(this.dir, key);
  }
}

/** Makes `dir` (0700) or checks it: owned by this user, not group/world-writable; tightens it to 0700. */
export async function ensurePrivateDir(dir: string): Promise<void> {
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const st = await fs.stat(dir);
  if (!st.isDirectory()) throw new StoreUnsafeError(dir, 'is not a directory');
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) throw new StoreUnsafeError(dir, `is owned by uid ${st.uid}`);
  if (st.mode & 0o022) throw new StoreUnsafeError(dir, `is writable by ${st.mode & 0o020 ? 'group' : 'others'} (mode ${(st.mode & 0o777).toString(8)})`);
  if ((st.mode & 0o777) !== 0o700) await fs.chmod(dir, 0o700);
}

export class MemoryTranscriptStore implements TranscriptStore {
  readonly location = 'memory';
  private readonly blobs = new Map<string, Uint8Array>();
  async get(key: string): Promise<Uint8Array | undefined> {
    return this.blobs.get(key);
  }
  async put(key: string, data: Uint8Array): Promise<void> {
    this.blobs.set(key, data);
  }
  get size(): number {
    return this.blobs.size;
  }
}

/**
 * FH_STORE_DIR when set and not empty (empty counts as unset: never "the current directory"), else a
 * per-user data directory that survives reboots: $XDG_DATA_HOME/fabric-harness/store, or
 * ~/.local/share/fabric-harness/store.
 */
export function defaultStoreDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.FH_STORE_DIR) return path.resolve(env.FH_STORE_DIR);
  const xdg = env.XDG_DATA_HOME && path.isAbsolute(env.XDG_DATA_HOME) ? env.XDG_DATA_HOME : path.join(os.homedir(), '.local', 'share');
  return path.join(xdg, 'fabric-harness', 'store');
}
