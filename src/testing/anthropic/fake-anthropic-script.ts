/**
 * The fake Anthropic server's script language: the steps a test plays (say, callTools, reply, fail,
 * thinking blocks), what a recorded request looks like, and the server's options.
 */
import type Anthropic from '@anthropic-ai/sdk';
import type { FakeCapabilities } from './fake-anthropic-capabilities';
import type { FakeStreamOptions } from './fake-anthropic-sse';

type StopReason = Anthropic.StopReason;

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
  /**
   * How many of the newest requests `requests` and `messageRequests()` keep (default: every one). Each
   * holds its parsed body, so a long run that sends whole conversations (a bench of thousands of calls)
   * keeps few or none, or the fake's process runs out of heap.
   */
  keepRequests?: number;
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

export function isThinkingItem(i: unknown): i is FakeThinking | FakeRedactedThinking {
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
