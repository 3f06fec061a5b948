/**
 * How a model call travels to the model activity without growing history: the transcript already
 * stored goes by reference (its head and entry count), the system prompt and tool specs (the prelude)
 * by hash once the store has them, and tool results the tool activity stored by their key; only the
 * entries added since the last call travel in full. Pure bookkeeping: no Temporal imports, unit-tested.
 */
import type { ModelActivityInput, TranscriptRef } from '../wire/activity-contract';
import type { Entry } from '../core/entries';
import { canonicalJson, hashString } from '../core/hash';
import type { ModelCallRequest } from '../core/ports';

interface StoredPrefix {
  ref: TranscriptRef;
  /** The entry the stored transcript ends with: still at `ref.count - 1` iff the prefix is unchanged. */
  last: Entry;
}

interface SessionTransport {
  /** The entries array the stored transcripts were built from: a new array means history was rewritten. */
  entries: readonly Entry[];
  /** Stored transcripts of this array's prefixes, newest last (a rolled-back prompt cuts back to an older one). */
  stored: StoredPrefix[];
}

/** Stored prefixes remembered per session: enough to fall back past a rolled-back prompt's calls. */
const REMEMBERED_PREFIXES = 16;

export class ModelTransport {
  private readonly sessions = new Map<string, SessionTransport>();
  private readonly sentPreludes = new Set<string>();
  /** The last prelude hashed, by the identity of its system prompt and tools array: a run asks for the same one every call. */
  private lastPrelude: { system: string | undefined; tools: ModelCallRequest['tools']; hash: string } | undefined;
  /** tool_use id → where its tool activity stored the result, and the stored content's length. */
  private readonly toolResultRefs = new Map<string, { ref: string; chars?: number }>();

  /**
   * The activity input for a call. `byReference: false` sends everything in full: the answer to a
   * worker whose store lacks what a reference points at (another machine, a cleared store).
   */
  input(req: ModelCallRequest, byReference: boolean): ModelActivityInput {
    const base = byReference ? this.storedPrefix(req) : null;
    const prelude = { system: req.system, tools: req.tools };
    const hash = this.preludeHash(req);
    const delta = req.entries.slice(base?.count ?? 0);
    return {
      model: req.model,
      maxTokens: req.maxTokens,
      prelude: byReference && this.sentPreludes.has(hash) ? { hash } : { hash, value: prelude },
      base,
      delta: byReference ? this.withToolResultRefs(delta) : delta,
      ...(req.cache ? { cache: req.cache } : {}),
      // Only when set: a call without thinking has the activity input it had before thinking existed.
      ...(req.thinking ? { thinking: req.thinking } : {}),
      ...(req.contextManagement ? { contextManagement: req.contextManagement } : {}),
      // Only when named: a call on the default connection has the input it had before connections existed.
      ...(req.connection !== undefined ? { connection: req.connection } : {}),
    };
  }

  /**
   * The prelude of this call when the workflow has not sent it yet (to store it first, in an activity
   * of its own: the model calls then carry only its hash, and no model call input carries the tool
   * specs). Undefined once sent.
   */
  unsentPrelude(req: ModelCallRequest): { hash: string; value: { system?: string; tools: ModelCallRequest['tools'] } } | undefined {
    const value = { system: req.system, tools: req.tools };
    const hash = this.preludeHash(req);
    return this.sentPreludes.has(hash) ? undefined : { hash, value };
  }

  /** The prelude's hash (canonical JSON): hashed again only when the system prompt or the tools array is another. */
  private preludeHash(req: ModelCallRequest): string {
    const last = this.lastPrelude;
    if (last && last.system === req.system && last.tools === req.tools) return last.hash;
    const hash = hashString(canonicalJson({ system: req.system, tools: req.tools }));
    this.lastPrelude = { system: req.system, tools: req.tools, hash };
    return hash;
  }

  /** The worker's store has this prelude (stored by its own activity). */
  preludeStored(hash: string): void {
    this.sentPreludes.add(hash);
  }

  /** After a call succeeded: the worker now has this prelude and this transcript. */
  called(req: ModelCallRequest, input: ModelActivityInput, stored: TranscriptRef, reply: Entry): void {
    this.sentPreludes.add(input.prelude.hash);
    let t = this.sessions.get(req.sessionId);
    if (!t || t.entries !== req.entries) this.sessions.set(req.sessionId, (t = { entries: req.entries, stored: [] }));
    t.stored.push({ ref: stored, last: reply });
    if (t.stored.length > REMEMBERED_PREFIXES) t.stored.shift();
  }

  /**
   * The longest stored transcript that is still a prefix of the conversation. Sessions append to their
   * entries array and replace it when they rewrite history (compaction); a rolled-back prompt cuts the
   * array back in place, which the identity of the entry at the prefix's end reveals.
   */
  private storedPrefix(req: ModelCallRequest): TranscriptRef | null {
    const t = this.sessions.get(req.sessionId);
    if (!t || t.entries !== req.entries) return null;
    for (let i = t.stored.length - 1; i >= 0; i--) {
      const { ref, last } = t.stored[i]!;
      if (ref.count <= req.entries.length && req.entries[ref.count - 1] === last) return ref;
    }
    return null;
  }

  /** A conversation restored from a stored transcript (a continued or forked session): refer to it. */
  seed(sessionId: string, entries: readonly Entry[], ref: TranscriptRef): void {
    const last = entries[ref.count - 1];
    if (ref.count === 0 || !last) return;
    this.sessions.set(sessionId, { entries, stored: [{ ref, last }] });
  }

  /** The stored transcript this conversation extends, and what is not stored yet (to store it). */
  unstored(sessionId: string, entries: readonly Entry[]): { base: TranscriptRef | null; delta: Entry[] } {
    const base = this.storedPrefix({ sessionId, entries } as ModelCallRequest);
    return { base, delta: this.withToolResultRefs(entries.slice(base?.count ?? 0)) };
  }

  /** The longest stored prefix of at most `count` entries (a fork point). */
  storedPrefixWithin(sessionId: string, entries: readonly Entry[], count: number): TranscriptRef | null {
    const t = this.sessions.get(sessionId);
    if (!t || t.entries !== entries) return null;
    let best: TranscriptRef | null = null;
    for (const { ref, last } of t.stored) {
      if (ref.count <= count && entries[ref.count - 1] === last && (!best || ref.count > best.count)) best = ref;
    }
    return best;
  }

  /**
   * `chars`: the stored content's length. A result whose content in history has another length was
   * rewritten by the session (capped, masked) and travels as it is: the reference would restore the
   * full output the session meant to leave out.
   */
  toolResultStored(toolUseId: string, contentRef: string, chars?: number): void {
    this.toolResultRefs.set(toolUseId, chars === undefined ? { ref: contentRef } : { ref: contentRef, chars });
  }

  /** The delta with tool results the tool activity stored replaced by their references. */
  private withToolResultRefs(delta: Entry[]): Entry[] {
    const refs = this.toolResultRefs;
    return delta.map((entry) =>
      entry.type === 'tool_results' && entry.results.some((r) => refs.has(r.tool_use_id))
        ? {
            ...entry,
            results: entry.results.map((r) => {
              const stored = refs.get(r.tool_use_id);
              if (!stored || (stored.chars !== undefined && stored.chars !== r.content.length)) return r;
              return { ...r, content: '', contentRef: stored.ref };
            }),
          }
        : entry,
    );
  }
}
