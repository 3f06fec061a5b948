/**
 * The one model port: what the model service (./model-service) needs of a provider. Every provider
 * (one folder each: ./anthropic, ./bedrock, ./openai, ./google, …) implements it, and nothing above
 * this folder knows which one answered. Two shapes are shared by all of them, so the rest of the
 * product is written once:
 *
 * - the request is the conversation as our entries (core/entries: Anthropic's content blocks, the
 *   richest shape), which each provider translates into its own;
 * - a streamed reply is told as the Anthropic Messages stream's events (message_start,
 *   content_block_start/delta/stop, message_delta, message_stop), which each provider translates its
 *   own stream into: the live publisher, the stream offsets and the reply accumulator stay one.
 */
import type { AttachmentData } from '../stores/attachments';
import type { Entry } from '../../core/entries';
import type { ModelCallResult } from '../../core/ports';
import type { ToolSpec } from '../../core/tools-spec';
import type { ContextManagementParams, ServerContextCapabilities } from '../../core/context/strategy';
import type { RawStreamEvent } from './anthropic/reply-accumulator';

export type { RawStreamEvent };

/** One model call, whichever provider answers it. */
export interface MessagesCall {
  model: string;
  maxTokens: number;
  system?: string;
  tools: ToolSpec[];
  entries: readonly Entry[];
  cache?: { ttl: '5m' | '1h' };
  /** Extended thinking with this budget (absent: thinking off, no `thinking` parameter sent). */
  thinking?: { budgetTokens: number };
  /** Claude's server-side context management (absent: none sent, the plain Messages API). */
  contextManagement?: ContextManagementParams;
  /** The bytes of the entries' attachments, by hash, read from the store just before the call (absent: none, or placeholders). */
  attachments?: ReadonlyMap<string, AttachmentData>;
}

/**
 * The request body already serialised (see ./anthropic/request-body): sent as these bytes instead of
 * the SDK serialising the params. Only a provider with `serialisedBodies` takes it.
 */
export interface SerialisedBody {
  /** The body's bytes, in order: sent as they are, none copied into one buffer. */
  chunks: Uint8Array[];
  /** Their total length (the request's Content-Length). */
  length: number;
}

/** What a provider's models API says about a model: its input window and context-management capabilities. */
export interface ModelFacts {
  contextWindowTokens?: number;
  capabilities?: ServerContextCapabilities;
}

/** The wire protocols we speak; a connection names one (several connections may share a protocol). */
export type ModelProtocol = 'anthropic' | 'bedrock' | 'vertex' | 'openai-responses' | 'openai-chat' | 'google';

/** What a provider can do; a request asking for what it cannot is refused with a named error, never dropped. */
export interface ProviderCapabilities {
  /** Reasoning/thinking levels are sent (mapped per provider). */
  thinking: boolean;
  /** Prompt caching: breakpoints we place ('explicit'), the provider's own ('automatic'), or none. */
  promptCaching: 'explicit' | 'automatic' | 'none';
  /** An exact token-count endpoint (otherwise an estimate calibrated by the usage each reply reports). */
  tokenCounting: boolean;
  /** Claude's server-side context editing and compaction. */
  serverContextEditing: boolean;
  /** Thinking comes back signed and is verified when sent back. */
  thinkingSignatures: boolean;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** Streams the call: every event, in the shared (Anthropic Messages) shape, as it arrives. */
  onEvent?: (event: RawStreamEvent) => void;
  /** The request already serialised (only for a provider with `serialisedBodies`). */
  body?: SerialisedBody;
}

/** One connection's client: made on first use, on the worker (or the inline process) only. */
export interface ModelProvider {
  readonly protocol: ModelProtocol;
  readonly capabilities: ProviderCapabilities;
  /** Takes a pre-serialised Anthropic Messages body (./anthropic/request-body). */
  readonly serialisedBodies?: boolean;
  /** One call: the reply as our entry, with its usage. Errors are ModelCallErrors, classified once here. */
  call(request: MessagesCall, options: CallOptions): Promise<ModelCallResult>;
  /** The exact input-token count of a request (absent: the provider has no count endpoint). */
  countTokens?(request: MessagesCall, signal?: AbortSignal): Promise<number>;
  /** The model's window and capabilities, each absent when the provider cannot say. */
  modelFacts(model: string): Promise<ModelFacts>;
  /** Throws UNKNOWN_MODEL when the provider does not know `model`. */
  verifyModel(model: string): Promise<void>;
}
