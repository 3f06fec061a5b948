/**
 * Inline sessions on disk: one JSON Lines file per session, `<dir>/<id>.jsonl`. Line 1 is the header
 * (what a listing needs: title, status, labels, times), every further line one conversation entry.
 * Listing reads only the first line of each file; a save replaces the whole file atomically (temp file,
 * fsync, rename, fsync of the directory), so a crash mid-save leaves the previous version.
 */
import { randomBytes } from 'node:crypto';
import { promises as nodeFs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { z } from 'zod';
import type { Entry } from '../core/entries';
import {
  InvalidSessionHeaderError,
  InvalidSessionIdError,
  SESSION_ID_PATTERN,
  SessionExistsError,
  SessionFileCorruptError,
  SessionNotFoundError,
} from './session-errors';

const epochMs = z.number().int().nonnegative();

export const sessionLabelSchema = z.strictObject({ name: z.string().min(1).max(100), value: z.union([z.string(), z.number(), z.boolean()]).optional() });

export const inlineSessionHeaderSchema = z.object({
  version: z.literal(1),
  id: z.string().regex(SESSION_ID_PATTERN),
  agent: z.string().min(1),
  title: z.string().optional(),
  /** todo, in-progress, needs-review, done, cancelled, or a custom status of the agent's. */
  status: z.string().min(1),
  labels: z.array(sessionLabelSchema),
  flagged: z.boolean(),
  archived: z.boolean(),
  createdAt: epochMs,
  lastUsedAt: epochMs,
  lastMessageAt: epochMs.optional(),
  /** User messages answered (as on Temporal); before 0.5.0 the entry count (with no `entryCount`). */
  messageCount: z.number().int().nonnegative(),
  /** Entry lines after the header: a save that stopped at a line boundary is caught by it. */
  entryCount: z.number().int().nonnegative().optional(),
  settings: z.object({
    model: z.string().min(1).optional(),
    permissionMode: z.enum(['explore', 'ask', 'execute']).optional(),
    workingDirectory: z.string().optional(),
  }),
});

export type InlineSessionHeader = z.infer<typeof inlineSessionHeaderSchema>;
export type SessionLabel = z.infer<typeof sessionLabelSchema>;

// Entries keep fields this version does not know (loose objects), so a load and a save lose nothing.
const usageSchema = z.looseObject({ inputTokens: z.number(), outputTokens: z.number() });
const textBlock = z.looseObject({ type: z.literal('text'), text: z.string() });
const toolUseBlock = z.looseObject({ type: z.literal('tool_use'), id: z.string(), name: z.string(), input: z.unknown() });
const thinkingBlock = z.looseObject({ type: z.literal('thinking'), thinking: z.string(), signature: z.string() });
const redactedThinkingBlock = z.looseObject({ type: z.literal('redacted_thinking'), data: z.string() });
const toolResultBlock = z.looseObject({ type: z.literal('tool_result'), tool_use_id: z.string(), content: z.string(), is_error: z.boolean().optional() });
export const entrySchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('user'), text: z.string() }),
  z.looseObject({
    type: z.literal('assistant'),
    content: z.array(z.discriminatedUnion('type', [thinkingBlock, redactedThinkingBlock, textBlock, toolUseBlock])),
    stopReason: z.string().optional(),
    model: z.string().optional(),
    usage: usageSchema.optional(),
  }),
  z.looseObject({ type: z.literal('tool_results'), results: z.array(toolResultBlock) }),
  z.looseObject({
    type: z.literal('summary'),
    summary: z.string(),
    userMessages: z.array(z.string()),
    files: z.looseObject({ read: z.array(z.string()), modified: z.array(z.string()) }),
    compactedEntries: z.number().int().nonnegative(),
    fallback: z.boolean(),
  }),
]);

/** The parts of `fs.promises` the store uses; tests inject one to count bytes read or to fail a step. */
export type SessionFs = Pick<typeof nodeFs, 'open' | 'readdir' | 'rename' | 'link' | 'unlink' | 'mkdir'>;

export interface JsonlSessionStoreOptions {
  /** Default: $FH_SESSIONS_DIR, else $XDG_DATA_HOME/fabric-harness/sessions or ~/.local/share/fabric-harness/sessions. */
  dir?: string;
  fs?: SessionFs;
}

export interface ListSessionsOptions {
  includeArchived?: boolean;
  /** Called for a file whose header cannot be read, which is then left out; without it, list() throws. */
  onCorrupt?: (error: SessionFileCorruptError) => void;
}

/** A header line longer than this is not a header (a file that is not ours, or a broken one). */
const MAX_HEADER_BYTES = 1024 * 1024;
const HEADER_CHUNK_BYTES = 4096;
/** Lines are written in batches of about this size: one write per line is slow, one string per file is big. */
const WRITE_BATCH_CHARS = 1024 * 1024;
const LIST_CONCURRENCY = 32;
const FILE_SUFFIX = '.jsonl';

export function defaultSessionsDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.FH_SESSIONS_DIR) return path.resolve(env.FH_SESSIONS_DIR);
  const xdg = env.XDG_DATA_HOME && path.isAbsolute(env.XDG_DATA_HOME) ? env.XDG_DATA_HOME : path.join(os.homedir(), '.local', 'share');
  return path.join(xdg, 'fabric-harness', 'sessions');
}

/** Throws InvalidSessionIdError unless `id` is a slug (so it can only name a file directly in the directory). */
export function checkSessionId(id: unknown): string {
  if (typeof id !== 'string' || !SESSION_ID_PATTERN.test(id)) throw new InvalidSessionIdError(id);
  return id;
}

export class JsonlSessionStore {
  readonly dir: string;
  private readonly fs: SessionFs;
  private dirReady?: Promise<void>;

  constructor(options: JsonlSessionStoreOptions = {}) {
    this.dir = path.resolve(options.dir ?? defaultSessionsDir());
    this.fs = options.fs ?? nodeFs;
  }

  fileOf(id: string): string {
    return path.join(this.dir, `${checkSessionId(id)}${FILE_SUFFIX}`);
  }

  /** Writes a new session file with no entries; SessionExistsError if the id is taken. */
  async create(header: InlineSessionHeader): Promise<InlineSessionHeader> {
    const h = this.checkHeader({ ...header, messageCount: 0, entryCount: 0 });
    await this.writeAtomically(h.id, [headerLine(h)], { exclusive: true });
    return h;
  }

  /** Replaces the session file with this header and these entries, atomically. */
  async save(header: InlineSessionHeader, entries: readonly Entry[]): Promise<InlineSessionHeader> {
    const h = this.checkHeader({ ...header, entryCount: entries.length });
    await this.writeAtomically(h.id, linesOf(h, entries));
    return h;
  }

  /** The header alone: reads the file up to its first newline, never the entries. */
  async readHeader(id: string): Promise<InlineSessionHeader> {
    const file = this.fileOf(id);
    const handle = await this.openExisting(id, file);
    try {
      return parseHeader((await readFirstLine(handle, file)).text, file, id);
    } finally {
      await handle.close();
    }
  }

  /** Every session's header, most recently active first (lastMessageAt, else lastUsedAt). */
  async list(options: ListSessionsOptions = {}): Promise<InlineSessionHeader[]> {
    let names: string[];
    try {
      names = await this.fs.readdir(this.dir);
    } catch (err) {
      if (isCode(err, 'ENOENT')) return [];
      throw err;
    }
    // Temp files (".<id>.jsonl.<pid>.<rand>.tmp") and anything else that is not `<id>.jsonl` are not sessions.
    const ids = names.filter((n) => n.endsWith(FILE_SUFFIX)).map((n) => n.slice(0, -FILE_SUFFIX.length)).filter((id) => SESSION_ID_PATTERN.test(id));
    const headers: InlineSessionHeader[] = [];
    await forEachLimited(ids, LIST_CONCURRENCY, async (id) => {
      try {
        headers.push(await this.readHeader(id));
      } catch (err) {
        if (err instanceof SessionNotFoundError) return; // deleted while we listed
        if (err instanceof SessionFileCorruptError && options.onCorrupt) return options.onCorrupt(err);
        throw err;
      }
    });
    return headers
      .filter((h) => options.includeArchived || !h.archived)
      .sort((a, b) => activity(b) - activity(a) || a.id.localeCompare(b.id));
  }

  async load(id: string): Promise<{ header: InlineSessionHeader; entries: Entry[] }> {
    const file = this.fileOf(id);
    const handle = await this.openExisting(id, file);
    let text: string;
    try {
      text = await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
    const lines = text.split('\n');
    // A complete file ends with a newline, so the last piece is empty.
    if (lines.length < 2 || lines[lines.length - 1] !== '') {
      throw new SessionFileCorruptError(file, lines.length, 'the file ends in the middle of a line (an interrupted write?)');
    }
    lines.pop();
    const header = parseHeader(lines[0]!, file, id);
    const entries = lines.slice(1).map((line, i) => parseEntry(line, file, i + 2));
    const counted = header.entryCount ?? header.messageCount; // before 0.5.0 messageCount counted the entries
    if (entries.length !== counted) {
      throw new SessionFileCorruptError(file, lines.length, `the header counts ${counted} entries, the file has ${entries.length}`);
    }
    return { header, entries };
  }

  async delete(id: string): Promise<void> {
    const file = this.fileOf(id);
    try {
      await this.fs.unlink(file);
    } catch (err) {
      if (isCode(err, 'ENOENT')) throw new SessionNotFoundError(id, this.dir);
      throw err;
    }
  }

  async archive(id: string, archived: boolean): Promise<InlineSessionHeader> {
    return this.updateHeader(id, (h) => ({ ...h, archived }));
  }

  /**
   * Rewrites line 1 and copies the entry lines after it byte for byte (atomically, like save): a header
   * change costs a copy, not a parse of the whole conversation.
   */
  async updateHeader(id: string, update: (header: InlineSessionHeader) => InlineSessionHeader): Promise<InlineSessionHeader> {
    const file = this.fileOf(id);
    const handle = await this.openExisting(id, file);
    try {
      const first = await readFirstLine(handle, file);
      const old = parseHeader(first.text, file, id);
      const next = this.checkHeader({ ...update(old), id, messageCount: old.messageCount, ...(old.entryCount !== undefined ? { entryCount: old.entryCount } : {}) });
      const rest = handle.createReadStream({ start: first.bytes + 1, autoClose: false });
      await this.writeAtomically(id, concat([headerLine(next)], rest));
      return next;
    } finally {
      await handle.close();
    }
  }

  private checkHeader(header: InlineSessionHeader): InlineSessionHeader {
    checkSessionId(header.id);
    const parsed = inlineSessionHeaderSchema.safeParse(header);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new InvalidSessionHeaderError(issue.path.map(String).join('.'), issue.message);
    }
    return parsed.data;
  }

  private async openExisting(id: string, file: string) {
    try {
      return await this.fs.open(file, 'r');
    } catch (err) {
      if (isCode(err, 'ENOENT')) throw new SessionNotFoundError(id, this.dir);
      throw err;
    }
  }

  private ensureDir(): Promise<void> {
    // 0700: conversations are private to the user (the mode applies to directories created here).
    return (this.dirReady ??= this.fs.mkdir(this.dir, { recursive: true, mode: 0o700 }).then(() => undefined, (err) => {
      this.dirReady = undefined;
      throw err;
    }));
  }

  /**
   * Temp file in the same directory (same file system, so the rename is atomic), written, fsynced, then
   * renamed over the session file (or linked, for a new one: link fails when the name is taken), then
   * the directory fsynced so the rename itself survives a power loss.
   */
  private async writeAtomically(id: string, data: Iterable<string | Buffer> | AsyncIterable<string | Buffer>, opts: { exclusive?: boolean } = {}): Promise<void> {
    await this.ensureDir();
    const file = this.fileOf(id);
    const temp = path.join(this.dir, `.${id}${FILE_SUFFIX}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
    let tempExists = false;
    try {
      const out = await this.fs.open(temp, 'wx', 0o600);
      tempExists = true;
      try {
        for await (const chunk of data) await writeAll(out, chunk);
        await out.sync();
      } finally {
        await out.close();
      }
      if (opts.exclusive) {
        try {
          await this.fs.link(temp, file);
        } catch (err) {
          if (isCode(err, 'EEXIST')) throw new SessionExistsError(id, this.dir);
          throw err;
        }
        await this.fs.unlink(temp);
      } else {
        await this.fs.rename(temp, file);
      }
      tempExists = false;
      await this.syncDir();
    } finally {
      if (tempExists) await this.fs.unlink(temp).catch(() => undefined);
    }
  }

  private async syncDir(): Promise<void> {
    const handle = await this.fs.open(this.dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  }
}

function headerLine(header: InlineSessionHeader): string {
  return `${JSON.stringify(header)}\n`;
}

function* linesOf(header: InlineSessionHeader, entries: readonly Entry[]): Generator<string> {
  let batch = headerLine(header);
  for (const entry of entries) {
    batch += `${JSON.stringify(entry)}\n`;
    if (batch.length >= WRITE_BATCH_CHARS) {
      yield batch;
      batch = '';
    }
  }
  if (batch) yield batch;
}

async function* concat(head: Iterable<string>, rest: AsyncIterable<string | Buffer>): AsyncGenerator<string | Buffer> {
  yield* head;
  for await (const chunk of rest) yield chunk as string | Buffer;
}

type FileHandle = Awaited<ReturnType<SessionFs['open']>>;

async function writeAll(handle: FileHandle, chunk: string | Buffer): Promise<void> {
  const buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
  for (let offset = 0; offset < buf.length; ) offset += (await handle.write(buf, offset, buf.length - offset)).bytesWritten;
}

/** Reads chunks until the first newline: the header's text and its length in bytes (without the newline). */
async function readFirstLine(handle: FileHandle, file: string): Promise<{ text: string; bytes: number }> {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const chunk = Buffer.alloc(HEADER_CHUNK_BYTES);
    const { bytesRead } = await handle.read(chunk, 0, HEADER_CHUNK_BYTES, total);
    if (bytesRead === 0) {
      throw new SessionFileCorruptError(file, 1, total === 0 ? 'the file is empty (no header line)' : 'the file ends inside the header line');
    }
    const newline = chunk.subarray(0, bytesRead).indexOf(0x0a);
    if (newline >= 0) {
      chunks.push(chunk.subarray(0, newline));
      const bytes = total + newline;
      // A newline byte is never part of a multi-byte UTF-8 character, so cutting there is safe.
      return { text: Buffer.concat(chunks).toString('utf8'), bytes };
    }
    chunks.push(chunk.subarray(0, bytesRead));
    total += bytesRead;
    if (total > MAX_HEADER_BYTES) throw new SessionFileCorruptError(file, 1, `no newline in the first ${MAX_HEADER_BYTES} bytes: not a session header`);
  }
}

function parseHeader(line: string, file: string, id: string): InlineSessionHeader {
  const header = parseLine(inlineSessionHeaderSchema, line, file, 1, 'header');
  if (header.id !== id) throw new SessionFileCorruptError(file, 1, `the header names session '${header.id}', the file is '${id}${FILE_SUFFIX}'`);
  return header;
}

function parseEntry(line: string, file: string, lineNo: number): Entry {
  return parseLine(entrySchema, line, file, lineNo, 'entry') as Entry;
}

function parseLine<T>(schema: z.ZodType<T>, line: string, file: string, lineNo: number, what: string): T {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    throw new SessionFileCorruptError(file, lineNo, `the ${what} is not JSON (${(err as Error).message})`);
  }
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new SessionFileCorruptError(file, lineNo, `bad ${what}: ${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`);
}

function activity(h: InlineSessionHeader): number {
  return h.lastMessageAt ?? h.lastUsedAt;
}

function isCode(err: unknown, code: string): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === code;
}

async function forEachLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
