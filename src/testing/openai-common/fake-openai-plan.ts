/**
 * What the OpenAI fakes share besides the server: a scripted step (the Anthropic fake's step language:
 * say(), callTools(), reply(), fail()) planned into a protocol-neutral reply, OpenAI's error bodies
 * (`{ error: { message, type, param, code } }`), the token estimate, and the automatic prompt cache.
 */
import { createHash } from 'node:crypto';
import { countFakeTextTokens } from '../anthropic/fake-anthropic-validate';
import { isThinkingItem, type FakeErrorStatus, type FakeStep, type FakeUsage } from '../anthropic/fake-anthropic-script';
import type { FakeStreamOptions } from '../anthropic/fake-anthropic-sse';

/** One item of a planned reply, in order. */
export type PlannedItem =
  | { kind: 'text'; text: string }
  | { kind: 'tool'; callId: string; name: string; arguments: string }
  | { kind: 'reasoning'; text: string };

/** A step as a reply any OpenAI protocol can render. `stop`: the Anthropic-named stop reason scripted. */
export interface PlannedReply {
  items: PlannedItem[];
  stop: string;
  usage?: FakeUsage;
  stream?: FakeStreamOptions;
}

/** A successful step planned (an error step is rendered by the server directly). */
export function planStep(step: Exclude<FakeStep, { kind: 'error' }>, nextCallId: () => string): PlannedReply {
  const tool = (c: { name: string; input?: unknown; id?: string }): PlannedItem => ({
    kind: 'tool',
    callId: c.id ?? nextCallId(),
    name: c.name,
    // Partial input (a call cut off) is scripted as a string: sent as those characters.
    arguments: typeof c.input === 'string' ? c.input : JSON.stringify(c.input ?? {}),
  });
  const thought = (t: { kind: string; thinking?: string; payload?: string }): PlannedItem => ({ kind: 'reasoning', text: t.thinking ?? t.payload ?? '' });
  switch (step.kind) {
    case 'text':
      return {
        items: [...(step.thinking ? [{ kind: 'reasoning' as const, text: step.thinking }] : []), { kind: 'text', text: step.text }],
        stop: step.stopReason ?? 'end_turn',
        usage: step.usage,
        stream: step.stream,
      };
    case 'tool_use':
      return {
        items: [...(step.thinking ?? []).map(thought), ...(step.text ? [{ kind: 'text' as const, text: step.text }] : []), ...step.calls.map(tool)],
        stop: 'tool_use',
        usage: step.usage,
        stream: step.stream,
      };
    case 'reply': {
      const items = step.content.map((c) => (typeof c === 'string' ? { kind: 'text' as const, text: c } : isThinkingItem(c) ? thought(c) : tool(c)));
      const stop = step.stopReason ?? (items.some((i) => i.kind === 'tool') ? 'tool_use' : 'end_turn');
      return { items, stop, usage: step.usage, stream: step.stream };
    }
  }
}

/** Output tokens of a planned reply: text, and each call's name and arguments (at least 1). */
export function outputTokens(reply: PlannedReply): number {
  let n = 0;
  for (const i of reply.items) n += i.kind === 'tool' ? countFakeTextTokens(i.name + i.arguments) : countFakeTextTokens(i.text);
  return Math.max(1, n);
}

/** Input tokens of a request: the fake tokenizer over each part's JSON, 4 per message or item, 8 per tool. */
export function estimateInputTokens(parts: { system?: unknown; tools?: unknown; items?: unknown }): number {
  let n = 0;
  if (parts.system !== undefined && parts.system !== null) n += countFakeTextTokens(JSON.stringify(parts.system));
  if (Array.isArray(parts.tools)) n += countFakeTextTokens(JSON.stringify(parts.tools)) + 8 * parts.tools.length;
  if (typeof parts.items === 'string') n += 4 + countFakeTextTokens(parts.items);
  else if (Array.isArray(parts.items)) for (const item of parts.items) n += 4 + countFakeTextTokens(JSON.stringify(item));
  return n;
}

export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

export function errorBody(message: string, type = 'invalid_request_error', param: string | null = null, code: string | null = null): OpenAIErrorBody {
  return { error: { message, type, param, code } };
}

/** What OpenAI answers each scripted status with (529, Anthropic's overload, is OpenAI's 503). */
export const SCRIPTED_ERRORS: Record<FakeErrorStatus, { status: number; type: string; code: string | null; message: string }> = {
  400: { status: 400, type: 'invalid_request_error', code: null, message: 'Invalid request (scripted)' },
  401: { status: 401, type: 'invalid_request_error', code: 'invalid_api_key', message: 'Incorrect API key provided: sk-fake. You can find your API key at https://platform.openai.com/account/api-keys.' },
  403: { status: 403, type: 'invalid_request_error', code: 'unsupported_country_region_territory', message: 'Country, region, or territory not supported' },
  404: { status: 404, type: 'invalid_request_error', code: 'model_not_found', message: 'The model does not exist or you do not have access to it.' },
  413: { status: 413, type: 'invalid_request_error', code: null, message: 'Request too large (scripted)' },
  429: { status: 429, type: 'requests', code: 'rate_limit_exceeded', message: 'Rate limit reached for requests (scripted). Please try again in 1s.' },
  500: { status: 500, type: 'server_error', code: null, message: 'The server had an error while processing your request. Sorry about that!' },
  529: { status: 503, type: 'server_error', code: null, message: 'The engine is currently overloaded, please try again later' },
};

/**
 * OpenAI's automatic prompt caching, roughly: a request whose leading items (with its instructions
 * and tools) a recent request sent too reads them from the cache, counted in 128-token steps once
 * the prefix is at least 1024 tokens.
 */
export class PrefixCache {
  private readonly seen = new Set<string>();

  /** The cached input tokens of this request (then remembers its prefixes). */
  read(head: unknown, items: unknown[]): number {
    const base = JSON.stringify(head);
    const keys: Array<[string, number]> = [];
    let tokens = estimateInputTokens({ items: [head] });
    let hash = createHash('sha256').update(base);
    for (const item of items) {
      tokens += 4 + countFakeTextTokens(JSON.stringify(item));
      hash = hash.copy().update(JSON.stringify(item));
      keys.push([hash.copy().digest('hex'), tokens]);
    }
    let cached = 0;
    for (const [key, n] of keys) if (this.seen.has(key) && n >= 1024) cached = Math.floor(n / 128) * 128;
    for (const [key] of keys) this.seen.add(key);
    return cached;
  }
}
