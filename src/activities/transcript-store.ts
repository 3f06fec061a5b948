import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * A content-addressed blob store shared by the workers of one deployment: transcript segments and
 * large payloads (through the external-storage driver) live here instead of in workflow history.
 * The default is a local directory; workers on several machines need a shared implementation
 * (an object store, a database) of this same two-method interface.
 */
export interface TranscriptStore {
  get(key: string): Promise<Uint8Array | undefined>;
  put(key: string, data: Uint8Array): Promise<void>;
}

const SAFE_KEY = /^[A-Za-z0-9_\-/.]+$/;

export class FileTranscriptStore implements TranscriptStore {
  constructor(readonly dir: string = defaultStoreDir()) {}

  async get(key: string): Promise<Uint8Array | undefined> {
    try {
      return await fs.readFile(this.file(key));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  async put(key: string, data: Uint8Array): Promise<void> {
    const file = this.file(key);
    await fs.mkdir(path.dirname(file), { recursive: true });
    // Write then rename: a reader never sees half a blob, and equal keys hold equal content anyway.
    const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    await fs.writeFile(tmp, data);
    await fs.rename(tmp, file);
  }

  private file(key: string): string {
    if (!SAFE_KEY.test(key) || key.includes('..')) throw new Error(`invalid store key: ${key}`);
    return path.join(this.dir, key);
  }
}

export class MemoryTranscriptStore implements TranscriptStore {
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

export function defaultStoreDir(): string {
  return process.env.FH_STORE_DIR ?? path.join(os.tmpdir(), 'fabric-harness-store');
}
