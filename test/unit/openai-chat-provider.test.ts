/**
 * The 'openai-chat' and 'openai-compatible' connections (Chat Completions) through the model service,
 * against the fake Chat Completions server with the real `openai` SDK: a streamed reply as our entry
 * and canonical events, a tool round trip translated into `tool_calls` and `tool` messages the API
 * accepts, usage from the include_usage chunk, a compatible server's key and limit field, thinking
 * refused where the model takes no reasoning effort, and the errors classified.
 */
import { ModelService } from '../../src/activities/models/model-service';
import type { MessagesCall, RawStreamEvent } from '../../src/activities/models/port';
import { liveEventOf } from '../../src/activities/stream/stream-publisher';
import type { Entry } from '../../src/core/entries';
import { MissingApiKeyError, ModelCallError, UnknownModelError } from '../../src/core/errors';
import { fail, reply, say } from '../../src/testing/anthropic/fake-anthropic-script';
import { FakeOpenAIChatServer } from '../../src/testing/openai-chat/fake-openai-chat';
import type { FakeOpenAIOptions } from '../../src/testing/openai-common/fake-openai-server';

let fake: FakeOpenAIChatServer;
let service: ModelService;

async function boot(opts: FakeOpenAIOptions = {}): Promise<void> {
  fake = await FakeOpenAIChatServer.start({ apiKey: 'k', ...opts });
  service = new ModelService({
    connection: {},
    connections: {
      chat: { provider: 'openai-chat', baseURL: fake.url, apiKey: 'k' },
      local: { provider: 'openai-compatible', baseURL: fake.url },
      kimi: { provider: 'openai-compatible', baseURL: fake.url, apiKeyEnv: 'FH_TEST_KIMI_KEY' },
    },
  });
}

afterEach(async () => {
  await fake?.stop();
  delete process.env.FH_TEST_KIMI_KEY;
});

const LS = { name: 'ls', description: 'List a directory', input_schema: { type: 'object', properties: { dir: { type: 'string' } } } };
const call = (entries: Entry[], extra: Partial<MessagesCall> = {}): MessagesCall => ({ model: 'gpt-4.1', maxTokens: 500, system: 'You list files.', tools: [LS], entries, ...extra });

async function failure(p: Promise<unknown>): Promise<ModelCallError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ModelCallError) return err;
    throw err;
  }
  throw new Error('expected the call to fail');
}

describe("the 'openai-chat' connection (Chat Completions)", () => {
  it('streams a reply as our entry and the canonical events, with usage from the include_usage chunk', async () => {
    await boot({ script: [say('Three files: a, b and c.')] });
    const events: RawStreamEvent[] = [];
    const result = await service.provider('chat').call(call([{ type: 'user', text: 'list' }]), { onEvent: (e) => events.push(e) });
    expect(result.entry.content).toEqual([{ type: 'text', text: 'Three files: a, b and c.' }]);
    expect([result.stopReason, result.model]).toEqual(['end_turn', 'gpt-4.1']);
    expect(result.usage.inputTokens).toBe(fake.acceptedRequests()[0]!.inputTokens);
    expect(result.usage.outputTokens).toBeGreaterThan(0);
    expect(events.map((e) => e.type)).toEqual(['message_start', 'content_block_start', ...events.slice(2, -3).map(() => 'content_block_delta'), 'content_block_stop', 'message_delta', 'message_stop']);
    const text = events.map(liveEventOf).flatMap((e) => (e?.type === 'text_delta' ? [e.text] : []));
    expect(text.join('')).toBe('Three files: a, b and c.');
    const body = fake.acceptedRequests()[0]!.body;
    expect(body).toMatchObject({ model: 'gpt-4.1', max_completion_tokens: 500, stream: true, stream_options: { include_usage: true } });
    expect(body.messages).toEqual([{ role: 'system', content: 'You list files.' }, { role: 'user', content: 'list' }]);
    expect(body.tools).toEqual([{ type: 'function', function: { name: 'ls', description: 'List a directory', parameters: LS.input_schema } }]);
  });

  it('makes a tool round trip: tool_calls on the assistant message, each result a tool message naming its call', async () => {
    await boot({ script: [reply({ content: ['Looking.', { name: 'ls', input: { dir: 'src' } }, { name: 'ls', input: { dir: 'test' } }] }), say('src has a; test has b.')] });
    const first = await service.provider('chat').call(call([{ type: 'user', text: 'list src and test' }]), {});
    expect(first.stopReason).toBe('tool_use');
    expect(first.entry.content.map((b) => b.type)).toEqual(['text', 'tool_use', 'tool_use']);
    const [a, b] = first.entry.content.slice(1) as Array<{ id: string; input: unknown }>;
    expect([a!.input, b!.input]).toEqual([{ dir: 'src' }, { dir: 'test' }]);
    const entries: Entry[] = [
      { type: 'user', text: 'list src and test' },
      first.entry,
      { type: 'tool_results', results: [{ type: 'tool_result', tool_use_id: a!.id, content: 'a' }, { type: 'tool_result', tool_use_id: b!.id, content: 'no such dir', is_error: true }] },
    ];
    const second = await service.provider('chat').call(call(entries), {});
    expect(second.entry.content).toEqual([{ type: 'text', text: 'src has a; test has b.' }]);
    expect(fake.acceptedRequests()[1]!.body.messages.slice(1)).toEqual([
      { role: 'user', content: 'list src and test' },
      {
        role: 'assistant',
        content: 'Looking.',
        tool_calls: [
          { id: a!.id, type: 'function', function: { name: 'ls', arguments: '{"dir":"src"}' } },
          { id: b!.id, type: 'function', function: { name: 'ls', arguments: '{"dir":"test"}' } },
        ],
      },
      { role: 'tool', tool_call_id: a!.id, content: 'a' },
      { role: 'tool', tool_call_id: b!.id, content: 'Error: no such dir' },
    ]);
  });

  it("maps finish_reason length to max_tokens, and sends reasoning_effort only to OpenAI's reasoning models", async () => {
    await boot({ script: [reply({ content: ['cut sh'], stopReason: 'max_tokens' }), say('thought')] });
    expect((await service.provider('chat').call(call([{ type: 'user', text: 'x' }]), {})).stopReason).toBe('max_tokens');
    const refused = await failure(service.provider('chat').call(call([{ type: 'user', text: 'x' }], { thinking: { budgetTokens: 2048 } }), {}));
    expect(refused.kind).toBe('invalid_request');
    expect(refused.message).toMatch(/model 'gpt-4.1' takes no reasoning effort/);
    await service.provider('chat').call(call([{ type: 'user', text: 'x' }], { model: 'o4-mini', thinking: { budgetTokens: 32000 } }), {});
    expect(fake.acceptedRequests().at(-1)!.body).toMatchObject({ model: 'o4-mini', reasoning_effort: 'high', max_completion_tokens: 32500 });
  });

  it('classifies context_length_exceeded as context_overflow, and 401 / 429 / a stream cut by an error chunk', async () => {
    await boot({ contextWindowTokens: 50, script: [fail(429, { retryAfterMs: 1500 }), say('y'.repeat(40), { stream: { errorAfterDeltas: 1 } })] });
    const over = await failure(service.provider('chat').call(call([{ type: 'user', text: 'many words '.repeat(30) }]), {}));
    expect([over.kind, over.status]).toEqual(['context_overflow', 400]);
    expect(over.message).toMatch(/^OpenAI API 400 \(request req_fake\d+\): This model's maximum context length is 50 tokens/);
    const limited = await failure(service.provider('chat').call(call([{ type: 'user', text: 'x' }], { tools: [] }), {}));
    expect([limited.kind, limited.retryAfterMs]).toEqual(['rate_limited', 1500]);
    const cut = await failure(service.provider('chat').call(call([{ type: 'user', text: 'x' }], { tools: [] }), {}));
    expect(cut.kind).toBe('server');
    const wrong = new ModelService({ connection: {}, connections: { chat: { provider: 'openai-chat', baseURL: fake.url, apiKey: 'bad' } } });
    expect((await failure(wrong.provider('chat').call(call([{ type: 'user', text: 'x' }], { tools: [] }), {}))).kind).toBe('authentication');
  });
});

describe("the 'openai-chat' connection: usage and refusals", () => {
  it('counts cached prompt tokens apart, and maps a content_filter finish to refusal', async () => {
    await boot({ script: [say('a'), say('b'), reply({ content: ['I cannot help with that.'], stopReason: 'refusal' })] });
    const long: Entry = { type: 'user', text: 'word '.repeat(1500) };
    await service.provider('chat').call(call([long]), {});
    const second = await service.provider('chat').call(call([long, { type: 'assistant', content: [{ type: 'text', text: 'a' }] }, { type: 'user', text: 'more' }]), {});
    expect(second.usage.cacheReadInputTokens).toBeGreaterThanOrEqual(1024);
    expect(second.usage.inputTokens + second.usage.cacheReadInputTokens!).toBe(fake.acceptedRequests()[1]!.inputTokens);
    const refused = await service.provider('chat').call(call([{ type: 'user', text: 'x' }]), {});
    expect([refused.stopReason, refused.entry.content]).toEqual(['refusal', [{ type: 'text', text: 'I cannot help with that.' }]]);
  });
});

describe("the 'openai-compatible' connection", () => {
  it('talks to a keyless local server with max_tokens and no Authorization header', async () => {
    await boot({ keyless: true, script: [say('local reply')] });
    const result = await service.provider('local').call(call([{ type: 'user', text: 'x' }], { model: 'llama3.2' }), {});
    expect(result.entry.content).toEqual([{ type: 'text', text: 'local reply' }]);
    const req = fake.acceptedRequests()[0]!;
    expect(req.headers['authorization']).toBeUndefined();
    expect(req.body.max_tokens).toBe(500);
    expect(req.body.max_completion_tokens).toBeUndefined();
    expect(service.provider('local').capabilities.thinking).toBe(false);
  });

  it('checks a model against the server\'s model list (a compatible server may serve no single-model endpoint)', async () => {
    await boot({ keyless: true, models: ['llama3.2', 'qwen2.5'] });
    await expect(service.provider('local').verifyModel('qwen2.5')).resolves.toBeUndefined();
    await expect(service.provider('local').verifyModel('mistral')).rejects.toBeInstanceOf(UnknownModelError);
    expect(fake.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /v1/models', 'GET /v1/models']);
  });

  it('reads its key from the variable apiKeyEnv names, and says which variable when it is unset', async () => {
    await boot({ apiKey: 'moonshot-key', script: [say('kimi reply')] });
    await expect(service.provider('kimi').call(call([{ type: 'user', text: 'x' }]), {})).rejects.toThrow(MissingApiKeyError);
    await expect(service.provider('kimi').call(call([{ type: 'user', text: 'x' }]), {})).rejects.toThrow(/set FH_TEST_KIMI_KEY/);
    process.env.FH_TEST_KIMI_KEY = 'moonshot-key';
    const fresh = new ModelService({ connection: {}, connections: { kimi: { provider: 'openai-compatible', baseURL: fake.url, apiKeyEnv: 'FH_TEST_KIMI_KEY' } } });
    expect((await fresh.provider('kimi').call(call([{ type: 'user', text: 'x' }], { model: 'kimi-k2' }), {})).entry.content).toEqual([{ type: 'text', text: 'kimi reply' }]);
    expect(fake.acceptedRequests()[0]!.headers['authorization']).toBe('Bearer moonshot-key');
  });
});
