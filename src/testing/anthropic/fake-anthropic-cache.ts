/**
 * Prompt caching as the fake Anthropic server reproduces it: the request-wide `cache_control` rules and
 * a simulated prefix cache (PromptCache, the one stateful part of the fake's features; no I/O).
 *
 * Shapes from the SDK's types (@anthropic-ai/sdk 1.12), behaviour from the docs page build-with-
 * claude/prompt-caching, error wording from real 400s quoted in public issues (cited per message);
 * "guessed" or "wording is ours" where we had neither.
 */
import { createHash } from 'node:crypto';
import { isObj } from './fake-anthropic-blocks';

export type CacheTtl = '5m' | '1h';
/** The docs: ephemeral entries live 5 minutes (default) or 1 hour, refreshed each time they are read. */
export const TTL_MS: Record<CacheTtl, number> = { '5m': 5 * 60_000, '1h': 60 * 60_000 };
/** "A maximum of 4 blocks with cache_control may be provided" (prompt-caching docs; message below). */
export const MAX_CACHE_BREAKPOINTS = 4;
/** The docs: a breakpoint checks earlier block boundaries for hits, up to about 20 blocks back. */
export const CACHE_LOOKBACK_BLOCKS = 20;

/**
 * One block of the prompt in the order the cache sees it (`tools`, then `system`, then `messages`, as
 * the prompt-caching docs say), with where it is in the request and its breakpoint, if any.
 */
export interface PromptSegment {
  /** Request path of the block, e.g. `tools.0`, `system.1`, `messages.3.content.0`. */
  at: string;
  section: 'tools' | 'system' | 'messages';
  /** For messages: message index and block index. */
  message?: number;
  block?: number;
  ttl?: CacheTtl;
}

/** Every block the cache could break at, in cache order, with explicit breakpoints marked. */
export function promptSegments(body: Record<string, any>): PromptSegment[] {
  const out: PromptSegment[] = [];
  const ttlOf = (b: any): CacheTtl | undefined => (isObj(b?.cache_control) ? (b.cache_control.ttl === '1h' ? '1h' : '5m') : undefined);
  if (Array.isArray(body.tools)) body.tools.forEach((t: any, i: number) => out.push({ at: `tools.${i}`, section: 'tools', ttl: ttlOf(t) }));
  if (Array.isArray(body.system)) body.system.forEach((b: any, i: number) => out.push({ at: `system.${i}`, section: 'system', ttl: ttlOf(b) }));
  if (Array.isArray(body.messages)) {
    body.messages.forEach((m: any, i: number) => {
      if (typeof m?.content === 'string') out.push({ at: `messages.${i}.content`, section: 'messages', message: i, block: 0 });
      else if (Array.isArray(m?.content)) {
        m.content.forEach((b: any, j: number) => {
          // A breakpoint inside a tool_result's content caches up to the end of that tool_result block.
          const inner = b?.type === 'tool_result' && Array.isArray(b.content) ? b.content.map(ttlOf).filter(Boolean).pop() : undefined;
          out.push({ at: `messages.${i}.content.${j}`, section: 'messages', message: i, block: j, ttl: ttlOf(b) ?? inner });
        });
      }
    });
  }
  return out;
}

/** Paths of every `cache_control` in the request (a tool_result's inner blocks count separately). */
function cacheControlPaths(body: Record<string, any>): Array<{ at: string; cc: unknown }> {
  const out: Array<{ at: string; cc: unknown }> = [];
  const visit = (b: any, at: string) => {
    if (!isObj(b)) return;
    if (b.cache_control !== undefined && b.cache_control !== null) out.push({ at, cc: b.cache_control });
    if (b.type === 'tool_result' && Array.isArray(b.content)) b.content.forEach((c: any, k: number) => visit(c, `${at}.content.${k}`));
  };
  if (Array.isArray(body.tools)) body.tools.forEach((t: any, i: number) => visit(t, `tools.${i}`));
  if (Array.isArray(body.system)) body.system.forEach((b: any, i: number) => visit(b, `system.${i}`));
  if (Array.isArray(body.messages)) {
    body.messages.forEach((m: any, i: number) => {
      if (Array.isArray(m?.content)) m.content.forEach((b: any, j: number) => visit(b, `messages.${i}.content.${j}`));
    });
  }
  return out;
}

/** Shape of one `cache_control` value (CacheControlEphemeral: `type: 'ephemeral'`, `ttl?: '5m' | '1h'`). */
function checkCacheControlShape(cc: unknown, at: string): string | undefined {
  if (!isObj(cc)) return `${at}: Input should be a valid dictionary`;
  if (cc.type !== 'ephemeral') return `${at}.type: Input should be 'ephemeral'`;
  if (cc.ttl !== undefined && cc.ttl !== null && cc.ttl !== '5m' && cc.ttl !== '1h') return `${at}.ttl: Input should be '5m' or '1h'`;
  return undefined;
}

/**
 * The request-wide `cache_control` rules: shapes, at most 4 breakpoints, and 1h breakpoints before 5m
 * ones. Messages:
 * - "A maximum of 4 blocks with cache_control may be provided. Found 5." (tghamm/Anthropic.SDK#50,
 *   Wei-Shaw/sub2api#176). The top-level (automatic) `cache_control` takes one of the 4 slots, as the
 *   prompt-caching docs describe automatic caching; that it is counted in this message is guessed.
 * - "messages.0.content.4.cache_control.ttl: a ttl='1h' cache_control block must not come after a
 *   ttl='5m' cache_control block. Note that blocks are processed in the following order: `tools`,
 *   `system`, `messages`." (cnighswonger/claude-code-cache-fix#44, headroomlabs-ai/headroom#2939).
 * Placement rules on single blocks (empty text, thinking blocks) are checked with the blocks.
 */
export function checkCacheControl(body: Record<string, any>): string | undefined {
  const marks = cacheControlPaths(body);
  for (const { at, cc } of marks) {
    const bad = checkCacheControlShape(cc, `${at}.cache_control`);
    if (bad) return bad;
  }
  if (body.cache_control !== undefined && body.cache_control !== null) {
    const bad = checkCacheControlShape(body.cache_control, 'cache_control');
    if (bad) return bad;
  }
  const automatic = isObj(body.cache_control) ? 1 : 0;
  if (marks.length + automatic > MAX_CACHE_BREAKPOINTS) {
    return `A maximum of ${MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found ${marks.length + automatic}.`;
  }
  let seen5m = false;
  const order = [...marks.map((m) => ({ at: m.at, ttl: (m.cc as any).ttl === '1h' ? '1h' : '5m' }))];
  // The automatic breakpoint sits on the last cacheable block, i.e. after every explicit one.
  if (automatic) order.push({ at: 'cache_control', ttl: body.cache_control.ttl === '1h' ? '1h' : '5m' });
  for (const { at, ttl } of order) {
    if (ttl === '1h' && seen5m) {
      return `${at === 'cache_control' ? 'cache_control' : `${at}.cache_control`}.ttl: a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. Note that blocks are processed in the following order: \`tools\`, \`system\`, \`messages\`.`;
    }
    if (ttl === '5m') seen5m = true;
  }
  return undefined;
}

/**
 * Minimum cacheable prompt length per model, from the prompt-caching docs' table as quoted in
 * anthropics/anthropic-sdk-python#1194: 4096 for Claude Opus 4.6 / 4.5 and Haiku 4.5, 2048 for Haiku 3.5
 * / 3, 1024 for Sonnet 4.6 / 4.5 / 4 / 3.7 and Opus 4.1 / 4. Unknown ids (fake ids) get 1024. A
 * breakpoint whose prefix is shorter is not cached, with no error (docs).
 */
export function defaultMinCacheableTokens(model: string): number {
  if (/opus-4-[56]|haiku-4-5/.test(model)) return 4096;
  if (/haiku/.test(model)) return 2048;
  return 1024;
}

// ---------------------------------------------------------------------------------------------------
// Prompt caching: the simulated cache
// ---------------------------------------------------------------------------------------------------

export interface CacheUsage {
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
  /** Tokens neither read nor written (what the API reports as `input_tokens`). */
  input_tokens: number;
}

interface CacheEntry {
  expiresAt: number;
  ttl: CacheTtl;
}

/**
 * A prefix cache as the prompt-caching docs describe it: a breakpoint caches the whole prompt up to and
 * including its block (tools → system → messages); a later request reads the longest cached prefix
 * found at any block boundary up to 20 blocks before one of its breakpoints; a read refreshes the
 * entry's lifetime; entries expire after their TTL; prefixes below the model's minimum are not cached.
 * Keys hash the model and the prefix with every `cache_control` removed, so moving a breakpoint does
 * not change what was cached (guessed, consistent with the docs' "cache the prefix up to the block").
 * Not simulated: per-tier invalidation (e.g. changing `tool_choice` or thinking parameters keeps the
 * tools/system cache but not the messages cache, per the docs) — here any change to the prefix's
 * content misses, and `tool_choice` / thinking parameters are not part of the key.
 */
export class PromptCache {
  private readonly entries = new Map<string, CacheEntry>();

  /**
   * Reads and writes the cache for one accepted request (already edited by context management) and
   * returns its usage. `count(prefixBody)` is the fake tokenizer over a truncated body; `now` the fake's
   * clock.
   */
  use(
    body: Record<string, any>,
    opts: { now: number; minTokens: number; count: (b: Record<string, any>) => number },
  ): CacheUsage {
    const total = opts.count(body);
    const segments = promptSegments(body);
    const breakpoints = segments.map((s, k) => ({ k, ttl: s.ttl })).filter((b): b is { k: number; ttl: CacheTtl } => b.ttl !== undefined);
    if (isObj(body.cache_control) && segments.length > 0) {
      // Automatic caching: the breakpoint goes on the last cacheable block (docs).
      const last = segments.length - 1;
      const ttl: CacheTtl = body.cache_control.ttl === '1h' ? '1h' : '5m';
      if (!breakpoints.some((b) => b.k === last)) breakpoints.push({ k: last, ttl });
    }
    const none: CacheUsage = {
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
      input_tokens: total,
    };
    if (breakpoints.length === 0) return none;

    const tokensAt = new Map<number, number>();
    const prefixTokens = (k: number) => {
      if (!tokensAt.has(k)) tokensAt.set(k, opts.count(truncateAt(body, segments, k)));
      return tokensAt.get(k)!;
    };
    const keyAt = (k: number) => createHash('sha256').update(JSON.stringify([body.model, stripCacheControl(truncateAt(body, segments, k))])).digest('hex');
    const live = (key: string) => {
      const e = this.entries.get(key);
      if (e && e.expiresAt <= opts.now) this.entries.delete(key);
      return e && e.expiresAt > opts.now ? e : undefined;
    };

    // Longest hit at or before any breakpoint, within the lookback window.
    let readAt = -1;
    let readKey: string | undefined;
    for (const { k } of breakpoints) {
      for (let j = k; j >= 0 && j > k - CACHE_LOOKBACK_BLOCKS; j--) {
        if (j <= readAt) break;
        const key = keyAt(j);
        if (live(key)) {
          readAt = j;
          readKey = key;
          break;
        }
      }
    }
    if (readKey) {
      const e = this.entries.get(readKey)!;
      e.expiresAt = opts.now + TTL_MS[e.ttl]; // a read refreshes the entry (docs)
    }
    const read = readAt >= 0 ? prefixTokens(readAt) : 0;

    // Writes: every breakpoint beyond the read, whose prefix meets the minimum.
    let written = read;
    const creation = { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 };
    for (const { k, ttl } of [...breakpoints].sort((a, b) => a.k - b.k)) {
      if (k <= readAt) continue;
      const tokens = prefixTokens(k);
      if (tokens < opts.minTokens) continue;
      this.entries.set(keyAt(k), { ttl, expiresAt: opts.now + TTL_MS[ttl] });
      const fresh = tokens - written;
      if (fresh > 0) {
        if (ttl === '1h') creation.ephemeral_1h_input_tokens += fresh;
        else creation.ephemeral_5m_input_tokens += fresh;
        written = tokens;
      }
    }
    const creationTotal = creation.ephemeral_1h_input_tokens + creation.ephemeral_5m_input_tokens;
    return {
      cache_creation_input_tokens: creationTotal,
      cache_read_input_tokens: read,
      cache_creation: creation,
      input_tokens: Math.max(0, total - read - creationTotal),
    };
  }

  clear(): void {
    this.entries.clear();
  }

  /** Live entries (for tests and diagnostics). */
  size(now: number): number {
    for (const [k, e] of this.entries) if (e.expiresAt <= now) this.entries.delete(k);
    return this.entries.size;
  }
}

/** The body cut just after segment `k` (tools/system/messages beyond it removed). */
function truncateAt(body: Record<string, any>, segments: PromptSegment[], k: number): Record<string, any> {
  const s = segments[k]!;
  const out: Record<string, any> = { model: body.model, messages: [] };
  const toolsCount = Array.isArray(body.tools) ? body.tools.length : 0;
  if (s.section === 'tools') {
    out.tools = body.tools.slice(0, k + 1);
    return out;
  }
  if (toolsCount > 0) out.tools = body.tools;
  if (s.section === 'system') {
    out.system = body.system.slice(0, k - toolsCount + 1);
    return out;
  }
  if (body.system !== undefined) out.system = body.system;
  const msgs = body.messages as any[];
  out.messages = msgs.slice(0, s.message!).concat(
    typeof msgs[s.message!].content === 'string'
      ? [msgs[s.message!]]
      : [{ ...msgs[s.message!], content: msgs[s.message!].content.slice(0, s.block! + 1) }],
  );
  return out;
}

function stripCacheControl(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stripCacheControl);
  if (!isObj(v)) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) if (k !== 'cache_control') out[k] = stripCacheControl(x);
  return out;
}
