/**
 * A scripted, protocol-faithful fake of OpenAI's Chat Completions API (`POST /v1/chat/completions`
 * and the models endpoints), which OpenAI-compatible servers (Kimi, OpenRouter, vLLM, Ollama) speak
 * too. NOT a model: it plays the steps a test scripts (say(), callTools(), reply(), fail()) as the API
 * answers them, streamed as the real chunk sequence (./fake-openai-chat-render). It refuses what the
 * API refuses, with OpenAI's error bodies: a missing model or messages, an unknown role, a `tool`
 * message that answers no preceding `tool_calls`, an assistant's tool calls left unanswered, a bad key
 * (401), `stream_options` without `stream`, and messages over `contextWindowTokens` (400
 * `context_length_exceeded`, in the API's "maximum context length" words).
 *
 * ```ts
 * const fake = await FakeOpenAIChatServer.start({ script: [say('hi')] });
 * const client = new OpenAI({ apiKey: 'k', baseURL: fake.url }); // fake.url ends in /v1
 * ```
 */
import type { RecordedRequest } from '../anthropic/fake-anthropic-script';
import { isObj } from '../anthropic/fake-anthropic-blocks';
import { estimateInputTokens, outputTokens, planStep } from '../openai-common/fake-openai-plan';
import { FakeOpenAIServerBase, invalid, json, type FakeOpenAIOptions, type FakeReply } from '../openai-common/fake-openai-server';
import { chatStreamError, completionChunks, completionObject, type CompletionContext } from './fake-openai-chat-render';

const ROLES = ['system', 'assistant', 'user', 'function', 'tool', 'developer'];

export class FakeOpenAIChatServer extends FakeOpenAIServerBase {
  static async start(opts: FakeOpenAIOptions = {}): Promise<FakeOpenAIChatServer> {
    const fake = new FakeOpenAIChatServer(opts);
    await fake.listen();
    return fake;
  }

  /** Input tokens of a Chat Completions request as the fake counts them (the window check, `prompt_tokens`). */
  countTokens(body: { tools?: unknown; messages?: unknown }): number {
    return estimateInputTokens({ tools: body.tools, items: body.messages });
  }

  protected dispatch(rec: RecordedRequest): FakeReply {
    const { method, path } = rec;
    if (method === 'POST' && path === '/v1/chat/completions') return this.create(rec);
    if (method === 'GET' && path === '/v1/models') return json(200, { object: 'list', data: (this.opts.models ?? ['gpt-4.1', 'gpt-5.1']).map(model) });
    const m = /^\/v1\/models\/([^/]+)$/.exec(path);
    if (method === 'GET' && m) return this.modelRefusal(decodeURIComponent(m[1]!)) ?? json(200, model(decodeURIComponent(m[1]!)));
    return json(404, { error: { message: `Invalid URL (${method} ${path})`, type: 'invalid_request_error', param: null, code: null } });
  }

  private create(rec: RecordedRequest): FakeReply {
    const body = rec.body as Record<string, any>;
    const bad = validateChat(body) ?? this.modelRefusal(String(body.model));
    if (bad) return bad;
    const inputTokens = this.countTokens(body);
    rec.inputTokens = inputTokens;
    const window = this.opts.contextWindowTokens;
    if (window !== undefined && inputTokens > window) {
      return invalid(
        `This model's maximum context length is ${window} tokens. However, your messages resulted in ${inputTokens} tokens. Please reduce the length of the messages.`,
        'messages',
        'context_length_exceeded',
      );
    }
    const step = this.nextStep(rec);
    if (!('kind' in step)) return step;
    const reply = planStep(step, () => `call_fake${String(++this.idSeq).padStart(6, '0')}`);
    const ctx: CompletionContext = {
      id: `chatcmpl-fake${String(++this.idSeq).padStart(6, '0')}`,
      model: body.model,
      created: Math.floor(Date.now() / 1000),
      inputTokens: reply.usage?.input_tokens ?? inputTokens,
      cachedTokens: this.cachedTokens({ tools: body.tools }, body.messages as unknown[], inputTokens),
      outputTokens: reply.usage?.output_tokens ?? outputTokens(reply),
      includeUsage: body.stream_options?.include_usage === true,
    };
    if (body.stream !== true) return json(200, completionObject(reply, ctx));
    const stream = this.streamOptions(reply.stream);
    return { status: 200, events: completionChunks(reply, ctx, stream.chunkChars ?? 8), streamError: chatStreamError(), stream };
  }
}

function model(id: string): Record<string, unknown> {
  return { id, object: 'model', created: 1_700_000_000, owned_by: 'openai' };
}

/** The request checked as the API checks it; undefined when it passes. */
export function validateChat(body: unknown): FakeReply | undefined {
  if (!isObj(body)) return invalid('Invalid type for request body: expected an object.');
  if (typeof body.model !== 'string' || !body.model) return invalid('you must provide a model parameter');
  if (body.messages === undefined) return invalid("Missing required parameter: 'messages'.", 'messages', 'missing_required_parameter');
  if (!Array.isArray(body.messages)) return invalid("Invalid type for 'messages': expected an array of objects.", 'messages', 'invalid_type');
  if (body.messages.length === 0) return invalid("Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.", 'messages', 'empty_array');
  if (body.stream_options !== undefined && body.stream !== true) return invalid("The 'stream_options' parameter is only allowed when 'stream' is enabled.", 'stream_options');
  if (body.max_tokens !== undefined && body.max_completion_tokens !== undefined) {
    return invalid("max_tokens and max_completion_tokens cannot both be set. Please use max_completion_tokens.", 'max_tokens');
  }
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) return invalid("Invalid type for 'tools': expected an array.", 'tools', 'invalid_type');
    for (const [i, t] of (body.tools as unknown[]).entries()) {
      if (!isObj(t) || t.type !== 'function' || !isObj(t.function)) return invalid(`Missing required parameter: 'tools[${i}].function'.`, `tools[${i}].function`, 'missing_required_parameter');
      if (typeof t.function.name !== 'string' || !t.function.name) return invalid(`Missing required parameter: 'tools[${i}].function.name'.`, `tools[${i}].function.name`, 'missing_required_parameter');
    }
  }
  // Tool calls must be answered, each by a `tool` message right after its assistant message.
  let open: Set<string> | undefined;
  let openAt = 0;
  for (const [i, m] of (body.messages as unknown[]).entries()) {
    if (!isObj(m)) return invalid(`Invalid type for 'messages[${i}]': expected an object.`, `messages[${i}]`, 'invalid_type');
    if (!ROLES.includes(m.role)) {
      return invalid(`Invalid value: '${String(m.role)}'. Supported values are: ${ROLES.map((r) => `'${r}'`).join(', ')}.`, `messages[${i}].role`, 'invalid_value');
    }
    if (m.role === 'tool') {
      if (typeof m.tool_call_id !== 'string') return invalid(`Missing required parameter: 'messages[${i}].tool_call_id'.`, `messages[${i}].tool_call_id`, 'missing_required_parameter');
      if (!open?.delete(m.tool_call_id)) {
        return invalid("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", `messages.[${i}].role`);
      }
      continue;
    }
    if (open?.size) {
      return invalid(
        `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...open].join(', ')}`,
        `messages.[${openAt}].role`,
      );
    }
    open = undefined;
    if (m.role === 'assistant' && Array.isArray(m.tool_calls) && m.tool_calls.length) {
      open = new Set((m.tool_calls as Array<{ id?: string }>).map((c) => String(c.id)));
      openAt = i;
    } else if (m.content === undefined || (m.content === null && m.role !== 'assistant')) {
      return invalid(`Missing required parameter: 'messages[${i}].content'.`, `messages[${i}].content`, 'missing_required_parameter');
    }
  }
  if (open?.size) {
    return invalid(
      `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...open].join(', ')}`,
      `messages.[${openAt}].role`,
    );
  }
  return undefined;
}
