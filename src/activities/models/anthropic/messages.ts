import Anthropic from '@anthropic-ai/sdk';
import type { AssistantBlock } from '../../../core/entries';
import { toApiMessages } from '../../../core/entries';
import { withAttachmentBlocks } from './attachment-blocks';
import { MissingApiKeyError, ModelCallError, UnknownModelError, type ModelErrorKind } from '../../../core/errors';
import { isContextOverflowMessage } from '../../../core/context/compaction/overflow';
import type { ModelCallResult } from '../../../core/ports';
import { keptEntry } from '../../../core/replies';
import { ReplyAccumulator, type RawStreamEvent } from './reply-accumulator';
import type { MessagesCall, ModelFacts, SerialisedBody } from '../port';

export type { MessagesCall, ModelFacts, SerialisedBody };

export type { RawStreamEvent };
import {
  COMPACTION_BETA,
  serverContextCapabilities,
  type AppliedContextEdit,
} from '../../../core/context/strategy';

/** Where the model lives. Resolved on the worker (or the inline process); never part of a workflow's input. */
export interface ModelConnection {
  // `| undefined`: `apiKey: process.env.X` compiles under exactOptionalPropertyTypes (unset means the default).
  apiKey?: string | undefined;
  baseURL?: string | undefined;
}

export function createAnthropicClient(conn: ModelConnection = {}): Anthropic {
  const apiKey = conn.apiKey ?? process.env.ANTHROPIC_API_KEY;
  if (!apiKey) throw new MissingApiKeyError();
  // SDK retries off: Temporal's retry policy (or the caller, inline) decides, so retries show in history.
  return new Anthropic({ apiKey, baseURL: conn.baseURL ?? process.env.ANTHROPIC_BASE_URL ?? undefined, maxRetries: 0 });
}


type CacheControl = { type: 'ephemeral'; ttl?: '5m' | '1h' };

/**
 * The request with prompt-caching breakpoints: the last tool (caches every tool), the system prompt,
 * and the last block of the conversation, so the next call (the same prefix plus what it adds) reads
 * what this one wrote. Three of the API's four breakpoints.
 */
export function messagesParams(call: MessagesCall): Anthropic.MessageCreateParamsNonStreaming {
  const params = plainMessagesParams(call);
  if (!call.contextManagement) return params;
  return { ...params, context_management: { edits: call.contextManagement.edits } } as Anthropic.MessageCreateParamsNonStreaming;
}

/**
 * Compaction blocks as the API takes them back: only the newest one with a summary (the server reads
 * only what follows it, and refuses two), none at all without the compaction beta.
 */
function withLastCompactionOnly(messages: Anthropic.MessageParam[], keep: boolean): Anthropic.MessageParam[] {
  let last: [number, number] | undefined;
  messages.forEach((m, i) => {
    if (typeof m.content === 'string') return;
    m.content.forEach((b, j) => {
      const c = b as { type: string; content?: unknown };
      if (c.type === 'compaction' && typeof c.content === 'string') last = [i, j];
    });
  });
  const out: Anthropic.MessageParam[] = [];
  messages.forEach((m, i) => {
    if (typeof m.content === 'string') return out.push(m);
    const content = m.content.filter((b, j) => (b as { type: string }).type !== 'compaction' || (keep && last?.[0] === i && last[1] === j));
    if (content.length > 0) out.push({ ...m, content } as Anthropic.MessageParam);
  });
  return out;
}

function plainMessagesParams(call: MessagesCall): Anthropic.MessageCreateParamsNonStreaming {
  const messages = withLastCompactionOnly(
    withAttachmentBlocks(toApiMessages(call.entries), call.attachments) as Anthropic.MessageParam[],
    call.contextManagement?.betas.includes(COMPACTION_BETA) === true,
  );
  return { ...paramsBeforeMessages(call), messages: withCacheBreakpoint(messages, cacheControl(call)) };
}

export function cacheControl(call: MessagesCall): CacheControl | undefined {
  return call.cache ? (call.cache.ttl === '1h' ? { type: 'ephemeral', ttl: '1h' } : { type: 'ephemeral' }) : undefined;
}

/** The request's parameters before `messages`, in the order they are serialised: model to tools. */
export function paramsBeforeMessages(call: MessagesCall): Omit<Anthropic.MessageCreateParamsNonStreaming, 'messages'> {
  const cc = cacheControl(call);
  const tools = call.tools.map((t, i) => (cc && i === call.tools.length - 1 ? { ...t, cache_control: cc } : t)) as Anthropic.Tool[];
  return {
    model: call.model,
    // The budget is part of max_tokens (the API requires max_tokens > budget_tokens): the reply keeps its
    // configured room for text and tool calls on top of the thinking.
    max_tokens: call.thinking ? call.thinking.budgetTokens + call.maxTokens : call.maxTokens,
    ...(call.thinking ? { thinking: { type: 'enabled' as const, budget_tokens: call.thinking.budgetTokens } } : {}),
    ...(call.system ? { system: cc ? [{ type: 'text', text: call.system, cache_control: cc }] : call.system } : {}),
    ...(tools.length ? { tools } : {}),
  };
}

/** The messages with the conversation's cache breakpoint on the last block of the last one (changed in place). */
export function withCacheBreakpoint<M extends { content: unknown }>(messages: M[], cc: CacheControl | undefined): M[] {
  if (cc && messages.length > 0) {
    const last = messages[messages.length - 1]! as unknown as Anthropic.MessageParam;
    const content = typeof last.content === 'string' ? [{ type: 'text' as const, text: last.content }] : [...last.content];
    // Thinking blocks cannot carry cache_control (the API rejects it): mark the last block that can.
    let i = content.length - 1;
    while (i >= 0 && (content[i]!.type === 'thinking' || content[i]!.type === 'redacted_thinking')) i--;
    if (i >= 0) content[i] = { ...content[i], cache_control: cc } as (typeof content)[number];
    messages[messages.length - 1] = { ...last, content } as unknown as M;
  }
  return messages;
}


/**
 * The Messages surface these calls use. Anthropic's client has it, and so do Anthropic's Bedrock and
 * Vertex clients (../bedrock, ../vertex), which send the same request to their platform's endpoint.
 */
export interface MessagesClient {
  baseURL: string;
  messages: Pick<Anthropic['messages'], 'create'>;
  beta: { messages: Pick<Anthropic['beta']['messages'], 'create'> };
}

/** What differs on a platform serving the same Messages API (Bedrock, Vertex); absent: Anthropic direct. */
export interface MessagesPlatform {
  /** Fields the body carries beside the Messages params (Bedrock and Vertex take `anthropic_version` there). */
  bodyFields?: Record<string, unknown>;
  /** Reads the platform's errors (default: classifyAnthropicError). */
  classify?: (err: unknown, baseURL?: string) => ModelCallError;
}

function sdkArgs(call: MessagesCall, body: SerialisedBody | undefined, signal: AbortSignal | undefined, platform?: MessagesPlatform) {
  if (!body) return { params: { ...messagesParams(call), ...platform?.bodyFields } as Anthropic.MessageCreateParamsNonStreaming, options: { signal } };
  const params = { ...paramsBeforeMessages(call), messages: [] } as Anthropic.MessageCreateParamsNonStreaming;
  const chunks = body.chunks;
  // A ReadableStream body is sent verbatim by the SDK (which then sets no content type); with the
  // length given, fetch frames it with Content-Length like any other body, not chunked.
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const c of chunks) controller.enqueue(c);
      controller.close();
    },
  });
  return { params, options: { signal, body: stream, headers: { 'content-type': 'application/json', 'content-length': String(body.length) } } };
}

export async function callMessages(
  client: MessagesClient,
  call: MessagesCall,
  signal?: AbortSignal,
  body?: SerialisedBody,
  platform?: MessagesPlatform,
): Promise<ModelCallResult> {
  const classify = platform?.classify ?? classifyAnthropicError;
  let res: Anthropic.Message | Anthropic.Beta.BetaMessage;
  try {
    const { params, options } = sdkArgs(call, body, signal, platform);
    res = call.contextManagement
      ? await client.beta.messages.create({ ...(params as Anthropic.Beta.MessageCreateParamsNonStreaming), betas: call.contextManagement.betas }, options)
      : await client.messages.create(params, options);
  } catch (err) {
    throw classify(err, client.baseURL);
  }
  return resultOf(res, call);
}


/**
 * The same call with streaming on (`stream: true`): `onEvent` sees every server-sent event as it
 * arrives; the result is the final message, exactly as the non-streaming call returns it (put together
 * by ./reply-accumulator, as the SDK's MessageStream does). An `error` event mid-stream (e.g.
 * overloaded_error) throws the classified error, as an HTTP error would.
 */
export async function streamMessages(
  client: MessagesClient,
  call: MessagesCall,
  onEvent: (event: RawStreamEvent) => void,
  signal?: AbortSignal,
  body?: SerialisedBody,
  platform?: MessagesPlatform,
): Promise<ModelCallResult> {
  const classify = platform?.classify ?? classifyAnthropicError;
  let res: Anthropic.Message | Anthropic.Beta.BetaMessage;
  try {
    const { params, options } = sdkArgs(call, body, signal, platform);
    const streamed = { ...params, stream: true as const };
    const events: AsyncIterable<RawStreamEvent> = call.contextManagement
      ? await client.beta.messages.create({ ...(streamed as unknown as Anthropic.Beta.MessageCreateParamsStreaming), betas: call.contextManagement.betas }, options)
      : await client.messages.create(streamed, options);
    const reply = new ReplyAccumulator();
    for await (const event of events) {
      reply.add(event);
      onEvent(event);
    }
    res = reply.final();
  } catch (err) {
    throw platform?.classify ? classify(err, client.baseURL) : classifyAnthropicError(err);
  }
  return resultOf(res, call);
}

function resultOf(res: Anthropic.Message | Anthropic.Beta.BetaMessage, call: MessagesCall): ModelCallResult {
  const content: AssistantBlock[] = [];
  const applied: AppliedContextEdit[] = appliedEdits(res);
  for (const block of res.content) {
    // Server-side compaction's summary: kept verbatim in the reply and sent back (the API verifies it).
    if (block.type === 'compaction') {
      content.push({ type: 'compaction', content: block.content, encrypted_content: block.encrypted_content, signature: block.signature ?? null });
      applied.push({ type: 'compact_20260112', clearedInputTokens: 0 });
    }
    // Thinking is kept exactly (text and signature, or the encrypted data): the API verifies it when sent back.
    if (block.type === 'thinking') content.push({ type: 'thinking', thinking: block.thinking, signature: block.signature });
    else if (block.type === 'redacted_thinking') content.push({ type: 'redacted_thinking', data: block.data });
    else if (block.type === 'text') content.push({ type: 'text', text: block.text });
    else if (block.type === 'tool_use') content.push({ type: 'tool_use', id: block.id, name: block.name, input: block.input });
  }
  const usage = {
    inputTokens: res.usage.input_tokens,
    outputTokens: res.usage.output_tokens,
    cacheReadInputTokens: res.usage.cache_read_input_tokens ?? 0,
    cacheCreationInputTokens: res.usage.cache_creation_input_tokens ?? 0,
  };
  // Whitespace-only text (real models send "\n\n" before a tool call) is dropped where it arrives: the
  // API refuses it when sent back, and the entry the runtime stores is then the one the session keeps.
  const entry = keptEntry({ type: 'assistant', content, stopReason: res.stop_reason ?? undefined, model: res.model, usage });
  const result: ModelCallResult = { entry, usage, stopReason: res.stop_reason ?? null, model: res.model };
  // Only when the request asked for context management: a plain call's result keeps its shape.
  return call.contextManagement ? { ...result, contextManagement: { applied } } : result;
}

/** `context_management.applied_edits` of a beta response, in our shape (none on a plain response). */
function appliedEdits(res: Anthropic.Message | Anthropic.Beta.BetaMessage): AppliedContextEdit[] {
  const edits = (res as Anthropic.Beta.BetaMessage).context_management?.applied_edits ?? [];
  return edits.map((e) =>
    e.type === 'clear_tool_uses_20250919'
      ? { type: e.type, clearedInputTokens: e.cleared_input_tokens, clearedToolUses: e.cleared_tool_uses }
      : { type: e.type, clearedInputTokens: e.cleared_input_tokens, clearedThinkingTurns: e.cleared_thinking_turns },
  );
}


/** The model's input window, from the Models API. undefined when the API cannot say. */
export async function lookupContextWindow(client: Anthropic, model: string): Promise<number | undefined> {
  return (await lookupModelFacts(client, model)).contextWindowTokens;
}

/** The model's window and capabilities, from the Models API; each absent when the API cannot say. */
export async function lookupModelFacts(client: Anthropic, model: string): Promise<ModelFacts> {
  try {
    const info = (await client.models.retrieve(model)) as { max_input_tokens?: number | null; capabilities?: unknown };
    // null (or a nonsensical 0) means the API does not know: fall back to the table / explicit setting.
    const window = info.max_input_tokens && info.max_input_tokens > 0 ? info.max_input_tokens : undefined;
    const capabilities = serverContextCapabilities(info.capabilities);
    return { ...(window !== undefined ? { contextWindowTokens: window } : {}), ...(capabilities ? { capabilities } : {}) };
  } catch (err) {
    const classified = classifyAnthropicError(err, client.baseURL);
    // A bad key must surface now, not as a silent fallback to the built-in table.
    if (classified.kind === 'authentication' || classified.kind === 'permission') throw classified;
    return {};
  }
}

/** Throws UNKNOWN_MODEL when the Models API does not know `model` (a session switching models checks first). */
export async function verifyModel(client: Anthropic, model: string): Promise<void> {
  try {
    await client.models.retrieve(model);
  } catch (err) {
    const classified = classifyAnthropicError(err, client.baseURL);
    if (classified.kind === 'not_found') throw new UnknownModelError(model);
    throw classified;
  }
}

/**
 * Decides once, where the provider's error is seen, what kind of failure it is. A network error names
 * the URL it could not reach (`baseURL`), since a wrong or misspelt base URL is its usual cause.
 */
export function classifyAnthropicError(err: unknown, baseURL?: string, label = 'Anthropic API'): ModelCallError {
  if (err instanceof ModelCallError) return err;
  const at = baseURL ? ` (${baseURL})` : '';
  if (err instanceof Anthropic.APIConnectionError) return new ModelCallError('network', `${err.message.replace(/\.$/, '')}${at}`);
  if (err instanceof Anthropic.APIError) {
    const status = err.status ?? 0;
    const body = err.error as { error?: { type?: string; message?: string } } | undefined;
    const message = body?.error?.message ?? err.message;
    const retryAfterMs = parseRetryAfter(err.headers);
    const kind = kindFor(status, body?.error?.type, message);
    return new ModelCallError(kind, `${label} ${status}: ${message}`, status, retryAfterMs);
  }
  return new ModelCallError('network', `${err instanceof Error ? err.message : String(err)}${at}`);
}

export function kindFor(status: number, type: string | undefined, message: string): ModelErrorKind {
  if ((status === 400 || status === 413) && isContextOverflowMessage(message)) return 'context_overflow';
  if (status === 401) return 'authentication';
  if (status === 403) return 'permission';
  if (status === 404) return 'not_found';
  if (status === 429) return 'rate_limited';
  if (status === 529 || type === 'overloaded_error') return 'overloaded';
  if (status >= 500) return 'server';
  if (status === 408 || status === 409) return 'server';
  return 'invalid_request';
}

export function parseRetryAfter(headers: Headers | undefined): number | undefined {
  const ms = headers?.get?.('retry-after-ms');
  if (ms && Number.isFinite(Number(ms))) return Number(ms);
  const s = headers?.get?.('retry-after');
  if (!s) return undefined;
  if (Number.isFinite(Number(s))) return Number(s) * 1000;
  const date = Date.parse(s);
  return Number.isFinite(date) ? Math.max(0, date - Date.now()) : undefined;
}
