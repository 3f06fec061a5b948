/**
 * What the fake Anthropic server accepts: token counting (a deterministic stand-in for the tokenizer)
 * and request validation with the real API's error wording.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { checkTopLevelFields } from './fake-anthropic-fields';
import { checkMediaBlock, isMediaBlock, mediaBlockTokens } from './fake-anthropic-media';
import { COMPACTION_BETA } from './fake-anthropic-betas';
import { blocksOf, isObj } from './fake-anthropic-blocks';
import { checkCacheControl } from './fake-anthropic-cache';
import { checkContextManagement } from './fake-anthropic-context-edits';
import { checkThinkingBlocks, checkThinkingConfig } from './fake-anthropic-thinking';

type ContentBlock = Anthropic.ContentBlock;

/** max_tokens ceiling for models without an explicit `maxTokens` (Claude's largest output budget). */
export const DEFAULT_MAX_OUTPUT_TOKENS = 128_000;

const TOKEN_RE = /[A-Za-z]{1,6}|[0-9]{1,3}|[^\sA-Za-z0-9]/g;
const PER_MESSAGE = 4;
const PER_TOOL = 8;

/** Tokens in one string under the fake tokenizer. */
export function countFakeTextTokens(text: string): number {
  return text.match(TOKEN_RE)?.length ?? 0;
}

/**
 * Input tokens of a Messages request: the tokenizer over the JSON of `system`, of `tools` and of each
 * message's `content` (so block structure, tool inputs, tool results and image data all count), plus
 * 4 per message and 8 per tool. Tolerates malformed bodies (counts what it can).
 */
export function countFakeTokens(body: { system?: unknown; tools?: unknown; messages: unknown }): number {
  let n = 0;
  if (body.system !== undefined && body.system !== null) n += countFakeTextTokens(JSON.stringify(body.system));
  if (Array.isArray(body.tools)) n += countFakeTextTokens(JSON.stringify(body.tools)) + PER_TOOL * body.tools.length;
  if (Array.isArray(body.messages)) {
    for (const m of body.messages) {
      const content = (m as { content?: unknown } | null)?.content;
      n += PER_MESSAGE + (content === undefined ? 0 : countContentTokens(content));
    }
  }
  return n;
}

/** A message's content: its JSON through the tokenizer, except images and documents, which count as the API counts them. */
function countContentTokens(content: unknown): number {
  if (!Array.isArray(content) || !content.some(isMediaBlock)) return countFakeTextTokens(JSON.stringify(content));
  const rest = content.filter((b) => !isMediaBlock(b));
  return countFakeTextTokens(JSON.stringify(rest)) + content.filter(isMediaBlock).reduce((n, b) => n + mediaBlockTokens(b, countFakeTextTokens), 0);
}

/** Output tokens of a reply: its text plus each tool call's name and JSON input (at least 1). */
export function countOutputTokens(content: ContentBlock[]): number {
  let n = 0;
  for (const b of content) {
    if (b.type === 'text') n += countFakeTextTokens(b.text);
    else if (b.type === 'thinking') n += countFakeTextTokens(b.thinking);
    else if (b.type === 'tool_use') n += countFakeTextTokens(b.name) + countFakeTextTokens(JSON.stringify(b.input ?? {}));
  }
  return Math.max(1, n);
}

// ---------------------------------------------------------------------------------------------------
// Validation (messages modelled on the real API's wording)
//
// Where a rule comes from: the real API's 400 messages as users reported them verbatim, e.g.
// - "messages: text content blocks must contain non-whitespace text" (anthropics/claude-code#23440)
// - "messages.0: all messages must have non-empty content except for the optional final assistant
//   message" (anthropics/claude-code#3196, #6774)
// - "messages: final assistant content cannot end with trailing whitespace" (anomalyco/opencode#1295)
// - "messages.1.content.1: `tool_use` ids must be unique" (anthropics/claude-code#21317)
// - "messages.1.content.0.tool_use.input: Input should be a valid dictionary" (anthropic-sdk-typescript#648)
// - "messages.65.content.1.tool_use.text: Extra inputs are not permitted" (anthropics/claude-code#4378)
// - "input length and `max_tokens` exceed context limit: 178959 + 64000 > 200000, decrease input length
//   or `max_tokens` and try again" (docker/docker-agent#569)
// - "messages.N: `tool_use` ids were found without `tool_result` blocks immediately after: …"
// Consecutive messages of one role are merged into one turn, as the Messages API reference says of the
// `messages` parameter, so they are accepted (and the pairing rules apply to the merged turns).
// Messages marked "wording is ours" are rules the API enforces for which we have no verbatim sample.
// ---------------------------------------------------------------------------------------------------

/**
 * Block types accepted in request messages, with the fields each may carry (from the SDK's `*BlockParam`
 * types). Beyond the four the harness uses we also accept the other common ones the real API accepts,
 * so the fake never rejects a request the real API would take.
 */
const BLOCK_FIELDS: Record<string, readonly string[]> = {
  text: ['type', 'text', 'cache_control', 'citations'],
  image: ['type', 'source', 'cache_control', 'transformations'],
  document: ['type', 'source', 'cache_control', 'citations', 'context', 'title'],
  search_result: ['type', 'content', 'source', 'title', 'cache_control', 'citations'],
  tool_use: ['type', 'id', 'name', 'input', 'cache_control', 'caller', 'toolset_name'],
  tool_result: ['type', 'tool_use_id', 'content', 'is_error', 'cache_control', 'toolset_name'],
  thinking: ['type', 'thinking', 'signature'],
  redacted_thinking: ['type', 'data'],
  // Only with the compaction beta (BetaCompactionBlockParam).
  compaction: ['type', 'content', 'encrypted_content', 'signature', 'tool_changes', 'cache_control'],
};
/** System blocks are text blocks (`system?: string | Array<TextBlockParam>`). */
const SYSTEM_BLOCK_FIELDS = BLOCK_FIELDS.text!;
const KNOWN_BLOCKS = ['text', 'image', 'document', 'tool_use', 'tool_result', 'thinking', 'redacted_thinking'];
/** Block types a tool_result's `content` list may hold. */
const TOOL_RESULT_BLOCKS = ['text', 'image', 'document', 'search_result'];

const toolUseIds = (m: any): string[] =>
  m?.role === 'assistant' ? blocksOf(m).filter((b) => b?.type === 'tool_use').map((b) => b.id) : [];
const isBlank = (s: string) => s.trim().length === 0;

export interface ValidateMessagesOptions {
  /** false for /v1/messages/count_tokens, which takes neither max_tokens nor stream. Default true. */
  generation?: boolean;
  /** The model's output cap. Default 128_000. */
  maxOutputTokens?: number;
  /**
   * Beta names from the request's `anthropic-beta` header. `context_management` needs
   * `context-management-2025-06-27` (or `compact-2026-01-12`), `compaction` blocks need `compact-2026-01-12`.
   * Default none.
   */
  betas?: string[];
}

/** A text block's own rules (empty, whitespace-only), or undefined. */
function checkText(text: string): string | undefined {
  if (text.length === 0) return 'messages: text content blocks must be non-empty';
  if (isBlank(text)) return 'messages: text content blocks must contain non-whitespace text';
  return undefined;
}

/** Extra keys on a block, as pydantic reports them. */
function checkFields(b: Record<string, any>, at: string): string | undefined {
  const allowed = BLOCK_FIELDS[b.type];
  const extra = allowed ? Object.keys(b).find((k) => !allowed.includes(k)) : undefined;
  return extra === undefined ? undefined : `${at}.${b.type}.${extra}: Extra inputs are not permitted`;
}

function checkBlock(b: unknown, at: string, role: string, betas: string[] = []): string | undefined {
  if (!isObj(b)) return `${at}: Input should be a valid dictionary`;
  const known = betas.includes(COMPACTION_BETA) ? [...KNOWN_BLOCKS, 'compaction'] : KNOWN_BLOCKS;
  if (!known.includes(b.type)) {
    // The tag list names the blocks of the request's API surface (without the beta, no `compaction`).
    return `${at}: Input tag '${String(b.type)}' found using 'type' does not match any of the expected tags: ${known.map((t) => `'${t}'`).join(', ')}`;
  }
  const extra = checkFields(b, at);
  if (extra) return extra;
  if (b.type === 'image' || b.type === 'document') {
    if (role !== 'user') return `${at}: \`${b.type}\` blocks can only be in \`user\` messages`; // wording is ours
    const media = checkMediaBlock(b, at);
    if (media) return media;
  }
  if (b.type === 'text') {
    if (typeof b.text !== 'string') return `${at}.text: Field required`;
    // "messages.N.content.M.text: cache_control cannot be set for empty text blocks" (real 400, quoted in
    // "Claude Code 400 Recovery When cache_control Cannot Be Set for Empty Text Blocks", hashnode).
    if (b.text.length === 0 && b.cache_control !== undefined && b.cache_control !== null) return `${at}.text: cache_control cannot be set for empty text blocks`;
    return checkText(b.text);
  }
  if (b.type === 'thinking') {
    // ThinkingBlockParam: `thinking` and `signature` are required strings. (A cache_control on a thinking
    // block is an extra input: thinking blocks cannot be cached directly, per the prompt-caching docs.)
    if (typeof b.thinking !== 'string') return `${at}.thinking.thinking: Field required`;
    if (typeof b.signature !== 'string') return `${at}.thinking.signature: Field required`;
    if (role !== 'assistant') return `${at}: \`thinking\` blocks can only be in \`assistant\` messages`; // wording is ours
  }
  if (b.type === 'redacted_thinking') {
    if (typeof b.data !== 'string') return `${at}.redacted_thinking.data: Field required`;
    if (role !== 'assistant') return `${at}: \`redacted_thinking\` blocks can only be in \`assistant\` messages`; // wording is ours
  }
  if (b.type === 'tool_use') {
    if (typeof b.id !== 'string' || b.id.length === 0) return `${at}.id: Field required`;
    if (typeof b.name !== 'string' || b.name.length === 0) return `${at}.name: Field required`;
    if (!('input' in b)) return `${at}.tool_use.input: Field required`;
    if (!isObj(b.input)) return `${at}.tool_use.input: Input should be a valid dictionary`;
    // Wording is ours: the real API rejects this but we have no verbatim sample of its message.
    if (role !== 'assistant') return `${at}: \`tool_use\` blocks can only be in \`assistant\` messages`;
  }
  if (b.type === 'tool_result') {
    if (typeof b.tool_use_id !== 'string' || b.tool_use_id.length === 0) return `${at}.tool_use_id: Field required`;
    if (b.is_error !== undefined && typeof b.is_error !== 'boolean') return `${at}.tool_result.is_error: Input should be a valid boolean`;
    const c = b.content;
    // `content` is a string or a list of blocks (ToolResultBlockParam); an object is neither.
    if (c !== undefined && typeof c !== 'string' && !Array.isArray(c)) return `${at}.tool_result.content: Input should be a valid list`;
    if (Array.isArray(c)) {
      for (let k = 0; k < c.length; k++) {
        const inner = c[k];
        const innerAt = `${at}.tool_result.content.${k}`;
        if (!isObj(inner)) return `${innerAt}: Input should be a valid dictionary`;
        if (!TOOL_RESULT_BLOCKS.includes(inner.type)) {
          return `${innerAt}: Input tag '${String(inner.type)}' found using 'type' does not match any of the expected tags: ${TOOL_RESULT_BLOCKS.map((t) => `'${t}'`).join(', ')}`;
        }
        const innerExtra = checkFields(inner, innerAt);
        if (innerExtra) return innerExtra;
        if (inner.type === 'text') {
          if (typeof inner.text !== 'string') return `${innerAt}.text: Field required`;
          const t = checkText(inner.text);
          if (t) return t;
        }
      }
    }
    if (role !== 'user') return `${at}: \`tool_result\` blocks can only be in \`user\` messages`;
  }
  return undefined;
}

/**
 * The Messages API's request rules, as the fake enforces them. Returns the invalid_request_error message
 * for the first violation, or undefined when the real API would accept the request (as far as the fake
 * knows its rules). Exported so tests can hold any conversation, e.g. the SDK's `toApiMessages` output,
 * to the fake's rules rather than the SDK's own checks.
 */
export function validateMessagesRequest(body: unknown, opts: ValidateMessagesOptions = {}): string | undefined {
  const generation = opts.generation ?? true;
  const maxOutputTokens = opts.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS;
  const betas = opts.betas ?? [];
  if (!isObj(body)) return 'request body must be a JSON object';

  // -- scalar fields
  if (body.model === undefined) return 'model: Field required';
  if (typeof body.model !== 'string') return 'model: Input should be a valid string';
  if (body.model.length === 0) return 'model: String should have at least 1 character';
  if (generation) {
    const mt = body.max_tokens;
    if (mt === undefined) return 'max_tokens: Field required';
    if (typeof mt !== 'number' || !Number.isInteger(mt)) return 'max_tokens: Input should be a valid integer';
    if (mt < 1) return 'max_tokens: Input should be greater than or equal to 1';
    if (mt > maxOutputTokens) {
      return `max_tokens: ${mt} > ${maxOutputTokens}, which is the maximum allowed number of output tokens for ${body.model}`;
    }
  }
  if (body.system !== undefined && typeof body.system !== 'string' && !Array.isArray(body.system)) {
    return 'system: Input should be a valid string';
  }
  if (Array.isArray(body.system)) {
    for (let i = 0; i < body.system.length; i++) {
      const b = body.system[i];
      if (!isObj(b)) return `system.${i}: Input should be a valid dictionary`;
      if (b.type !== 'text') return `system.${i}.type: Input should be 'text'`;
      const extra = Object.keys(b).find((k) => !SYSTEM_BLOCK_FIELDS.includes(k));
      if (extra !== undefined) return `system.${i}.${extra}: Extra inputs are not permitted`;
      if (typeof b.text !== 'string') return `system.${i}.text: Field required`;
      if (b.text.length === 0 && b.cache_control !== undefined && b.cache_control !== null) return `system.${i}.text: cache_control cannot be set for empty text blocks`;
      if (b.text.length === 0) return 'system: text content blocks must be non-empty';
    }
  }
  const thinkingConfig = checkThinkingConfig(body, generation);
  if (thinkingConfig) return thinkingConfig;

  // -- messages: shape of every message and block
  const msgs = body.messages;
  if (msgs === undefined) return 'messages: Field required';
  if (!Array.isArray(msgs)) return 'messages: Input should be a valid list';
  if (msgs.length === 0) return 'messages: at least one message is required';
  const seenToolUse = new Set<string>();
  for (let i = 0; i < msgs.length; i++) {
    const m = msgs[i];
    if (!isObj(m)) return `messages.${i}: Input should be a valid dictionary`;
    if (m.role !== 'user' && m.role !== 'assistant') return `messages.${i}.role: Input should be 'user' or 'assistant'`;
    const extraKey = Object.keys(m).find((k) => k !== 'role' && k !== 'content');
    if (extraKey !== undefined) return `messages.${i}.${extraKey}: Extra inputs are not permitted`;
    const c = m.content;
    if (c === undefined) return `messages.${i}.content: Field required`;
    if (typeof c !== 'string' && !Array.isArray(c)) return `messages.${i}.content: Input should be a valid list`;
    const isFinalAssistant = i === msgs.length - 1 && m.role === 'assistant'; // prefill may be empty
    if (c.length === 0 && !isFinalAssistant) {
      return `messages.${i}: all messages must have non-empty content except for the optional final assistant message`;
    }
    if (typeof c === 'string') {
      // A string is one text block to the API; an empty final prefill was allowed above.
      if (c.length > 0 && isBlank(c)) return 'messages: text content blocks must contain non-whitespace text';
      continue;
    }
    for (let j = 0; j < c.length; j++) {
      const at = `messages.${i}.content.${j}`;
      const problem = checkBlock(c[j], at, m.role, betas);
      if (problem) return problem;
      if (c[j].type === 'tool_use') {
        if (seenToolUse.has(c[j].id)) return `${at}: \`tool_use\` ids must be unique`;
        seenToolUse.add(c[j].id);
      }
    }
  }
  const last = msgs[msgs.length - 1];
  if (last.role === 'assistant') {
    const blocks = blocksOf(last);
    const tail = blocks[blocks.length - 1];
    if (tail?.type === 'text' && /\s$/.test(tail.text)) return 'messages: final assistant content cannot end with trailing whitespace';
  }

  // -- unknown top-level fields (a misspelt parameter), reported after the fields' own errors as pydantic does
  const unknownField = checkTopLevelFields(body, generation, betas.length > 0);
  if (unknownField) return unknownField;

  // -- roles: consecutive same-role messages are merged into one turn (the API does this too).
  if (msgs[0].role !== 'user') return 'messages: first message must use the "user" role';
  const turns: Array<{ role: string; content: any[]; index: number }> = [];
  for (let i = 0; i < msgs.length; i++) {
    const prev = turns[turns.length - 1];
    if (prev && prev.role === msgs[i].role) prev.content.push(...blocksOf(msgs[i]));
    else turns.push({ role: msgs[i].role, content: [...blocksOf(msgs[i])], index: i });
  }

  // -- tools
  const toolNames = new Set<string>();
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) return 'tools: Input should be a valid list';
    for (let i = 0; i < body.tools.length; i++) {
      const t = body.tools[i];
      if (!isObj(t)) return `tools.${i}: Input should be a valid dictionary`;
      if (typeof t.name !== 'string' || t.name.length === 0) return `tools.${i}.name: Field required`;
      // Server tools (`type: 'web_search_20250305'`, …) carry no input_schema; custom tools must.
      if (t.type === undefined || t.type === null || t.type === 'custom') {
        if (!isObj(t.input_schema)) return `tools.${i}.input_schema: Field required`;
        if (t.input_schema.type !== 'object') return `tools.${i}.input_schema.type: Input should be 'object'`;
      }
      if (toolNames.has(t.name)) return 'tools: Tool names must be unique.';
      toolNames.add(t.name);
    }
  }
  if (body.tool_choice !== undefined) {
    const tc = body.tool_choice;
    if (!isObj(tc)) return 'tool_choice: Input should be a valid dictionary';
    if (!['auto', 'any', 'tool', 'none'].includes(tc.type)) {
      return `tool_choice: Input tag '${String(tc.type)}' found using 'type' does not match any of the expected tags: 'auto', 'any', 'tool', 'none'`;
    }
    if (tc.type === 'tool') {
      if (typeof tc.name !== 'string' || tc.name.length === 0) return 'tool_choice.tool.name: Field required';
      // Wording is ours: the API refuses to force a tool it was not given.
      if (!toolNames.has(tc.name)) return `tool_choice: tool '${tc.name}' was not found in \`tools\``;
    }
    if (tc.type === 'any' && toolNames.size === 0) return 'tool_choice: `any` requires at least one tool in `tools`'; // wording is ours
  }

  // -- tool_use / tool_result pairing over the merged turns, scanned in order so the lowest index is
  // reported, as the real API does. Only the *leading* run of tool_result blocks in a user turn answers
  // the previous assistant's tool_use blocks: a tool_result placed after a text block does not count
  // (verified real behaviour), so [text, tool_result] after a tool_use reports the tool_use as unanswered.
  for (let t = 0; t < turns.length; t++) {
    const turn = turns[t]!;
    const i = turn.index;
    if (turn.role === 'assistant') {
      const ids = toolUseIds(turn);
      if (ids.length === 0 || t + 1 >= turns.length) continue;
      const answered = new Set<string>();
      for (const b of turns[t + 1]!.content) {
        if (b.type !== 'tool_result') break;
        answered.add(b.tool_use_id);
      }
      const missing = ids.filter((id) => !answered.has(id));
      if (missing.length > 0) {
        return `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
      }
    } else {
      const expected = new Set(t > 0 ? toolUseIds(turns[t - 1]) : []);
      const blocks = turn.content;
      const orphanAt = blocks.findIndex((b) => b.type === 'tool_result' && !expected.has(b.tool_use_id));
      if (orphanAt >= 0) {
        const orphans = blocks.filter((b) => b.type === 'tool_result' && !expected.has(b.tool_use_id)).map((b) => b.tool_use_id);
        return `messages.${i}.content.${orphanAt}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${orphans.join(', ')}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
      }
      // Anything still out of order (a tool_result after other content that the checks above did not
      // already report, e.g. a duplicate answer). Wording is ours.
      const firstOther = blocks.findIndex((b) => b.type !== 'tool_result');
      const lateResult = firstOther < 0 ? -1 : blocks.findIndex((b, j) => j > firstOther && b.type === 'tool_result');
      if (lateResult >= 0) {
        return `messages.${i}.content.${lateResult}: \`tool_result\` blocks must come before any other content in a \`user\` message`;
      }
    }
  }

  // -- Claude features: prompt caching, thinking round trips, context management.
  const feature = checkCacheControl(body) ?? checkThinkingBlocks(body, turns) ?? checkContextManagement(body, betas);
  if (feature) return feature;

  if (body.stream !== undefined && typeof body.stream !== 'boolean') return 'stream: Input should be a valid boolean';
  return undefined;
}

