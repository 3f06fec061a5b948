/**
 * The Messages request body, serialised once per entry instead of once per call. A conversation's
 * request is its whole history every time, so serialising it whole (what the SDK does with a params
 * object) costs a model call work and garbage in proportion to the conversation's length. Only the
 * last message of a conversation can still change (a later entry of its role merges into it, trailing
 * whitespace, the cache breakpoint): every message before it is final. A worker keeps, per
 * conversation it holds, those final messages as bytes (keyed by the transcript head they end at,
 * which names every entry before it), and each call serialises only the open last message and the new
 * entries. The bytes are exactly those `JSON.stringify` gives for the whole params object
 * (test/unit/request-body.test.ts compares them over random conversations).
 *
 * Not cached (serialised whole, as before): a conversation holding a server compaction block, since a
 * newer one removes the older from earlier messages.
 */
import { Lru } from '../../../core/lru';
import { toApiMessagesWithStarts, type Entry } from '../../../core/entries';
import { withAttachmentBlocks, type AttachmentBytes } from './attachment-blocks';
import { cacheControl, messagesParams, paramsBeforeMessages, withCacheBreakpoint, type MessagesCall, type SerialisedBody } from './messages';

/** Request prefixes a worker keeps by default: one per conversation it holds (see RequestBodiesOptions). */
export const REQUEST_PREFIX_CACHE_SIZE = 64;

/**
 * Bytes that only grow: a prefix appends in place while it is the storage's newest (most calls), and
 * copies otherwise, so a view of the first `used` bytes handed out earlier never changes.
 */
class Storage {
  constructor(
    public buf: Buffer,
    public used: number,
  ) {}
}

/** A conversation's final messages, serialised: the `count` entries before the open one. */
interface Prefix {
  /** `m0,m1,...` (no brackets) in the first `length` bytes of `storage`; empty when there is none. */
  storage: Storage;
  length: number;
  /** The index of the entry that began the open (last) message. */
  tailStart: number;
  /** The entries this prefix covers (the transcript's count at its key). */
  count: number;
}

/** A body to send, and how to keep its prefix once the call's reply is known. */
export interface EncodedBody extends SerialisedBody {
  /** Keeps the prefix of `entries` + `reply` under `key` (the transcript head they end at). */
  remember(key: string, reply: Entry): void;
}

export interface RequestBodiesOptions {
  /** Conversations whose prefix is kept, most recently used first (default {@link REQUEST_PREFIX_CACHE_SIZE}; 0: none). */
  cacheSize?: number;
}

const utf8 = (s: string) => Buffer.from(s, 'utf8');
const COMMA = utf8(',');
const EMPTY = Buffer.alloc(0);
const cold = (): Prefix => ({ storage: new Storage(EMPTY, 0), length: 0, tailStart: 0, count: 0 });

export class RequestBodies {
  private readonly cache: Lru<string, Prefix>;

  constructor(options: RequestBodiesOptions = {}) {
    this.cache = new Lru(options.cacheSize ?? REQUEST_PREFIX_CACHE_SIZE, 'RequestBodies: cacheSize');
  }

  /** How many conversations' prefixes are kept now. */
  get size(): number {
    return this.cache.size;
  }

  /**
   * The body of `call`, with `"stream":true` when streamed. `base` names the entries the call's
   * conversation starts with (the transcript head and count of `call.entries`' first `count`): with a
   * prefix kept under that head, only the entries after it are serialised.
   */
  encode(call: MessagesCall, stream: boolean, base?: { head: string; count: number }): EncodedBody {
    const entries = call.entries;
    const kept = base ? this.cache.get(base.head) : undefined;
    const prefix: Prefix = kept && kept.count === base!.count && kept.count <= entries.length ? kept : cold();
    const cacheable = this.cache.capacity > 0 && !entries.slice(prefix.count).some(hasCompaction);
    const chunks = cacheable ? assemble(call, stream, prefix) : [utf8(JSON.stringify(wholeBody(call, stream)))];
    return {
      chunks,
      length: chunks.reduce((n, c) => n + c.length, 0),
      remember: (key, reply) => {
        if (!cacheable || hasCompaction(reply)) return;
        if (base && kept) this.cache.delete(base.head);
        this.cache.set(key, extend(prefix, entries, reply, call.attachments));
      },
    };
  }
}

/** The body serialised whole, as the SDK does with the params object (what `encode` must equal). */
export function wholeBody(call: MessagesCall, stream: boolean): object {
  const params = messagesParams(call);
  return stream ? { ...params, stream: true } : params;
}

/** `{"model":…,"messages":[closed,tail],…}` from the kept prefix and the entries after it, in chunks (the prefix is not copied). */
function assemble(call: MessagesCall, stream: boolean, prefix: Prefix): Buffer[] {
  const tail = withCacheBreakpoint(withAttachmentBlocks(toApiMessagesWithStarts(call.entries.slice(prefix.tailStart)).messages, call.attachments), cacheControl(call));
  const head = JSON.stringify(paramsBeforeMessages(call));
  const after: Record<string, unknown> = {};
  if (call.contextManagement) after.context_management = { edits: call.contextManagement.edits };
  if (stream) after.stream = true;
  const end = Object.keys(after).length ? `],${JSON.stringify(after).slice(1)}` : ']}';
  const tailJson = tail.map((m) => JSON.stringify(m)).join(',');
  const closed = prefix.storage.buf.subarray(0, prefix.length);
  const joiner = closed.length && tailJson ? COMMA : EMPTY;
  return [utf8(`${head.slice(0, -1)},"messages":[`), closed, joiner, utf8(tailJson + end)].filter((c) => c.length > 0);
}

/** The prefix of `entries` + `reply`: the messages of the old tail and the new entries that are now final. */
function extend(prefix: Prefix, entries: readonly Entry[], reply: Entry, attachments: AttachmentBytes | undefined): Prefix {
  const { messages: plain, starts } = toApiMessagesWithStarts([...entries.slice(prefix.tailStart), reply]);
  const messages = withAttachmentBlocks(plain, attachments);
  const count = entries.length + 1;
  if (messages.length <= 1) return { ...prefix, tailStart: prefix.tailStart + (starts[0] ?? 0), count };
  const final = messages
    .slice(0, -1)
    .map((m) => JSON.stringify(m))
    .join(',');
  const added = utf8(prefix.length ? `,${final}` : final);
  return { ...append(prefix, added), tailStart: prefix.tailStart + starts[starts.length - 1]!, count };
}

/** `added` after the prefix's bytes: in place when the prefix is its storage's newest and there is room, else into a larger copy. */
function append(prefix: Prefix, added: Buffer): { storage: Storage; length: number } {
  const length = prefix.length + added.length;
  let storage = prefix.storage;
  if (storage.used !== prefix.length || storage.buf.length < length) {
    // Doubling: the copies add up to at most twice the final size, whatever the number of calls.
    const buf = Buffer.allocUnsafe(Math.max(length, storage.used === prefix.length ? 2 * storage.buf.length : length, 1024));
    storage.buf.copy(buf, 0, 0, prefix.length);
    storage = new Storage(buf, prefix.length);
  }
  added.copy(storage.buf, prefix.length);
  storage.used = length;
  return { storage, length };
}

function hasCompaction(entry: Entry): boolean {
  return entry.type === 'assistant' && entry.content.some((b) => b.type === 'compaction');
}
