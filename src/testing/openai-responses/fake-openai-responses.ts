/**
 * A scripted, protocol-faithful fake of OpenAI's Responses API (`POST /v1/responses`, its
 * `input_tokens` count, and the models endpoints). It is NOT a model: it plays the steps a test
 * scripts, in the Anthropic fake's step language (say(), callTools(), reply(), fail()), as the
 * Responses API answers them: the `response` object, or with `stream: true` the real event sequence
 * (./fake-openai-responses-render). It refuses what the API refuses, with OpenAI's error bodies
 * (`{ error: { message, type, param, code } }`, `x-request-id`): a missing model or input, an unknown
 * role or item type, a `function_call_output` without its `function_call`, encrypted reasoning it did
 * not issue, a bad key (401), and input over `contextWindowTokens` (400 `context_length_exceeded`).
 *
 * ```ts
 * const fake = await FakeOpenAIResponsesServer.start({ script: [callTools({ name: 'read' }), say('done')] });
 * const client = new OpenAI({ apiKey: 'k', baseURL: fake.url }); // fake.url ends in /v1
 * ```
 */
import type { RecordedRequest } from '../anthropic/fake-anthropic-script';
import { isObj } from '../anthropic/fake-anthropic-blocks';
import { estimateInputTokens, outputTokens, planStep } from '../openai-common/fake-openai-plan';
import { FakeOpenAIServerBase, invalid, json, type FakeOpenAIOptions, type FakeReply } from '../openai-common/fake-openai-server';
import { FAKE_ENCRYPTED_PREFIX, outputItems, responseEvents, responseObject, streamErrorEvent, type ResponseContext } from './fake-openai-responses-render';

export type { FakeOpenAIOptions };

const ROLES = ['user', 'assistant', 'system', 'developer'];
const ITEM_TYPES = ['message', 'function_call', 'function_call_output', 'reasoning'];
/** Models that take no reasoning effort (the API refuses `reasoning.effort` for them). */
const NON_REASONING = /^(gpt-4|gpt-3)/;

export class FakeOpenAIResponsesServer extends FakeOpenAIServerBase {
  static async start(opts: FakeOpenAIOptions = {}): Promise<FakeOpenAIResponsesServer> {
    const fake = new FakeOpenAIResponsesServer(opts);
    await fake.listen();
    return fake;
  }

  /** Input tokens of a Responses request as the fake counts them (the window check and the count endpoint). */
  countTokens(body: { instructions?: unknown; tools?: unknown; input?: unknown }): number {
    return estimateInputTokens({ system: body.instructions, tools: body.tools, items: body.input });
  }

  protected dispatch(rec: RecordedRequest): FakeReply {
    const { method, path } = rec;
    if (method === 'POST' && path === '/v1/responses') return this.create(rec);
    if (method === 'POST' && path === '/v1/responses/input_tokens') {
      const bad = validate(rec.body, false);
      if (bad) return bad;
      return json(200, { object: 'response.input_tokens', input_tokens: this.countTokens(rec.body) });
    }
    if (method === 'GET' && path === '/v1/models') return json(200, { object: 'list', data: (this.opts.models ?? ['gpt-5.1', 'gpt-4.1', 'o4-mini']).map(model) });
    const m = /^\/v1\/models\/([^/]+)$/.exec(path);
    if (method === 'GET' && m) return this.modelRefusal(decodeURIComponent(m[1]!)) ?? json(200, model(decodeURIComponent(m[1]!)));
    return json(404, { error: { message: `Invalid URL (${method} ${path})`, type: 'invalid_request_error', param: null, code: null } });
  }

  private create(rec: RecordedRequest): FakeReply {
    const body = rec.body as Record<string, any>;
    const bad = validate(body, true) ?? this.modelRefusal(String(body.model));
    if (bad) return bad;
    const inputTokens = this.countTokens(body);
    rec.inputTokens = inputTokens;
    if (this.opts.contextWindowTokens !== undefined && inputTokens > this.opts.contextWindowTokens) {
      return invalid('Your input exceeds the context window of this model. Please adjust your input and try again.', 'input', 'context_length_exceeded');
    }
    const step = this.nextStep(rec);
    if (!('kind' in step)) return step;
    const reply = planStep(step, () => `call_fake${String(++this.idSeq).padStart(6, '0')}`);
    const items = typeof body.input === 'string' ? [body.input] : (body.input as unknown[]);
    const cached = this.cachedTokens({ instructions: body.instructions, tools: body.tools }, items, inputTokens);
    const ctx: ResponseContext = {
      id: `resp_fake${String(++this.idSeq).padStart(6, '0')}`,
      model: body.model,
      createdAt: Math.floor(Date.now() / 1000),
      echo: {
        instructions: body.instructions ?? null,
        max_output_tokens: body.max_output_tokens ?? null,
        reasoning: { effort: body.reasoning?.effort ?? null, summary: body.reasoning?.summary ?? null },
        store: body.store ?? true,
        tools: body.tools ?? [],
      },
      inputTokens: reply.usage?.input_tokens ?? inputTokens,
      cachedTokens: cached,
      outputTokens: reply.usage?.output_tokens ?? outputTokens(reply),
      encrypted: Array.isArray(body.include) && body.include.includes('reasoning.encrypted_content'),
      ids: () => `fake${String(++this.idSeq).padStart(6, '0')}`,
    };
    const output = outputItems(reply, ctx);
    if (body.stream !== true) return json(200, responseObject(reply, ctx, output, true));
    const stream = this.streamOptions(reply.stream);
    return { status: 200, events: responseEvents(reply, ctx, output, stream.chunkChars ?? 8), streamError: streamErrorEvent(), stream };
  }
}

function model(id: string): Record<string, unknown> {
  return { id, object: 'model', created: 1_700_000_000, owned_by: 'openai' };
}

const missing = (param: string): FakeReply => invalid(`Missing required parameter: '${param}'.`, param, 'missing_required_parameter');
const invalidValue = (value: unknown, param: string, supported: string[]): FakeReply =>
  invalid(`Invalid value: '${String(value)}'. Supported values are: ${supported.map((s) => `'${s}'`).join(', ')}.`, param, 'invalid_value');

/** The request checked as the API checks it; undefined when it passes. `create`: the full create request (input required). */
export function validate(body: unknown, create: boolean): FakeReply | undefined {
  if (!isObj(body)) return invalid('Invalid type for request body: expected an object.');
  if (typeof body.model !== 'string' || !body.model) return missing('model');
  if (create && body.input === undefined) return missing('input');
  if (body.stream !== undefined && typeof body.stream !== 'boolean') return invalid(`Invalid type for 'stream': expected a boolean, but got a ${typeof body.stream} instead.`, 'stream', 'invalid_type');
  if (body.max_output_tokens !== undefined && !(Number.isInteger(body.max_output_tokens) && body.max_output_tokens >= 16)) {
    return invalid(`Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got ${String(body.max_output_tokens)} instead.`, 'max_output_tokens', 'integer_below_min_value');
  }
  if (body.reasoning?.effort !== undefined && NON_REASONING.test(body.model)) {
    return invalid(`Unsupported parameter: 'reasoning.effort' is not supported with this model.`, 'reasoning.effort', 'unsupported_parameter');
  }
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) return invalid("Invalid type for 'tools': expected an array.", 'tools', 'invalid_type');
    for (const [i, t] of (body.tools as unknown[]).entries()) {
      if (!isObj(t) || t.type !== 'function') return invalidValue(isObj(t) ? t.type : t, `tools[${i}].type`, ['function']);
      if (typeof t.name !== 'string' || !t.name) return missing(`tools[${i}].name`);
    }
  }
  if (body.input === undefined || typeof body.input === 'string') return undefined;
  if (!Array.isArray(body.input)) return invalid("Invalid type for 'input': expected one of a string or array of input items.", 'input', 'invalid_type');
  const calls = new Set<string>();
  for (const [i, item] of (body.input as unknown[]).entries()) {
    if (!isObj(item)) return invalid(`Invalid type for 'input[${i}]': expected an object.`, `input[${i}]`, 'invalid_type');
    const type = item.type ?? 'message';
    if (!ITEM_TYPES.includes(type)) return invalidValue(type, `input[${i}].type`, ITEM_TYPES);
    if (type === 'message') {
      if (!ROLES.includes(item.role)) return invalidValue(item.role, `input[${i}].role`, ROLES);
      if (item.content === undefined) return missing(`input[${i}].content`);
      if (typeof item.content !== 'string' && !Array.isArray(item.content)) return invalid(`Invalid type for 'input[${i}].content': expected one of a string or array.`, `input[${i}].content`, 'invalid_type');
    } else if (type === 'function_call') {
      if (typeof item.call_id !== 'string') return missing(`input[${i}].call_id`);
      if (typeof item.name !== 'string') return missing(`input[${i}].name`);
      if (typeof item.arguments !== 'string') return missing(`input[${i}].arguments`);
      calls.add(item.call_id);
    } else if (type === 'function_call_output') {
      if (typeof item.call_id !== 'string') return missing(`input[${i}].call_id`);
      if (typeof item.output !== 'string' && !Array.isArray(item.output)) return missing(`input[${i}].output`);
      if (!calls.has(item.call_id)) return invalid(`No tool call found for function call output with call_id ${item.call_id}.`, 'input');
    } else if (type === 'reasoning') {
      if (typeof item.id !== 'string') return missing(`input[${i}].id`);
      if (!Array.isArray(item.summary)) return missing(`input[${i}].summary`);
      if (item.encrypted_content !== undefined && !String(item.encrypted_content).startsWith(FAKE_ENCRYPTED_PREFIX)) {
        return invalid(`The encrypted content for item ${item.id} could not be verified.`, null, 'invalid_encrypted_content');
      }
    }
  }
  return undefined;
}
