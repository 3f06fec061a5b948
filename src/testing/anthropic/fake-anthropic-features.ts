/**
 * Claude API features the fake Anthropic server reproduces beyond plain messages: prompt caching
 * (`cache_control` rules and a simulated prefix cache), extended thinking (signed thinking blocks and
 * their round-trip rules), context management (`clear_tool_uses_20250919`, `clear_thinking_20251015`,
 * `compact_20260112`) and model capabilities.
 *
 * Sources, cited where each rule is implemented:
 * - field names and shapes: the SDK's types in node_modules/@anthropic-ai/sdk (resources/messages,
 *   resources/beta/messages, resources/models), version 1.12;
 * - behaviour: the docs pages build-with-claude/prompt-caching, extended-thinking, context-editing and
 *   compaction (docs.claude.com / platform.claude.com);
 * - error wording: real 400 messages users quoted verbatim in public issues (cited per message).
 * Where we had neither, the comment says "guessed" or "wording is ours".
 *
 * Pure functions over request bodies plus one stateful class (PromptCache); no I/O.
 */
import { createHash } from 'node:crypto';
import type Anthropic from '@anthropic-ai/sdk';

const isObj = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);
const blocksOf = (m: any): any[] => (Array.isArray(m?.content) ? m.content : typeof m?.content === 'string' ? [{ type: 'text', text: m.content }] : []);

// ---------------------------------------------------------------------------------------------------
// Beta headers (the names the SDK's `AnthropicBeta` type lists; `client.beta.messages.create({ betas })`
// sends them comma-joined in `anthropic-beta`).
// ---------------------------------------------------------------------------------------------------

export const CONTEXT_MANAGEMENT_BETA = 'context-management-2025-06-27';
export const COMPACTION_BETA = 'compact-2026-01-12';

/** The beta names of a request's `anthropic-beta` header (comma-separated; repeated headers joined). */
export function betasOf(headers: Record<string, string>): string[] {
  return (headers['anthropic-beta'] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

// ---------------------------------------------------------------------------------------------------
// Signatures. The real API signs thinking blocks (ThinkingBlock.signature), encrypts redacted thinking
// (RedactedThinkingBlock.data) and signs compaction summaries (BetaCompactionBlock.signature); all are
// opaque to clients. The fake's are deterministic (same text → same signature, across runs), so scripted
// tests are reproducible, and verifiable, so a modified block is caught exactly as the API catches it.
// ---------------------------------------------------------------------------------------------------

const SIGNING_KEY = 'fake-anthropic/v1';
const mac = (kind: string, text: string) => createHash('sha256').update(`${SIGNING_KEY}\0${kind}\0${text}`).digest('base64url');

export function signThinking(thinking: string): string {
  return `fake_sig_${mac('thinking', thinking)}`;
}
export function verifyThinking(thinking: string, signature: string): boolean {
  return signature === signThinking(thinking);
}
/** Opaque `data` for a redacted_thinking block (the payload is hidden but still authenticated). */
export function sealRedactedThinking(payload: string): string {
  const body = Buffer.from(payload, 'utf8').toString('base64url');
  return `fake_redacted_${body}.${mac('redacted', body)}`;
}
export function verifyRedactedThinking(data: string): boolean {
  const m = /^fake_redacted_([A-Za-z0-9_-]*)\.([A-Za-z0-9_-]+)$/.exec(data);
  return m !== null && m[2] === mac('redacted', m[1]!);
}
export function signCompaction(content: string): string {
  return `fake_csig_${mac('compaction', content)}`;
}

// ---------------------------------------------------------------------------------------------------
// Prompt caching: `cache_control` rules
// ---------------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------------
// Extended thinking
// ---------------------------------------------------------------------------------------------------

/** Where the documentation links in the API's thinking errors point (as quoted in the issues below). */
const THINKING_DOCS = 'https://docs.claude.com/en/docs/build-with-claude/extended-thinking';

/** Whether a request turns thinking on (`enabled` or `adaptive`; ThinkingConfigParam). */
export function thinkingOn(body: Record<string, any>): boolean {
  return isObj(body.thinking) && (body.thinking.type === 'enabled' || body.thinking.type === 'adaptive');
}

/**
 * The `thinking` parameter and the parameters it is incompatible with. Messages:
 * - "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
 *   (danny-avila/LibreChat#8346, tingly-dev/tingly-box#569); SDK doc: "Must be ≥1024 and less than max_tokens".
 * - "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at
 *   …#max-tokens-and-context-window-size" (liuw1535/antigravity2api-nodejs#149).
 * - "`temperature` may only be set to 1 when thinking is enabled. Please consult our documentation at
 *   …#important-considerations-when-using-extended-thinking" (MartialBE/one-hub#529).
 * - "`top_k` must be unset when thinking is enabled. …" (quarkiverse/quarkus-langchain4j#1812).
 * - top_p: the docs allow 0.95–1 with thinking; the wording of that rejection is ours.
 */
export function checkThinkingConfig(body: Record<string, any>, generation: boolean): string | undefined {
  const t = body.thinking;
  if (t === undefined || t === null) return undefined;
  if (!isObj(t)) return 'thinking: Input should be a valid dictionary';
  const tags = ['enabled', 'disabled', 'adaptive', 'between_tools'];
  if (!tags.includes(t.type)) {
    return `thinking: Input tag '${String(t.type)}' found using 'type' does not match any of the expected tags: ${tags.map((x) => `'${x}'`).join(', ')}`;
  }
  if (t.type === 'enabled') {
    if (t.budget_tokens === undefined) return 'thinking.enabled.budget_tokens: Field required';
    if (typeof t.budget_tokens !== 'number' || !Number.isInteger(t.budget_tokens)) return 'thinking.enabled.budget_tokens: Input should be a valid integer';
    if (t.budget_tokens < 1024) return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024';
    if (generation && typeof body.max_tokens === 'number' && body.max_tokens <= t.budget_tokens) {
      return `\`max_tokens\` must be greater than \`thinking.budget_tokens\`. Please consult our documentation at ${THINKING_DOCS}#max-tokens-and-context-window-size`;
    }
  }
  if (t.display !== undefined && t.display !== null && !['summarized', 'omitted'].includes(t.display)) {
    return `thinking.${t.type}.display: Input should be 'summarized' or 'omitted'`;
  }
  if (thinkingOn(body)) {
    const consult = `Please consult our documentation at ${THINKING_DOCS}#important-considerations-when-using-extended-thinking`;
    if (body.temperature !== undefined && body.temperature !== 1) return `\`temperature\` may only be set to 1 when thinking is enabled. ${consult}`;
    if (body.top_k !== undefined) return `\`top_k\` must be unset when thinking is enabled. ${consult}`;
    if (body.top_p !== undefined && (typeof body.top_p !== 'number' || body.top_p < 0.95)) {
      return `\`top_p\` must be greater than or equal to 0.95 when thinking is enabled. ${consult}`; // wording is ours
    }
  }
  return undefined;
}

/**
 * Thinking blocks in the conversation. Messages (all verbatim from real 400s):
 * - "messages.1.content.0: Invalid `signature` in `thinking` block" (anthropics/claude-code#10627); the
 *   SDK's ThinkingBlockParam: "a modified block results in a 400 invalid_request_error". We check every
 *   thinking block, in any turn (that the API checks earlier turns too is consistent with the reports,
 *   which are mostly at messages.1).
 * - "messages.N.content.0.type: Expected `thinking` or `redacted_thinking`, but found `text`. When
 *   `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the
 *   lastmost set of `tool_use` and `tool_result` blocks). …" (anomalyco/opencode#3077, n8n-io/n8n#22550):
 *   with thinking on, the assistant turn whose tool calls the last user turn answers must start with
 *   thinking (the docs: thinking blocks must be passed back during a tool-use loop).
 * - "messages.51.content.0: If an assistant message contains any thinking blocks, the first block must be
 *   thinking or redacted_thinking. Found text." (anthropics/claude-code#20705).
 * - "messages.1: The final block in an assistant message cannot be `thinking`." (tailcallhq/forgecode#2107).
 * - "messages.11.content.0: When thinking is disabled, an `assistant` message in the final position cannot
 *   contain `thinking`. To use thinking blocks, enable `thinking` in your request."
 *   (tailcallhq/forgecode#1195, #1853). Earlier assistant turns may keep thinking blocks with thinking off.
 * Redacted data that the fake did not issue is rejected with wording of ours.
 */
export function checkThinkingBlocks(body: Record<string, any>, turns: Array<{ role: string; content: any[]; index: number }>): string | undefined {
  const msgs = body.messages as any[];
  for (let i = 0; i < msgs.length; i++) {
    if (msgs[i].role !== 'assistant' || !Array.isArray(msgs[i].content)) continue;
    const c = msgs[i].content as any[];
    for (let j = 0; j < c.length; j++) {
      const b = c[j];
      if (b.type === 'thinking' && !verifyThinking(b.thinking, b.signature)) return `messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`;
      if (b.type === 'redacted_thinking' && !verifyRedactedThinking(b.data)) return `messages.${i}.content.${j}: Invalid \`data\` in \`redacted_thinking\` block`; // wording is ours
    }
    const isThinking = (b: any) => b?.type === 'thinking' || b?.type === 'redacted_thinking';
    if (c.some(isThinking) && !isThinking(c[0])) {
      return `messages.${i}.content.0: If an assistant message contains any thinking blocks, the first block must be thinking or redacted_thinking. Found ${c[0]?.type}.`;
    }
    if (c.length > 0 && c[c.length - 1].type === 'thinking' && i < msgs.length - 1) return `messages.${i}: The final block in an assistant message cannot be \`thinking\`.`;
  }
  const last = msgs[msgs.length - 1];
  if (!thinkingOn(body)) {
    if (last.role === 'assistant') {
      const j = blocksOf(last).findIndex((b) => b?.type === 'thinking' || b?.type === 'redacted_thinking');
      if (j >= 0) {
        return `messages.${msgs.length - 1}.content.${j}: When thinking is disabled, an \`assistant\` message in the final position cannot contain \`thinking\`. To use thinking blocks, enable \`thinking\` in your request.`;
      }
    }
    return undefined;
  }
  // Thinking on: the tool-use loop in progress (last user turn answers the previous assistant's calls).
  const lastTurn = turns[turns.length - 1]!;
  if (lastTurn.role === 'user' && lastTurn.content[0]?.type === 'tool_result' && turns.length >= 2) {
    const a = turns[turns.length - 2]!;
    const first = a.content[0];
    if (first?.type !== 'thinking' && first?.type !== 'redacted_thinking') {
      return `messages.${a.index}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(first?.type)}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. Please consult our documentation at ${THINKING_DOCS}`;
    }
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------------
// Context management (beta `context-management-2025-06-27`; compaction beta `compact-2026-01-12`)
// ---------------------------------------------------------------------------------------------------

export type ContextEditType = 'clear_tool_uses_20250919' | 'clear_thinking_20251015' | 'compact_20260112';
const EDIT_TYPES: ContextEditType[] = ['clear_tool_uses_20250919', 'clear_thinking_20251015', 'compact_20260112'];
/** Fields each edit may carry (BetaClearToolUses20250919Edit, BetaClearThinking20251015Edit, BetaCompact20260112Edit). */
const EDIT_FIELDS: Record<ContextEditType, string[]> = {
  clear_tool_uses_20250919: ['type', 'trigger', 'keep', 'clear_at_least', 'exclude_tools', 'clear_tool_inputs'],
  clear_thinking_20251015: ['type', 'keep'],
  compact_20260112: ['type', 'trigger', 'instructions', 'pause_after_compaction'],
};
/** Defaults from the context-editing docs (trigger 100,000 input tokens, keep 3 tool uses). */
export const CLEAR_TOOL_USES_DEFAULTS = { triggerInputTokens: 100_000, keepToolUses: 3 };
/** Default from the SDK's BetaCompact20260112Edit.trigger doc: "Defaults to 150000 input tokens". */
export const COMPACT_DEFAULT_TRIGGER = 150_000;
/** The context-editing docs do not print the placeholder the API writes; ours (guessed). */
export const CLEARED_TOOL_RESULT = '[tool result cleared by context management]';

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;

function checkThreshold(v: unknown, at: string, types: string[]): string | undefined {
  if (!isObj(v)) return `${at}: Input should be a valid dictionary`;
  if (!types.includes(v.type)) {
    return `${at}: Input tag '${String(v.type)}' found using 'type' does not match any of the expected tags: ${types.map((t) => `'${t}'`).join(', ')}`;
  }
  if (v.type !== 'all') {
    if (v.value === undefined) return `${at}.${v.type}.value: Field required`;
    if (!isCount(v.value)) return `${at}.${v.type}.value: Input should be a valid integer`;
  }
  return undefined;
}

/**
 * The `context_management` parameter. Without the beta header the API treats it as an unknown field
 * (pydantic's "Extra inputs are not permitted"; guessed: we have no verbatim sample). Shapes follow the
 * SDK's Beta*Edit types; errors use the API's pydantic wording for unions and fields. Rules from the docs
 * whose wording is ours: `compact_20260112` needs the `compact-2026-01-12` beta; `clear_thinking_20251015`
 * needs thinking enabled and must come first when combined with `clear_tool_uses_20250919`; each type
 * at most once; the compaction trigger is at least 50,000 tokens (guessed from the docs we recall).
 */
export function checkContextManagement(body: Record<string, any>, betas: string[]): string | undefined {
  const cm = body.context_management;
  if (cm === undefined || cm === null) return undefined;
  if (!betas.includes(CONTEXT_MANAGEMENT_BETA) && !betas.includes(COMPACTION_BETA)) return 'context_management: Extra inputs are not permitted';
  if (!isObj(cm)) return 'context_management: Input should be a valid dictionary';
  const extra = Object.keys(cm).find((k) => k !== 'edits');
  if (extra) return `context_management.${extra}: Extra inputs are not permitted`;
  if (cm.edits === undefined || cm.edits === null) return undefined;
  if (!Array.isArray(cm.edits)) return 'context_management.edits: Input should be a valid list';
  const seen: string[] = [];
  for (let i = 0; i < cm.edits.length; i++) {
    const e = cm.edits[i];
    const at = `context_management.edits.${i}`;
    if (!isObj(e)) return `${at}: Input should be a valid dictionary`;
    if (!EDIT_TYPES.includes(e.type)) {
      return `${at}: Input tag '${String(e.type)}' found using 'type' does not match any of the expected tags: ${EDIT_TYPES.map((t) => `'${t}'`).join(', ')}`;
    }
    const type = e.type as ContextEditType;
    const field = Object.keys(e).find((k) => !EDIT_FIELDS[type].includes(k));
    if (field) return `${at}.${type}.${field}: Extra inputs are not permitted`;
    if (seen.includes(type)) return `${at}: duplicate context management edit type '${type}'`; // wording is ours
    seen.push(type);
    const inner = `${at}.${type}`;
    if (type === 'clear_tool_uses_20250919') {
      if (!betas.includes(CONTEXT_MANAGEMENT_BETA)) return `${at}: '${type}' requires the '${CONTEXT_MANAGEMENT_BETA}' beta`; // wording is ours
      let bad: string | undefined;
      if (e.trigger !== undefined) bad = checkThreshold(e.trigger, `${inner}.trigger`, ['input_tokens', 'tool_uses']);
      if (!bad && e.keep !== undefined) bad = checkThreshold(e.keep, `${inner}.keep`, ['tool_uses']);
      if (!bad && e.clear_at_least !== undefined && e.clear_at_least !== null) bad = checkThreshold(e.clear_at_least, `${inner}.clear_at_least`, ['input_tokens']);
      if (bad) return bad;
      if (e.exclude_tools !== undefined && e.exclude_tools !== null && (!Array.isArray(e.exclude_tools) || e.exclude_tools.some((x: unknown) => typeof x !== 'string'))) {
        return `${inner}.exclude_tools: Input should be a valid list`;
      }
      const cti = e.clear_tool_inputs;
      if (cti !== undefined && cti !== null && typeof cti !== 'boolean' && !(Array.isArray(cti) && cti.every((x: unknown) => typeof x === 'string'))) {
        return `${inner}.clear_tool_inputs: Input should be a valid boolean`;
      }
    }
    if (type === 'clear_thinking_20251015') {
      if (!betas.includes(CONTEXT_MANAGEMENT_BETA)) return `${at}: '${type}' requires the '${CONTEXT_MANAGEMENT_BETA}' beta`; // wording is ours
      if (e.keep !== undefined && e.keep !== 'all') {
        const bad = checkThreshold(e.keep, `${inner}.keep`, ['thinking_turns', 'all']);
        if (bad) return bad;
        if (e.keep.type === 'thinking_turns' && e.keep.value < 1) return `${inner}.keep.thinking_turns.value: Input should be greater than or equal to 1`;
      }
      if (!thinkingOn(body)) return `${at}: '${type}' requires thinking to be enabled`; // wording is ours
      if (seen.includes('clear_tool_uses_20250919')) return `${at}: '${type}' must come before 'clear_tool_uses_20250919' in \`edits\``; // wording is ours
    }
    if (type === 'compact_20260112') {
      if (!betas.includes(COMPACTION_BETA)) return `${at}: '${type}' requires the '${COMPACTION_BETA}' beta`; // wording is ours
      if (e.trigger !== undefined && e.trigger !== null) {
        const bad = checkThreshold(e.trigger, `${inner}.trigger`, ['input_tokens']);
        if (bad) return bad;
        if (e.trigger.value < 50_000) return `${inner}.trigger.input_tokens.value: Input should be greater than or equal to 50000`; // guessed minimum
      }
      if (e.instructions !== undefined && e.instructions !== null && typeof e.instructions !== 'string') return `${inner}.instructions: Input should be a valid string`;
      if (e.pause_after_compaction !== undefined && typeof e.pause_after_compaction !== 'boolean') return `${inner}.pause_after_compaction: Input should be a valid boolean`;
    }
  }
  return undefined;
}

export type AppliedEdit = Anthropic.Beta.BetaClearToolUses20250919EditResponse | Anthropic.Beta.BetaClearThinking20251015EditResponse;

/**
 * Applies the clearing edits to a (deep-copied) body, in the order given, as the context-editing docs
 * describe them, and returns the edited body and what was applied (`applied_edits`, only edits that
 * changed something). The client's own history is never changed (docs: edits apply server-side only).
 * - `clear_tool_uses_20250919`: when input tokens exceed `trigger` (or tool uses exceed a `tool_uses`
 *   trigger), the oldest tool results beyond the `keep` most recent tool uses are replaced by a
 *   placeholder (ours), skipping `exclude_tools`; `clear_tool_inputs` also empties the calls' inputs
 *   (to `{}`: guessed); nothing is cleared unless at least `clear_at_least` tokens would be.
 * - `clear_thinking_20251015`: thinking blocks are removed from all but the last `keep` assistant turns
 *   (default 1; `'all'` keeps all). Without this edit, with thinking on, the API itself keeps only the
 *   last assistant turn's thinking (docs), which {@link stripOldThinking} applies without reporting it.
 */
export function applyContextEdits(body: Record<string, any>, count: (b: Record<string, any>) => number): { body: Record<string, any>; applied: AppliedEdit[] } {
  let current = body;
  const applied: AppliedEdit[] = [];
  const edits: any[] = Array.isArray(body.context_management?.edits) ? body.context_management.edits : [];
  for (const e of edits) {
    if (e.type === 'clear_tool_uses_20250919') {
      const r = clearToolUses(current, e, count);
      if (r) {
        current = r.body;
        applied.push({ type: 'clear_tool_uses_20250919', cleared_tool_uses: r.cleared, cleared_input_tokens: r.tokens });
      }
    } else if (e.type === 'clear_thinking_20251015') {
      const keep = e.keep === undefined ? 1 : e.keep === 'all' || e.keep.type === 'all' ? Infinity : e.keep.value;
      const before = count(current);
      const r = keepThinkingTurns(current, keep);
      if (r.cleared > 0) {
        current = r.body;
        applied.push({ type: 'clear_thinking_20251015', cleared_thinking_turns: r.cleared, cleared_input_tokens: before - count(current) });
      }
    }
  }
  if (thinkingOn(body) && !edits.some((e) => e.type === 'clear_thinking_20251015')) current = keepThinkingTurns(current, 1).body;
  return { body: current, applied };
}

/** With thinking on and no clear_thinking edit, only the last assistant turn's thinking is in context. */
export function stripOldThinking(body: Record<string, any>): Record<string, any> {
  return thinkingOn(body) ? keepThinkingTurns(body, 1).body : body;
}

function keepThinkingTurns(body: Record<string, any>, keep: number): { body: Record<string, any>; cleared: number } {
  const msgs = body.messages as any[];
  const assistantIdx = msgs.map((m, i) => (m.role === 'assistant' ? i : -1)).filter((i) => i >= 0);
  const keepFrom = keep === Infinity ? Infinity : assistantIdx.length - keep;
  let cleared = 0;
  const out = msgs.map((m, i) => {
    const rank = assistantIdx.indexOf(i);
    if (rank < 0 || rank >= keepFrom || !Array.isArray(m.content)) return m;
    const kept = m.content.filter((b: any) => b?.type !== 'thinking' && b?.type !== 'redacted_thinking');
    if (kept.length === m.content.length) return m;
    cleared++;
    return { ...m, content: kept };
  });
  return { body: cleared > 0 ? { ...body, messages: out } : body, cleared };
}

function clearToolUses(body: Record<string, any>, e: any, count: (b: Record<string, any>) => number): { body: Record<string, any>; cleared: number; tokens: number } | undefined {
  const msgs = body.messages as any[];
  const uses: Array<{ i: number; j: number; id: string; name: string }> = [];
  msgs.forEach((m, i) => {
    if (m.role === 'assistant' && Array.isArray(m.content)) {
      m.content.forEach((b: any, j: number) => b?.type === 'tool_use' && uses.push({ i, j, id: b.id, name: b.name }));
    }
  });
  const trigger = e.trigger ?? { type: 'input_tokens', value: CLEAR_TOOL_USES_DEFAULTS.triggerInputTokens };
  const before = count(body);
  const fired = trigger.type === 'tool_uses' ? uses.length > trigger.value : before > trigger.value;
  if (!fired) return undefined;
  const keep = e.keep?.value ?? CLEAR_TOOL_USES_DEFAULTS.keepToolUses;
  const exclude = new Set<string>(e.exclude_tools ?? []);
  const candidates = uses.slice(0, Math.max(0, uses.length - keep)).filter((u) => !exclude.has(u.name));
  if (candidates.length === 0) return undefined;
  const ids = new Set(candidates.map((u) => u.id));
  const clearInputs = (name: string) => e.clear_tool_inputs === true || (Array.isArray(e.clear_tool_inputs) && e.clear_tool_inputs.includes(name));
  const out = msgs.map((m) => {
    if (!Array.isArray(m.content)) return m;
    return {
      ...m,
      content: m.content.map((b: any) => {
        if (b?.type === 'tool_result' && ids.has(b.tool_use_id)) return { type: 'tool_result', tool_use_id: b.tool_use_id, content: CLEARED_TOOL_RESULT };
        if (b?.type === 'tool_use' && ids.has(b.id) && clearInputs(b.name)) return { ...b, input: {} };
        return b;
      }),
    };
  });
  const edited = { ...body, messages: out };
  const tokens = before - count(edited);
  if (e.clear_at_least && tokens < e.clear_at_least.value) return undefined;
  return { body: edited, cleared: candidates.length, tokens };
}

// ---------------------------------------------------------------------------------------------------
// Server-side compaction (`compact_20260112`)
// ---------------------------------------------------------------------------------------------------

/** The compaction edit of a request, if any. */
export function compactEditOf(body: Record<string, any>): Anthropic.Beta.BetaCompact20260112Edit | undefined {
  const edits: any[] = Array.isArray(body.context_management?.edits) ? body.context_management.edits : [];
  return edits.find((e) => e?.type === 'compact_20260112');
}

/**
 * `compaction` blocks sent back: each must carry the signature the fake issued for its content (the
 * SDK's CompactionContentMismatchError / CompactionSignatureInvalidError; error codes from the SDK,
 * message wording ours), at most one may have content (CompactionBlockAmbiguousError). Returns the
 * error, or undefined.
 */
export function checkCompactionBlocks(body: Record<string, any>): { message: string; errorCode: string } | undefined {
  let withContent = 0;
  const msgs = body.messages as any[];
  for (let i = 0; i < msgs.length; i++) {
    const c = blocksOf(msgs[i]);
    for (let j = 0; j < c.length; j++) {
      const b = c[j];
      if (b?.type !== 'compaction') continue;
      const at = `messages.${i}.content.${j}`;
      if (b.content === null || b.content === undefined) continue; // a failed compaction: a no-op (SDK doc)
      if (typeof b.content !== 'string' || b.content.length === 0) return { message: `${at}.compaction.content: String should have at least 1 character`, errorCode: 'invalid_request' };
      withContent++;
      if (typeof b.signature !== 'string' || !b.signature.startsWith('fake_csig_')) {
        return { message: `${at}: Invalid \`signature\` in \`compaction\` block`, errorCode: 'compaction_signature_invalid' };
      }
      if (b.signature !== signCompaction(b.content)) {
        return { message: `${at}: \`compaction\` block content does not match its signature`, errorCode: 'compaction_content_mismatch' };
      }
    }
  }
  if (withContent > 1) return { message: 'messages: more than one `compaction` block with content; send only the last one returned', errorCode: 'compaction_block_ambiguous' };
  return undefined;
}

/**
 * The prompt the model sees after a compaction block: everything before the block is dropped and the
 * block's summary stands in for it (SDK BetaCompactionBlockParam / BetaCompactionConfig docs; where the
 * block may sit is not enforced: guessed).
 */
export function dropBeforeCompaction(body: Record<string, any>): Record<string, any> {
  const msgs = body.messages as any[];
  for (let i = msgs.length - 1; i >= 0; i--) {
    const c = blocksOf(msgs[i]);
    const j = c.findIndex((b) => b?.type === 'compaction' && typeof b.content === 'string');
    if (j >= 0) {
      const summary = { role: 'user', content: [{ type: 'text', text: c[j].content }] };
      const rest = c.slice(j + 1);
      return { ...body, messages: [summary, ...(rest.length > 0 ? [{ ...msgs[i], content: rest }] : []), ...msgs.slice(i + 1)] };
    }
  }
  return body;
}

// ---------------------------------------------------------------------------------------------------
// Models API capabilities
// ---------------------------------------------------------------------------------------------------

/** What a fake model declares it supports; everything not listed is unsupported. */
export interface FakeCapabilities {
  /** Thinking types the model accepts (ThinkingTypes). `true` = enabled, disabled and adaptive. */
  thinking?: boolean | Array<'enabled' | 'disabled' | 'adaptive' | 'between_tools'>;
  /** Context-management strategies the model supports (ContextManagementCapability). */
  contextManagement?: ContextEditType[];
  batch?: boolean;
  citations?: boolean;
  imageInput?: boolean;
  pdfInput?: boolean;
  structuredOutputs?: boolean;
}

/** The full ModelCapabilities object (the API always sends every key) for a declaration. */
export function modelCapabilities(c: FakeCapabilities): Anthropic.ModelCapabilities {
  const s = (supported: boolean | undefined) => ({ supported: supported === true });
  const thinkingTypes = c.thinking === true ? ['enabled', 'disabled', 'adaptive'] : Array.isArray(c.thinking) ? c.thinking : [];
  const cm = c.contextManagement ?? [];
  return {
    batch: s(c.batch),
    citations: s(c.citations),
    code_execution: s(false),
    context_management: {
      supported: cm.length > 0,
      clear_thinking_20251015: s(cm.includes('clear_thinking_20251015')),
      clear_tool_uses_20250919: s(cm.includes('clear_tool_uses_20250919')),
      compact_20260112: s(cm.includes('compact_20260112')),
    },
    effort: { supported: false, low: s(false), medium: s(false), high: s(false), max: s(false), xhigh: null },
    image_input: s(c.imageInput),
    pdf_input: s(c.pdfInput),
    server_tools: { supported: false, code_execution: s(false), web_search: s(false) },
    structured_outputs: s(c.structuredOutputs),
    thinking: {
      supported: thinkingTypes.length > 0,
      types: {
        enabled: s(thinkingTypes.includes('enabled')),
        disabled: s(thinkingTypes.includes('disabled') || thinkingTypes.length > 0),
        adaptive: s(thinkingTypes.includes('adaptive')),
        between_tools: s(thinkingTypes.includes('between_tools')),
      },
    },
  };
}

/**
 * A request using a feature its model declares unsupported. The API rejects these; the wording is ours
 * (we have no verbatim sample). Only models with declared capabilities are checked.
 */
export function checkCapabilities(body: Record<string, any>, caps: Anthropic.ModelCapabilities): string | undefined {
  const t = body.thinking;
  if (isObj(t) && t.type !== 'disabled') {
    const types = caps.thinking.types as unknown as Record<string, { supported: boolean } | undefined>;
    if (!types[t.type]?.supported) return `thinking.type: '${t.type}' is not supported by model ${body.model}`;
  }
  const edits: any[] = Array.isArray(body.context_management?.edits) ? body.context_management.edits : [];
  for (let i = 0; i < edits.length; i++) {
    const supported = (caps.context_management as unknown as Record<string, { supported: boolean } | null>)[edits[i].type];
    if (!supported?.supported) return `context_management.edits.${i}: '${edits[i].type}' is not supported by model ${body.model}`;
  }
  return undefined;
}
