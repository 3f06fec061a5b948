/**
 * A scripted, protocol-faithful fake of the Anthropic Messages API.
 *
 * It is NOT a model: every reply comes from a script (or a `route` callback) written by the test, and
 * every response says so in the `x-fake-anthropic: scripted` header. What it does reproduce faithfully is
 * the protocol around the model: request validation and the real error shapes/messages, the
 * "prompt is too long" rejection, rate-limit/overload/server errors, response bodies that satisfy the
 * SDK's `Message` / `ModelInfo` types, and the models endpoints. The real `@anthropic-ai/sdk` client
 * talks to it over loopback HTTP via `baseURL`.
 *
 * ## Test API
 *
 * ```ts
 * const fake = await FakeAnthropicServer.start({ script: [say('hi')], contextWindow: 5000 });
 * // client: new Anthropic({ apiKey: 'x', baseURL: fake.url })
 * fake.enqueue(callTools({ name: 'read', input: { path: 'a' } }), say('done'));
 * fake.setRoute((req) => (isSummaryRequest(req) ? say('summary') : undefined)); // consulted before the queue
 * fake.requests;          // every request, rejected ones too;  fake.messageRequests(): the accepted ones
 * fake.remaining();       // steps not yet played
 * await fake.stop();
 * ```
 *
 * Steps (one per accepted POST /v1/messages):
 * - `say(text, { stopReason?, usage? })`: one text block. `stopReason` may be any the API returns
 *   except `tool_use` (`end_turn` default, `max_tokens`, `stop_sequence`, `pause_turn`, `refusal`,
 *   `model_context_window_exceeded`). `say('\n\n')` is a whitespace-only reply, as real models send.
 * - `callTools(...calls)`: tool_use blocks, `stop_reason: "tool_use"`.
 * - `reply({ content, stopReason?, usage? })`: any reply. `content` items are strings (text blocks, sent
 *   verbatim, even empty or whitespace) or tool calls `{ name, input?, id? }` (tool_use blocks;
 *   `input` may be partial, e.g. a call cut off by `stopReason: 'max_tokens'`). `content: []` is an
 *   empty reply. `stopReason` defaults to `tool_use` when there is a call, else `end_turn`.
 * - `fail(status, { message?, retryAfterSeconds?, retryAfterMs? })`: an HTTP error with the real body.
 *
 * A request with `stream: true` gets the step as server-sent events, exactly as the API streams
 * (see fake-anthropic-sse.ts); a step's `stream: { chunkChars, delayMs, pauseAfterDeltas, gate,
 * errorAfterDeltas, errorType }` paces it, pauses it until `fake.release(gate)`, or ends it with an
 * `error` event mid-stream (overloaded_error by default). An error step is an HTTP error either way.
 *
 * Requests are checked by {@link validateMessagesRequest} (exported: tests can hold any conversation to
 * the same rules). A violation is a 400 `invalid_request_error` with the real API's message, and no step
 * is consumed. The window check: input tokens (see {@link countFakeTokens}) over the model's window are
 * rejected with "prompt is too long"; with `maxTokensMustFit` (older models) input + `max_tokens` over
 * the window is rejected too, with the real "input length and `max_tokens` exceed context limit"
 * message. Newer models instead accept the request and stop at the window
 * (`stop_reason: "model_context_window_exceeded"`), which a script can play.
 *
 * No dependencies beyond node:http. The SDK is imported for types only (erased at runtime).
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type Anthropic from '@anthropic-ai/sdk';
import {
  PromptCache,
  applyContextEdits,
  betasOf,
  checkCacheControl,
  checkCapabilities,
  checkCompactionBlocks,
  checkContextManagement,
  checkThinkingBlocks,
  checkThinkingConfig,
  compactEditOf,
  COMPACTION_BETA,
  COMPACT_DEFAULT_TRIGGER,
  defaultMinCacheableTokens,
  dropBeforeCompaction,
  modelCapabilities,
  sealRedactedThinking,
  signCompaction,
  signThinking,
  thinkingOn,
  type AppliedEdit,
  type FakeCapabilities,
} from './fake-anthropic-features';
import { StreamGates, streamDurationMs, writeEventStream, type FakeStreamOptions } from './fake-anthropic-sse';

export { sseEventsFor, type FakeStreamOptions, type SseEvent } from './fake-anthropic-sse';
export {
  CLEARED_TOOL_RESULT,
  COMPACTION_BETA,
  CONTEXT_MANAGEMENT_BETA,
  defaultMinCacheableTokens,
  signThinking,
  type FakeCapabilities,
} from './fake-anthropic-features';

type ContentBlock = Anthropic.ContentBlock;
type Message = Anthropic.Message;
type StopReason = Anthropic.StopReason;
type ModelInfo = Anthropic.ModelInfo;

// ---------------------------------------------------------------------------------------------------
// Public types
// ---------------------------------------------------------------------------------------------------

export type FakeUsage = Partial<{ input_tokens: number; output_tokens: number }>;
export type FakeErrorStatus = 400 | 401 | 403 | 404 | 413 | 429 | 500 | 529;
/** Every stop reason the real API returns. */
export type FakeStopReason = StopReason;

export interface FakeTextStep {
  kind: 'text';
  text: string;
  stopReason?: Exclude<FakeStopReason, 'tool_use'>;
  /** Overrides the reported usage (e.g. to simulate a provider that under-reports input tokens). */
  usage?: FakeUsage;
  /** A thinking block before the text (the request must enable thinking). */
  thinking?: string;
  /** How a streaming request (`stream: true`) receives it (pace, pause, a mid-stream error). */
  stream?: FakeStreamOptions;
}
/** A thinking block in a reply, signed by the fake (see {@link think}). */
export interface FakeThinking {
  kind: 'thinking';
  thinking: string;
}
/** A redacted_thinking block in a reply (see {@link redactedThinking}). */
export interface FakeRedactedThinking {
  kind: 'redacted_thinking';
  /** Hidden text sealed into the opaque `data`. */
  payload: string;
}
/** What a reply's `content` may hold: text (a string), a tool call, or thinking. */
export type FakeReplyItem = string | FakeToolCall | FakeThinking | FakeRedactedThinking;
export interface FakeToolCall {
  name: string;
  /** Omitted: the block is sent with `input: {}`. Any value is sent as is (a truncated call may be partial). */
  input?: unknown;
  /** Defaults to `toolu_fake_<n>`. */
  id?: string;
}
export interface FakeToolUseStep {
  kind: 'tool_use';
  calls: FakeToolCall[];
  /** Thinking blocks emitted first (the request must enable thinking). */
  thinking?: Array<FakeThinking | FakeRedactedThinking>;
  /** Optional text block emitted before the tool_use blocks. */
  text?: string;
  usage?: FakeUsage;
  stream?: FakeStreamOptions;
}
/** Any reply: blocks in order (a string is a text block, sent verbatim) and any stop reason. */
export interface FakeReplyStep {
  kind: 'reply';
  content: FakeReplyItem[];
  stopReason?: FakeStopReason;
  usage?: FakeUsage;
  stream?: FakeStreamOptions;
}
export interface FakeErrorStep {
  kind: 'error';
  status: FakeErrorStatus;
  message?: string;
  /** Sent as the `retry-after` header (whole seconds, as the real API sends it). */
  retryAfterSeconds?: number;
  /** Sent as the `retry-after-ms` header, which the SDK reads before `retry-after`. */
  retryAfterMs?: number;
}
export type FakeStep = FakeTextStep | FakeToolUseStep | FakeReplyStep | FakeErrorStep;

export interface RecordedRequest {
  method: string;
  /** URL path without the query string, e.g. `/v1/messages`. */
  path: string;
  /** Lower-cased header names; repeated headers joined with `, `. */
  headers: Record<string, string>;
  /** Parsed JSON body; the raw string when it was not JSON; undefined when empty. */
  body: any;
  /** Counted input tokens, for any request whose body has a `messages` array. */
  inputTokens?: number;
  /** Date.now() at receipt. */
  at: number;
}

export type FakeRoute = (req: RecordedRequest) => FakeStep | undefined;

export interface FakeModel {
  maxInputTokens: number;
  maxTokens?: number;
  displayName?: string;
  /** Reject input + max_tokens over the window (models before the `model_context_window_exceeded` stop). */
  maxTokensMustFit?: boolean;
  /**
   * What `GET /v1/models/{id}` reports in `capabilities` (absent: `null`, as before). When declared, a
   * request using thinking or a context-management edit the model does not support is rejected.
   */
  capabilities?: FakeCapabilities;
  /** Shortest prefix that is cached. Default by id: {@link defaultMinCacheableTokens} (1024 for unknown ids). */
  minCacheableTokens?: number;
}

export interface FakeAnthropicOptions {
  /** Played in order, one step per POST /v1/messages that passed validation. */
  script?: FakeStep[];
  /** Consulted before the queue (e.g. to answer summarisation requests); undefined = use the queue. */
  route?: FakeRoute;
  /** Default input-token window for any model not in `models`. Default 200_000. */
  contextWindow?: number;
  /** Default for models not in `models` (see {@link FakeModel.maxTokensMustFit}). Default false. */
  maxTokensMustFit?: boolean;
  models?: Record<string, FakeModel>;
  /**
   * Know only the models in `models`, as the real API knows only real ids: others get its 404
   * `not_found_error` ("model: <id>") from the models endpoint and from messages. Default false: any
   * id is known (convenient for scripts).
   */
  onlyListedModels?: boolean;
  /** When set, `x-api-key` (or `authorization: Bearer …`) must equal it. */
  apiKey?: string;
  /** Default 0 (ephemeral). */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /**
   * The summary a `compact_20260112` edit writes when it triggers. Default: a deterministic line naming
   * how many messages were summarised (the fake is not a model).
   */
  compactionSummary?: (req: RecordedRequest) => string;
  /** How streaming requests receive every step that sets no `stream` of its own (default: 8-char deltas, no delay). */
  stream?: FakeStreamOptions;
}

// ---------------------------------------------------------------------------------------------------
// Builders
// ---------------------------------------------------------------------------------------------------

/**
 * A thinking block for a reply, signed deterministically by the fake:
 * `reply({ content: [think('Check the file first.'), { name: 'read', input: { path: 'a' } }] })`,
 * `callTools(think('plan'), { name: 'read' })`, or `say('done', { thinking: 'plan' })`.
 */
export const think = (thinking: string): FakeThinking => ({ kind: 'thinking', thinking });

/** A redacted_thinking block (opaque `data`; the fake seals `payload` into it and verifies it when sent back). */
export const redactedThinking = (payload = 'redacted'): FakeRedactedThinking => ({ kind: 'redacted_thinking', payload });

/** A plain text reply (stop_reason `end_turn` unless overridden). */
export const say = (text: string, extra: Omit<FakeTextStep, 'kind' | 'text'> = {}): FakeStep => ({
  kind: 'text',
  text,
  ...extra,
});

/** A reply that calls one or more tools (stop_reason `tool_use`); thinking items given are emitted first. */
export const callTools = (...items: Array<FakeToolCall | FakeThinking | FakeRedactedThinking>): FakeStep => {
  const thinking = items.filter(isThinkingItem);
  const calls = items.filter((i): i is FakeToolCall => !isThinkingItem(i));
  return thinking.length > 0 ? { kind: 'tool_use', calls, thinking } : { kind: 'tool_use', calls };
};

function isThinkingItem(i: unknown): i is FakeThinking | FakeRedactedThinking {
  const kind = (i as { kind?: unknown } | null)?.kind;
  return kind === 'thinking' || kind === 'redacted_thinking';
}

/**
 * Any reply the API can give, e.g. a tool call cut off by the output limit:
 * `reply({ content: ['Writing it.', { name: 'write', input: { path: 'a' } }], stopReason: 'max_tokens' })`,
 * an empty turn: `reply({ content: [] })`, a refusal: `reply({ content: [], stopReason: 'refusal' })`.
 */
export const reply = (opts: { content: FakeReplyItem[]; stopReason?: FakeStopReason; usage?: FakeUsage }): FakeStep => ({
  kind: 'reply',
  ...opts,
});

/** An HTTP error reply with the real error body for that status. */
export const fail = (
  status: FakeErrorStatus,
  opts: { message?: string; retryAfterSeconds?: number; retryAfterMs?: number } = {},
): FakeStep => ({ kind: 'error', status, ...opts });

// ---------------------------------------------------------------------------------------------------
// Token counting
// ---------------------------------------------------------------------------------------------------

/**
 * Deliberately not "characters / 4": letter runs of up to 6, digit runs of up to 3, and every other
 * non-space character is a token of its own. So prose is ~1 token per word, while base64 / hex /
 * punctuation-heavy text is much denser, as with real BPE tokenizers. Our estimator is benchmarked
 * against this, so it must stay exactly as specified.
 */
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
      n += PER_MESSAGE + (content === undefined ? 0 : countFakeTextTokens(JSON.stringify(content)));
    }
  }
  return n;
}

/** Output tokens of a reply: its text plus each tool call's name and JSON input (at least 1). */
function countOutputTokens(content: ContentBlock[]): number {
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

const isObj = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);
const blocksOf = (m: any): any[] => (Array.isArray(m?.content) ? m.content : typeof m?.content === 'string' ? [{ type: 'text', text: m.content }] : []);
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

// ---------------------------------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------------------------------

const DEFAULT_CONTEXT_WINDOW = 200_000;
/** max_tokens ceiling for models without an explicit `maxTokens` (Claude's largest output budget). */
const DEFAULT_MAX_OUTPUT_TOKENS = 128_000;
/** The real API's request size limit for the Messages endpoint. */
const MAX_BODY_BYTES = 32 * 1024 * 1024;

/** Error `type` and default message for each status a step may produce (the real API's values). */
const ERRORS: Record<FakeErrorStatus, { type: string; message: string }> = {
  400: { type: 'invalid_request_error', message: 'Invalid request (scripted)' },
  401: { type: 'authentication_error', message: 'invalid x-api-key' },
  403: { type: 'permission_error', message: 'Your API key does not have permission to use the specified resource.' },
  404: { type: 'not_found_error', message: 'Not Found' },
  413: { type: 'request_too_large', message: 'Request exceeds the maximum allowed number of bytes.' },
  429: { type: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit (scripted)' },
  500: { type: 'api_error', message: 'Internal server error' },
  529: { type: 'overloaded_error', message: 'Overloaded' },
};

interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** A message sent as an event stream (the request asked for `stream: true`). */
  stream?: FakeStreamOptions;
  /** A non-streaming reply of a paced step: sent after the time its stream would take. */
  pace?: FakeStreamOptions;
}

export class FakeAnthropicServer {
  /** Every request received, including rejected ones, in arrival order. */
  readonly requests: RecordedRequest[] = [];
  private readonly accepted: RecordedRequest[] = [];
  private readonly queue: FakeStep[];
  private route: FakeRoute | undefined;
  private requestSeq = 0;
  private messageSeq = 0;
  private toolUseSeq = 0;
  private readonly cache = new PromptCache();
  private readonly gates = new StreamGates();
  /** Added to Date.now(): the fake's clock, which tests move with {@link advanceTime}. */
  private clockOffsetMs = 0;

  private constructor(
    private readonly server: http.Server,
    /** Base URL to pass as the client's `baseURL`, e.g. `http://127.0.0.1:41234`. */
    readonly url: string,
    private readonly opts: FakeAnthropicOptions,
  ) {
    this.queue = [...(opts.script ?? [])];
    this.route = opts.route;
  }

  static async start(opts: FakeAnthropicOptions = {}): Promise<FakeAnthropicServer> {
    let instance: FakeAnthropicServer | undefined;
    const server = http.createServer((req, res) => void instance!.handle(req, res));
    const host = opts.host ?? '127.0.0.1';
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.port ?? 0, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const { port } = server.address() as AddressInfo;
    const urlHost = host.includes(':') ? `[${host}]` : host;
    instance = new FakeAnthropicServer(server, `http://${urlHost}:${port}`, opts);
    return instance;
  }

  /** Only the POST /v1/messages requests that passed validation (i.e. that consumed, or tried to consume, a step). */
  messageRequests(): RecordedRequest[] {
    return [...this.accepted];
  }

  enqueue(...steps: FakeStep[]): void {
    this.queue.push(...steps);
  }

  remaining(): number {
    return this.queue.length;
  }

  setRoute(route?: FakeRoute): void {
    this.route = route;
  }

  /** The fake's clock (Date.now() plus every {@link advanceTime}); prompt-cache lifetimes run on it. */
  now(): number {
    return Date.now() + this.clockOffsetMs;
  }

  /** Moves the fake's clock forward, e.g. past a cache entry's 5-minute lifetime. */
  advanceTime(ms: number): void {
    if (!(ms >= 0)) throw new RangeError(`advanceTime: ms must be a non-negative number, got ${ms}`);
    this.clockOffsetMs += ms;
  }

  /** Lets streams paused at `gate` (FakeStreamOptions.pauseAfterDeltas) go on; later ones pass it at once. */
  release(gate = 'default'): void {
    this.gates.release(gate);
  }

  /** Resolves once a stream waits at `gate` (or has passed it). */
  paused(gate = 'default'): Promise<void> {
    return this.gates.paused(gate);
  }

  /** Forgets every cached prompt prefix. */
  clearCache(): void {
    this.cache.clear();
  }

  /** How many cached prefixes are alive now. */
  cacheEntries(): number {
    return this.cache.size(this.now());
  }

  /** The exact function the server uses for `input_tokens` and the prompt-too-long check. */
  countTokens(body: { system?: unknown; tools?: unknown; messages: unknown }): number {
    return countFakeTokens(body);
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve()); // resolves (with an error we ignore) if already closed
      // The SDK's fetch keeps connections alive; without this close() would wait for them to idle out.
      this.server.closeAllConnections();
    });
  }

  // -------------------------------------------------------------------------------------------------

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    let reply: Reply;
    const requestId = `req_fake_${String(++this.requestSeq).padStart(6, '0')}`;
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const raw = Buffer.concat(chunks);

      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) {
        if (v !== undefined) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
      }
      let body: any;
      let unparseable = false;
      if (raw.length > 0) {
        const text = raw.toString('utf8');
        try {
          body = JSON.parse(text);
        } catch {
          body = text;
          unparseable = true;
        }
      }
      const rec: RecordedRequest = {
        method: req.method ?? 'GET',
        path: new URL(req.url ?? '/', 'http://fake.invalid').pathname,
        headers,
        body,
        at: Date.now(),
      };
      if (isObj(body) && Array.isArray(body.messages)) rec.inputTokens = countFakeTokens(body as { messages: unknown });
      this.requests.push(rec);

      reply =
        raw.length > MAX_BODY_BYTES
          ? errorReply(413, ERRORS[413].message)
          : unparseable
            ? errorReply(400, 'There was an error parsing the body of your request. Please check that the body is valid JSON.')
            : this.dispatch(rec);
    } catch (err) {
      // A throwing `route` callback, for instance: surface it as a 500 rather than hanging the client.
      reply = errorReply(500, `fake-anthropic internal error: ${err instanceof Error ? err.message : String(err)}`);
    }

    if (reply.stream && reply.status === 200) {
      const headers = { 'request-id': requestId, 'x-fake-anthropic': 'scripted', ...reply.headers };
      await writeEventStream(res, reply.body as Message, headers, reply.stream, this.gates).catch(() => res.destroy());
      return;
    }
    // A paced step takes as long without streaming as its stream would (the model generates either way).
    if (reply.pace?.delayMs && reply.status === 200) await new Promise((r) => setTimeout(r, streamDurationMs(reply.body as Message, reply.pace!)));
    const payload = JSON.stringify(withRequestId(reply.body, requestId));
    res.writeHead(reply.status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(payload),
      'request-id': requestId,
      'x-fake-anthropic': 'scripted',
      ...reply.headers,
    });
    res.end(payload);
  }

  private dispatch(rec: RecordedRequest): Reply {
    // Authentication comes first, for every endpoint, as with the real API.
    const bearer = /^Bearer\s+(.+)$/i.exec(rec.headers['authorization'] ?? '')?.[1];
    const key = rec.headers['x-api-key'] ?? bearer;
    if (key === undefined) return errorReply(401, 'x-api-key header is required');
    if (this.opts.apiKey !== undefined && key !== this.opts.apiKey) return errorReply(401, 'invalid x-api-key');
    if (rec.headers['anthropic-version'] === undefined) return errorReply(400, 'anthropic-version: header is required');

    const { method, path } = rec;
    if (method === 'POST' && path === '/v1/messages') return this.createMessage(rec);
    if (method === 'POST' && path === '/v1/messages/count_tokens') return this.countTokensEndpoint(rec);
    if (method === 'GET' && path === '/v1/models') return this.listModels();
    const m = /^\/v1\/models\/([^/]+)$/.exec(path);
    if (method === 'GET' && m) {
      const id = decodeURIComponent(m[1]);
      if (!this.knows(id)) return errorReply(404, `model: ${id}`);
      return { status: 200, body: this.modelInfo(id) };
    }
    return errorReply(404, 'Not Found');
  }

  /** Validation shared by messages and count_tokens (the same fields are accepted and rejected by both). */
  private validate(rec: RecordedRequest, generation: boolean): Reply | undefined {
    const body = rec.body;
    const model: unknown = isObj(body) ? body.model : undefined;
    const betas = betasOf(rec.headers);
    const spec = typeof model === 'string' ? this.opts.models?.[model] : undefined;
    const invalid = validateMessagesRequest(body, {
      generation,
      maxOutputTokens: spec?.maxTokens || DEFAULT_MAX_OUTPUT_TOKENS,
      betas,
    });
    if (invalid) return errorReply(400, invalid);
    const compaction = betas.includes(COMPACTION_BETA) ? checkCompactionBlocks(body) : undefined;
    if (compaction) return errorReply(400, compaction.message, {}, { error_code: compaction.errorCode });
    if (!this.knows(body.model)) return errorReply(404, `model: ${body.model}`);
    if (spec?.capabilities) {
      const unsupported = checkCapabilities(body, modelCapabilities(spec.capabilities));
      if (unsupported) return errorReply(400, unsupported);
    }
    return undefined;
  }

  /**
   * The prompt the model would see: after a compaction block only what follows it, with the
   * context-management edits applied (the client's history is not changed), counted by the fake tokenizer.
   */
  private effectivePrompt(body: Record<string, any>): { prompt: Record<string, any>; applied: AppliedEdit[]; original: number } {
    const compacted = dropBeforeCompaction(body);
    const original = countFakeTokens(compacted as { messages: unknown });
    const { body: prompt, applied } = applyContextEdits(compacted, (b) => countFakeTokens(b as { messages: unknown }));
    return { prompt, applied, original };
  }

  private createMessage(rec: RecordedRequest): Reply {
    const rejected = this.validate(rec, true);
    if (rejected) return rejected;
    const body = rec.body;

    const { prompt, applied } = this.effectivePrompt(body);
    const inputTokens = countFakeTokens(prompt as { messages: unknown });
    rec.inputTokens = inputTokens;
    const modelSpec = this.opts.models?.[body.model];
    const window = modelSpec?.maxInputTokens ?? this.opts.contextWindow ?? DEFAULT_CONTEXT_WINDOW;
    if (inputTokens > window) return errorReply(400, `prompt is too long: ${inputTokens} tokens > ${window} maximum`);
    if ((modelSpec?.maxTokensMustFit ?? this.opts.maxTokensMustFit) && inputTokens + body.max_tokens > window) {
      return errorReply(
        400,
        `input length and \`max_tokens\` exceed context limit: ${inputTokens} + ${body.max_tokens} > ${window}, decrease input length or \`max_tokens\` and try again`,
      );
    }

    const contextManagement = body.context_management ? { context_management: { applied_edits: applied } } : {};

    // Server-side compaction (compact_20260112): past the trigger the server summarises the conversation
    // and returns a `compaction` block first (SDK BetaCompactionBlock); with pause_after_compaction the
    // reply is that block alone with stop_reason "compaction" (SDK BetaStopReason), and no step is played.
    const compact = compactEditOf(body);
    const compactTrigger = compact?.trigger?.value ?? COMPACT_DEFAULT_TRIGGER;
    let compactionBlock: ContentBlock | undefined;
    let promptAfterCompaction = prompt;
    if (compact && inputTokens >= compactTrigger) {
      const summary = this.opts.compactionSummary?.(rec) ?? `Summary of the conversation so far (${body.messages.length} messages, scripted by the fake).`;
      compactionBlock = { type: 'compaction', content: summary, encrypted_content: null, signature: signCompaction(summary) } as unknown as ContentBlock;
      promptAfterCompaction = { ...prompt, messages: [{ role: 'user', content: [{ type: 'text', text: summary }] }] };
    }

    this.accepted.push(rec);
    const modelMin = modelSpec?.minCacheableTokens ?? defaultMinCacheableTokens(body.model);
    const cacheUsage = () =>
      this.cache.use(promptAfterCompaction, { now: this.now(), minTokens: modelMin, count: (b) => countFakeTokens(b as { messages: unknown }) });

    if (compactionBlock && compact?.pause_after_compaction) {
      const streamed = body.stream === true ? { stream: this.opts.stream ?? {} } : {};
      return { status: 200, body: this.message(body, [compactionBlock], 'compaction' as StopReason, null, cacheUsage(), undefined, contextManagement), ...streamed };
    }

    const step = this.route?.(rec) ?? this.queue.shift();
    if (!step) {
      // 400 so the client does not retry: the test is wrong, and should fail loudly.
      return errorReply(400, `fake-anthropic: script exhausted at request #${this.accepted.length} (scripted server, not a model)`);
    }
    if (step.kind === 'error') {
      const spec = ERRORS[step.status];
      const headers: Record<string, string> = {};
      if (step.retryAfterSeconds !== undefined) headers['retry-after'] = String(step.retryAfterSeconds);
      if (step.retryAfterMs !== undefined) headers['retry-after-ms'] = String(step.retryAfterMs);
      return errorReply(step.status, step.message ?? spec.message, headers);
    }

    const content: ContentBlock[] = compactionBlock ? [compactionBlock] : [];
    const text = (t: string) => content.push({ type: 'text', text: t, citations: null });
    const toolUse = (call: FakeToolCall) =>
      content.push({
        type: 'tool_use',
        id: call.id ?? `toolu_fake_${++this.toolUseSeq}`,
        name: call.name,
        input: call.input === undefined ? {} : call.input,
        caller: { type: 'direct' },
      });
    const thinking = (t: FakeThinking | FakeRedactedThinking) =>
      content.push(
        t.kind === 'thinking'
          ? { type: 'thinking', thinking: t.thinking, signature: signThinking(t.thinking) }
          : { type: 'redacted_thinking', data: sealRedactedThinking(t.payload) },
      );
    let stopReason: StopReason;
    if (step.kind === 'text') {
      if (step.thinking !== undefined) thinking({ kind: 'thinking', thinking: step.thinking });
      text(step.text);
      stopReason = step.stopReason ?? 'end_turn';
    } else if (step.kind === 'tool_use') {
      step.thinking?.forEach(thinking);
      if (step.text) text(step.text);
      step.calls.forEach(toolUse);
      stopReason = 'tool_use';
    } else {
      for (const item of step.content) {
        if (typeof item === 'string') text(item);
        else if (isThinkingItem(item)) thinking(item);
        else toolUse(item);
      }
      stopReason = step.stopReason ?? (step.content.some((c) => typeof c !== 'string' && !isThinkingItem(c)) ? 'tool_use' : 'end_turn');
    }
    if (!thinkingOn(body) && content.some((b) => b.type === 'thinking' || b.type === 'redacted_thinking')) {
      // The real API never thinks unasked; a script that does is a broken test, so fail it loudly.
      return errorReply(500, `fake-anthropic: script step #${this.accepted.length} has thinking blocks but the request did not enable thinking`);
    }
    let stopSequence: string | null = null;
    if (stopReason === 'stop_sequence') {
      // The real API echoes which stop sequence matched; the first requested one is our best stand-in.
      const seqs = body.stop_sequences;
      stopSequence = Array.isArray(seqs) && typeof seqs[0] === 'string' ? seqs[0] : null;
    }
    const pacing = step.stream ?? this.opts.stream ?? {};
    const streamed = body.stream === true ? { stream: pacing } : { pace: pacing };
    return { status: 200, body: this.message(body, content, stopReason, stopSequence, cacheUsage(), step.usage, contextManagement), ...streamed };
  }

  private message(
    body: Record<string, any>,
    content: ContentBlock[],
    stopReason: StopReason,
    stopSequence: string | null,
    cache: ReturnType<PromptCache['use']>,
    override: FakeUsage | undefined,
    extra: Record<string, unknown>,
  ): Message {
    // Typed as the SDK's Message so the compiler keeps this in step with the real response shape.
    const message: Message = {
      id: `msg_fake_${++this.messageSeq}`,
      type: 'message',
      role: 'assistant',
      model: body.model,
      content,
      stop_reason: stopReason,
      stop_sequence: stopSequence,
      stop_details: null,
      container: null,
      diagnostics: null,
      usage: {
        input_tokens: override?.input_tokens ?? cache.input_tokens,
        output_tokens: override?.output_tokens ?? countOutputTokens(content),
        cache_creation_input_tokens: cache.cache_creation_input_tokens,
        cache_read_input_tokens: cache.cache_read_input_tokens,
        cache_creation: cache.cache_creation,
        inference_geo: null,
        output_tokens_details: null,
        server_tool_use: null,
        service_tier: 'standard',
        speed: null,
      },
    };
    // Beta fields (BetaMessage.context_management) ride along only when the request used them.
    return { ...message, ...extra } as Message;
  }

  private countTokensEndpoint(rec: RecordedRequest): Reply {
    const rejected = this.validate(rec, false);
    if (rejected) return rejected;
    const { prompt, original } = this.effectivePrompt(rec.body);
    const inputTokens = countFakeTokens(prompt as { messages: unknown });
    rec.inputTokens = inputTokens;
    // BetaMessageTokensCount: with context management, the count before edits rides along.
    const extra = rec.body.context_management ? { context_management: { original_input_tokens: original } } : {};
    return { status: 200, body: { input_tokens: inputTokens, ...extra } };
  }

  private knows(id: string): boolean {
    return !this.opts.onlyListedModels || Object.prototype.hasOwnProperty.call(this.opts.models ?? {}, id);
  }

  private modelInfo(id: string): ModelInfo {
    const m = this.opts.models?.[id];
    // The fake "knows" every model id: unknown ids get the default window rather than a 404.
    return {
      type: 'model',
      id,
      display_name: m?.displayName ?? `Scripted fake (${id})`,
      created_at: '1970-01-01T00:00:00Z', // the API uses the epoch when a release date is unknown
      max_input_tokens: m?.maxInputTokens ?? this.opts.contextWindow ?? DEFAULT_CONTEXT_WINDOW,
      max_tokens: m?.maxTokens ?? DEFAULT_MAX_OUTPUT_TOKENS,
      capabilities: m?.capabilities ? modelCapabilities(m.capabilities) : null,
      deprecated_at: null,
      lifecycle: 'active',
      line: null,
      retires_at: null,
    };
  }

  private listModels(): Reply {
    // Only configured models are listed (the fake cannot enumerate "every model"); no pagination.
    const data = Object.keys(this.opts.models ?? {}).map((id) => this.modelInfo(id));
    return {
      status: 200,
      body: { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data[data.length - 1]?.id ?? null },
    };
  }
}

function errorReply(status: number, message: string, headers: Record<string, string> = {}, details?: Record<string, string>): Reply {
  const type = ERRORS[status as FakeErrorStatus]?.type ?? 'api_error';
  // The real API tells the SDK whether to retry; mirror the SDK's own defaults for these statuses.
  const retry = status === 429 || status >= 500;
  return {
    status,
    // `details.error_code` is what the SDK maps to its typed errors (e.g. CompactionSignatureInvalidError).
    body: { type: 'error', error: details ? { type, message, details } : { type, message } },
    headers: { 'x-should-retry': String(retry), ...headers },
  };
}

/** Error bodies carry the request id too (`request_id`), as the real API's do. */
function withRequestId(body: unknown, requestId: string): unknown {
  return isObj(body) && body.type === 'error' ? { ...body, request_id: requestId } : body;
}
