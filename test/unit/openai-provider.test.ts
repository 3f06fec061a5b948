/**
 * The 'openai' connection (the Responses API) through the model service, against the fake Responses
 * server with the real `openai` SDK: a streamed call yields our entry and the canonical events the
 * live publisher reads, a tool round trip sends function_call / function_call_output items the API
 * accepts, usage counts input apart from cached input, reasoning round-trips encrypted, and errors are
 * classified (context_length_exceeded -> context_overflow, with the status and request id).
 */
import { ModelService } from '../../src/activities/models/model-service';
import type { MessagesCall, RawStreamEvent } from '../../src/activities/models/port';
import { liveEventOf } from '../../src/activities/stream/stream-publisher';
import { isOverflowError } from '../../src/core/context/compaction/overflow';
import type { AssistantEntry, Entry } from '../../src/core/entries';
import { ModelCallError, UnknownModelError } from '../../src/core/errors';
import { callTools, fail, reply, say, think } from '../../src/testing/anthropic/fake-anthropic-script';
import { FakeOpenAIResponsesServer } from '../../src/testing/openai-responses/fake-openai-responses';
import type { FakeOpenAIOptions } from '../../src/testing/openai-common/fake-openai-server';

let fake: FakeOpenAIResponsesServer;
let service: ModelService;

async function boot(opts: FakeOpenAIOptions = {}): Promise<void> {
  fake = await FakeOpenAIResponsesServer.start({ apiKey: 'k', ...opts });
  service = new ModelService({ connection: {}, connections: { oa: { provider: 'openai', baseURL: fake.url, apiKey: 'k' } } });
}

afterEach(async () => {
  await fake?.stop();
});

const READ = { name: 'read', description: 'Read a file', input_schema: { type: 'object', properties: { path: { type: 'string' } } } };
const call = (entries: Entry[], extra: Partial<MessagesCall> = {}): MessagesCall => ({ model: 'gpt-5.1', maxTokens: 1000, system: 'Be brief.', tools: [READ], entries, ...extra });
const around = <T>(fn: () => Promise<T>) => fn();

async function failure(p: Promise<unknown>): Promise<ModelCallError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ModelCallError) return err;
    throw err;
  }
  throw new Error('expected the call to fail');
}

describe("the 'openai' connection (Responses API)", () => {
  it('streams a reply as our entry and the canonical events, which the live publisher reads unchanged', async () => {
    await boot({ script: [say('Hello there, from the Responses API.')] });
    const events: RawStreamEvent[] = [];
    const result = await service.provider('oa').call(call([{ type: 'user', text: 'hi' }]), { onEvent: (e) => events.push(e) });
    expect(result.entry.content).toEqual([{ type: 'text', text: 'Hello there, from the Responses API.' }]);
    expect(result.stopReason).toBe('end_turn');
    expect(result.model).toBe('gpt-5.1');
    expect(result.usage.inputTokens).toBe(fake.acceptedRequests()[0]!.inputTokens);
    expect(result.usage.outputTokens).toBeGreaterThan(0);
    const types = events.map((e) => e.type);
    expect(types[0]).toBe('message_start');
    expect(types.slice(-2)).toEqual(['message_delta', 'message_stop']);
    expect(types.filter((t) => t === 'content_block_delta').length).toBeGreaterThan(1);
    const live = events.map(liveEventOf).filter((e) => e !== undefined);
    expect(live[0]).toEqual({ type: 'block_started', index: 0, block: { type: 'text' } });
    expect(live.flatMap((e) => (e.type === 'text_delta' ? [e.text] : [])).join('')).toBe('Hello there, from the Responses API.');
    const body = fake.acceptedRequests()[0]!.body;
    expect(body).toMatchObject({ model: 'gpt-5.1', instructions: 'Be brief.', max_output_tokens: 1000, store: false, stream: true });
    expect(body.tools).toEqual([{ type: 'function', name: 'read', description: 'Read a file', parameters: READ.input_schema, strict: false }]);
  });

  it('makes a tool round trip: the call as tool_use, the result sent back as function_call_output after its function_call', async () => {
    await boot({ script: [callTools({ name: 'read', input: { path: 'a.txt' } }), say('The file says hi.')] });
    const events: RawStreamEvent[] = [];
    const first = await service.provider('oa').call(call([{ type: 'user', text: 'read a.txt' }]), { onEvent: (e) => events.push(e) });
    expect(first.stopReason).toBe('tool_use');
    const use = first.entry.content[0]!;
    expect(use).toMatchObject({ type: 'tool_use', name: 'read', input: { path: 'a.txt' } });
    const id = (use as { id: string }).id;
    expect(events.map(liveEventOf).find((e) => e?.type === 'block_started')).toEqual({ type: 'block_started', index: 0, block: { type: 'tool_use', id, name: 'read' } });
    const entries: Entry[] = [
      { type: 'user', text: 'read a.txt' },
      first.entry,
      { type: 'tool_results', results: [{ type: 'tool_result', tool_use_id: id, content: 'hi' }] },
    ];
    const second = await service.callModel(call(entries), new AbortController().signal, around, 'oa');
    expect(second.entry.content).toEqual([{ type: 'text', text: 'The file says hi.' }]);
    expect(fake.acceptedRequests()[1]!.body.input).toEqual([
      { role: 'user', content: [{ type: 'input_text', text: 'read a.txt' }] },
      { type: 'function_call', call_id: id, name: 'read', arguments: '{"path":"a.txt"}' },
      { type: 'function_call_output', call_id: id, output: 'hi' },
    ]);
  });

  it('counts cached input apart from the rest of the input, as our usage does', async () => {
    await boot({ script: [say('a'), say('b')] });
    const long: Entry = { type: 'user', text: 'word '.repeat(1500) };
    await service.provider('oa').call(call([long]), {});
    const second = await service.provider('oa').call(call([long, { type: 'assistant', content: [{ type: 'text', text: 'a' }] }, { type: 'user', text: 'more' }]), {});
    const total = fake.acceptedRequests()[1]!.inputTokens!;
    expect(second.usage.cacheReadInputTokens).toBeGreaterThanOrEqual(1024);
    expect(second.usage.inputTokens + second.usage.cacheReadInputTokens!).toBe(total);
  });

  it('sends thinking as a reasoning effort and keeps encrypted reasoning, which the API verifies when it comes back', async () => {
    await boot({ script: [callTools(think('I should read it'), { name: 'read', input: { path: 'a' } }), say('done')] });
    const thinking = { budgetTokens: 8192 };
    const first = await service.provider('oa').call(call([{ type: 'user', text: 'go' }], { thinking }), {});
    expect(fake.acceptedRequests()[0]!.body).toMatchObject({ reasoning: { effort: 'medium' }, include: ['reasoning.encrypted_content'], max_output_tokens: 9192 });
    expect(first.entry.content.map((b) => b.type)).toEqual(['redacted_thinking', 'tool_use']);
    const id = (first.entry.content[1] as { id: string }).id;
    await service.provider('oa').call(
      call([{ type: 'user', text: 'go' }, first.entry, { type: 'tool_results', results: [{ type: 'tool_result', tool_use_id: id, content: 'x' }] }], { thinking }),
      {},
    );
    const sent = fake.acceptedRequests()[1]!.body.input as Array<{ type?: string; encrypted_content?: string }>;
    expect(sent.map((i) => i.type ?? 'message')).toEqual(['message', 'reasoning', 'function_call', 'function_call_output']);
    expect(sent[1]!.encrypted_content).toMatch(/^fakeenc_/);
  });

  it("classifies context_length_exceeded as context_overflow, naming the status and the request id", async () => {
    await boot({ contextWindowTokens: 30 });
    const err = await failure(service.provider('oa').call(call([{ type: 'user', text: 'many words '.repeat(40) }]), {}));
    expect(err.kind).toBe('context_overflow');
    expect(err.status).toBe(400);
    expect(err.message).toMatch(/^OpenAI API 400 \(request req_fake\d+\): Your input exceeds the context window/);
    expect(isOverflowError(err)).toBe(true);
  });

  it('classifies 401, 429 (with retry-after), 5xx, a stream cut by an error event, and an unknown model', async () => {
    await boot({ script: [fail(429, { retryAfterSeconds: 2 }), fail(500), say('x'.repeat(40), { stream: { errorAfterDeltas: 1 } })], models: ['gpt-5.1'] });
    const limited = await failure(service.provider('oa').call(call([{ type: 'user', text: 'x' }]), {}));
    expect([limited.kind, limited.status, limited.retryAfterMs, limited.retryable]).toEqual(['rate_limited', 429, 2000, true]);
    expect((await failure(service.provider('oa').call(call([{ type: 'user', text: 'x' }]), {}))).kind).toBe('server');
    const cut = await failure(service.provider('oa').call(call([{ type: 'user', text: 'x' }]), { onEvent: () => {} }));
    expect([cut.kind, cut.retryable]).toEqual(['server', true]);
    await expect(service.provider('oa').verifyModel('gpt-nope')).rejects.toBeInstanceOf(UnknownModelError);
    await expect(service.provider('oa').verifyModel('gpt-5.1')).resolves.toBeUndefined();
    const wrong = new ModelService({ connection: {}, connections: { oa: { provider: 'openai', baseURL: fake.url, apiKey: 'bad' } } });
    const denied = await failure(wrong.provider('oa').call(call([{ type: 'user', text: 'x' }]), {}));
    expect([denied.kind, denied.status, denied.code]).toEqual(['authentication', 401, 'MODEL_AUTHENTICATION']);
  });

  it('stops a call when its signal aborts mid-stream', async () => {
    await boot({ script: [say('x'.repeat(80), { stream: { pauseAfterDeltas: 2 } })] });
    const controller = new AbortController();
    const deltas: RawStreamEvent[] = [];
    let twoArrived!: () => void;
    const arrived = new Promise<void>((resolve) => (twoArrived = resolve));
    const pending = failure(
      service.provider('oa').call(call([{ type: 'user', text: 'x' }]), {
        signal: controller.signal,
        onEvent: (e) => {
          if (e.type === 'content_block_delta' && deltas.push(e) === 2) twoArrived();
        },
      }),
    );
    await Promise.all([fake.paused(), arrived]);
    controller.abort();
    const err = await pending;
    expect(err.kind).toBe('invalid_request');
    expect(err.message).toMatch(/aborted/);
    expect(deltas).toHaveLength(2);
  });

  it('counts input tokens with the count endpoint, and takes the window from the built-in table', async () => {
    await boot();
    const request = call([{ type: 'user', text: 'count these words please' }]);
    const provider = service.provider('oa');
    expect(provider.capabilities.tokenCounting).toBe(true);
    const n = await provider.countTokens!(request);
    expect(n).toBe(fake.countTokens(fake.requests.at(-1)!.body));
    expect(n).toBeGreaterThan(5);
    expect(await provider.modelFacts('gpt-5.1')).toEqual({ contextWindowTokens: 272_000 });
    expect(await provider.modelFacts('gpt-4.1-mini')).toEqual({ contextWindowTokens: 1_047_576 });
    expect(await provider.modelFacts('some-local-model')).toEqual({});
  });

  it('drops whitespace-only text before a tool call from the entry, as the Anthropic path does', async () => {
    await boot({ script: [reply({ content: ['\n\n', { name: 'read', input: {} }] })] });
    const result = await service.provider('oa').call(call([{ type: 'user', text: 'x' }]), {});
    expect((result.entry as AssistantEntry).content.map((b) => b.type)).toEqual(['tool_use']);
  });

  it('says which package to install when the openai SDK is not installed (PROVIDER_PACKAGE_MISSING), at the first call', async () => {
    let pending: Promise<unknown> | undefined;
    let made: unknown;
    jest.isolateModules(() => {
      jest.doMock('openai', () => {
        throw Object.assign(new Error("Cannot find module 'openai' from 'src/activities/models/openai/sdk.ts'"), { code: 'MODULE_NOT_FOUND' });
      });
      const { ModelService: Isolated } = require('../../src/activities/models/model-service') as typeof import('../../src/activities/models/model-service');
      const isolated = new Isolated({ connection: {}, connections: { oa: { provider: 'openai', apiKey: 'k' } } });
      made = isolated.provider('oa'); // making the connection loads nothing
      pending = isolated.provider('oa').call(call([{ type: 'user', text: 'x' }]), {});
    });
    expect(made).toBeDefined();
    await expect(pending).rejects.toMatchObject({ code: 'PROVIDER_PACKAGE_MISSING', packageName: 'openai', provider: 'openai' });
    await expect(pending).rejects.toThrow(/npm install openai/);
  });
});
