import Anthropic from '@anthropic-ai/sdk';
import type { AssistantBlock, Entry } from '../core/entries';
import { toApiMessages } from '../core/entries';
import { MissingApiKeyError, ModelCallError, UnknownModelError, type ModelErrorKind } from '../core/errors';
import { isContextOverflowMessage } from '../core/compaction/overflow';
import type { ModelCallResult } from '../core/ports';
import type { ToolSpec } from '../core/tools-spec';
import { keptEntry } from '../core/replies';

/** Where the model lives. Resolved on the worker (or the inline process); never part of a workflow's input. */
export interface ModelConnection {
  apiKey?: string;
  baseURL?: string;
}

export function createAnthropicClient(conn: ModelConnection = {}): Anthropic {
  const apiKey = conn.apiKey ?? process.env.ANTHROPIC_API_KEY;
  if (!apiKey) throw new MissingApiKeyError();
  // SDK retries off: Temporal's retry policy (or the caller, inline) decides, so retries show in history.
  return new Anthropic({ apiKey, baseURL: conn.baseURL ?? process.env.ANTHROPIC_BASE_URL ?? undefined, maxRetries: 0 });
}

export interface MessagesCall {
  model: string;
  maxTokens: number;
  system?: string;
  tools: ToolSpec[];
  entries: readonly Entry[];
  cache?: { ttl: '5m' | '1h' };
  /** Extended thinking with this budget (absent: thinking off, no `thinking` parameter sent). */
  thinking?: { budgetTokens: number };
}

type CacheControl = { type: 'ephemeral'; ttl?: '5m' | '1h' };

/**
 * The request with prompt-caching breakpoints: the last tool (caches every tool), the system prompt,
 * and the last block of the conversation, so the next call (the same prefix plus what it adds) reads
 * what this one wrote. Three of the API's four breakpoints.
 */
export function messagesParams(call: MessagesCall): Anthropic.MessageCreateParamsNonStreaming {
  const cc: CacheControl | undefined = call.cache ? (call.cache.ttl === '1h' ? { type: 'ephemeral', ttl: '1h' } : { type: 'ephemeral' }) : undefined;
  const tools = call.tools.map((t, i) => (cc && i === call.tools.length - 1 ? { ...t, cache_control: cc } : t)) as Anthropic.Tool[];
  const messages = toApiMessages(call.entries) as Anthropic.MessageParam[];
  if (cc && messages.length > 0) {
    const last = messages[messages.length - 1]!;
    const content = typeof last.content === 'string' ? [{ type: 'text' as const, text: last.content }] : [...last.content];
    // Thinking blocks cannot carry cache_control (the API rejects it): mark the last block that can.
    let i = content.length - 1;
    while (i >= 0 && (content[i]!.type === 'thinking' || content[i]!.type === 'redacted_thinking')) i--;
    if (i >= 0) content[i] = { ...content[i], cache_control: cc } as (typeof content)[number];
    messages[messages.length - 1] = { ...last, content } as Anthropic.MessageParam;
  }
  return {
    model: call.model,
    // The budget is part of max_tokens (the API requires max_tokens > budget_tokens): the reply keeps its
    // configured room for text and tool calls on top of the thinking.
    max_tokens: call.thinking ? call.thinking.budgetTokens + call.maxTokens : call.maxTokens,
    ...(call.thinking ? { thinking: { type: 'enabled' as const, budget_tokens: call.thinking.budgetTokens } } : {}),
    ...(call.system ? { system: cc ? [{ type: 'text', text: call.system, cache_control: cc }] : call.system } : {}),
    ...(tools.length ? { tools } : {}),
    messages,
  };
}

export async function callMessages(client: Anthropic, call: MessagesCall, signal?: AbortSignal): Promise<ModelCallResult> {
  let res: Anthropic.Message;
  try {
    res = await client.messages.create(messagesParams(call), { signal });
  } catch (err) {
    throw classifyAnthropicError(err);
  }
  const content: AssistantBlock[] = [];
  for (const block of res.content) {
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
  return { entry, usage, stopReason: res.stop_reason ?? null, model: res.model };
}

/** The model's input window, from the Models API. undefined when the API cannot say. */
export async function lookupContextWindow(client: Anthropic, model: string): Promise<number | undefined> {
  try {
    const info = (await client.models.retrieve(model)) as { max_input_tokens?: number | null };
    // null (or a nonsensical 0) means the API does not know: fall back to the table / explicit setting.
    return info.max_input_tokens && info.max_input_tokens > 0 ? info.max_input_tokens : undefined;
  } catch (err) {
    const classified = classifyAnthropicError(err);
    // A bad key must surface now, not as a silent fallback to the built-in table.
    if (classified.kind === 'authentication' || classified.kind === 'permission') throw classified;
    return undefined;
  }
}

/** Throws UNKNOWN_MODEL when the Models API does not know `model` (a session switching models checks first). */
export async function verifyModel(client: Anthropic, model: string): Promise<void> {
  try {
    await client.models.retrieve(model);
  } catch (err) {
    const classified = classifyAnthropicError(err);
    if (classified.kind === 'not_found') throw new UnknownModelError(model);
    throw classified;
  }
}

/** Decides once, where the provider's error is seen, what kind of failure it is. */
export function classifyAnthropicError(err: unknown): ModelCallError {
  if (err instanceof ModelCallError) return err;
  if (err instanceof Anthropic.APIConnectionError) return new ModelCallError('network', err.message);
  if (err instanceof Anthropic.APIError) {
    const status = err.status ?? 0;
    const body = err.error as { error?: { type?: string; message?: string } } | undefined;
    const message = body?.error?.message ?? err.message;
    const retryAfterMs = parseRetryAfter(err.headers);
    const kind = kindFor(status, body?.error?.type, message);
    return new ModelCallError(kind, `Anthropic API ${status}: ${message}`, status, retryAfterMs);
  }
  return new ModelCallError('network', err instanceof Error ? err.message : String(err));
}

function kindFor(status: number, type: string | undefined, message: string): ModelErrorKind {
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

function parseRetryAfter(headers: Headers | undefined): number | undefined {
  const ms = headers?.get?.('retry-after-ms');
  if (ms && Number.isFinite(Number(ms))) return Number(ms);
  const s = headers?.get?.('retry-after');
  if (!s) return undefined;
  if (Number.isFinite(Number(s))) return Number(s) * 1000;
  const date = Date.parse(s);
  return Number.isFinite(date) ? Math.max(0, date - Date.now()) : undefined;
}
