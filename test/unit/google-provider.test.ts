/**
 * The 'google' connection through the model service, against the fake Gemini server with the real
 * @google/genai SDK: a streamed call becomes our entry and the canonical (Anthropic-shaped) events,
 * a tool round trip keeps Gemini's thought signatures so the next request carries them back, and
 * errors, counts and model facts come through the port.
 */
import { ModelService } from '../../src/activities/models/model-service';
import type { MessagesCall, RawStreamEvent } from '../../src/activities/models/port';
import { ReplyAccumulator } from '../../src/activities/models/anthropic/reply-accumulator';
import { liveEventOf } from '../../src/activities/stream/stream-publisher';
import { requireProviderPackage } from '../../src/activities/models/optional-peer';
import type { Entry } from '../../src/core/entries';
import { ModelCallError, ProviderPackageMissingError, UnknownModelError, MissingApiKeyError } from '../../src/core/errors';
import { isOverflowError } from '../../src/core/context/compaction/overflow';
import { callTools, fail, say, think } from '../../src/testing/anthropic/fake-anthropic';
import { FakeGeminiServer, countGeminiTokens, signFunctionCall, type FakeGeminiOptions } from '../../src/testing/gemini/fake-gemini';

const MODEL = 'gemini-fake-2.5';
let fake: FakeGeminiServer;
let service: ModelService;

async function boot(opts: FakeGeminiOptions = {}): Promise<void> {
  fake = await FakeGeminiServer.start({ apiKey: 'k', ...opts });
  service = new ModelService({ connection: {}, connections: { gem: { provider: 'google', baseURL: fake.url, apiKey: 'k' } } });
}

afterEach(async () => {
  await fake?.stop();
});

const TOOLS = [{ name: 'read', description: 'Read a file', input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } }];
const call = (entries: Entry[], extra: Partial<MessagesCall> = {}): MessagesCall => ({ model: MODEL, maxTokens: 1000, system: 'Be brief.', tools: TOOLS, entries, ...extra });

async function streamed(request: MessagesCall) {
  const events: RawStreamEvent[] = [];
  const result = await service.provider('gem').call(request, { onEvent: (e) => events.push(e) });
  return { result, events };
}

describe("the 'google' connection", () => {
  it('a streamed call: our entry, the usage, and the canonical events the publisher and the accumulator read', async () => {
    await boot({ script: [say('Hello from Gemini, streamed.')] });
    const { result, events } = await streamed(call([{ type: 'user', text: 'hi' }]));
    expect(result.entry).toMatchObject({ type: 'assistant', content: [{ type: 'text', text: 'Hello from Gemini, streamed.' }], stopReason: 'end_turn', model: MODEL });
    expect(result.stopReason).toBe('end_turn');
    const body = fake.generateRequests()[0]!.body;
    expect(body).toMatchObject({
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      tools: [{ functionDeclarations: [{ name: 'read', description: 'Read a file', parametersJsonSchema: TOOLS[0]!.input_schema }] }],
      contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
      generationConfig: { maxOutputTokens: 1000 },
    });
    expect(fake.requests[0]!.path).toMatch(/:streamGenerateContent$/);
    expect(result.usage).toEqual({ inputTokens: countGeminiTokens(body), outputTokens: expect.any(Number), cacheReadInputTokens: 0, cacheCreationInputTokens: 0 });
    expect(result.usage.outputTokens).toBeGreaterThan(0);
    expect(events[0]!.type).toBe('message_start');
    expect(events.map((e) => e.type).slice(-2)).toEqual(['message_delta', 'message_stop']);
    const deltas = events.filter((e) => e.type === 'content_block_delta');
    expect(deltas.length).toBeGreaterThan(2); // streamed in pieces, as Gemini's chunks came
    const live = events.map(liveEventOf).filter(Boolean);
    expect(live[0]).toEqual({ type: 'block_started', index: 0, block: { type: 'text' } });
    expect(live.filter((e) => e!.type === 'text_delta').map((e) => (e as { text: string }).text).join('')).toBe('Hello from Gemini, streamed.');
    // The events are a well-formed Messages stream: the accumulator puts the same reply together.
    const acc = new ReplyAccumulator();
    events.forEach((e) => acc.add(e));
    expect(acc.final().content).toEqual([{ type: 'text', text: 'Hello from Gemini, streamed.', citations: null }]);
  });

  it('a tool round trip: the call becomes tool_use with its id, the signature is kept and sent back, the result is a functionResponse', async () => {
    await boot({ script: [callTools({ name: 'read', input: { path: 'a.txt' } }), say('It says A.')] });
    const first = await streamed(call([{ type: 'user', text: 'read a.txt' }]));
    const sig = signFunctionCall({ name: 'read', args: { path: 'a.txt' } });
    expect(first.result.stopReason).toBe('tool_use');
    expect(first.result.entry.content).toEqual([
      { type: 'redacted_thinking', data: sig },
      { type: 'tool_use', id: 'fake_call_1', name: 'read', input: { path: 'a.txt' } },
    ]);
    const toolStart = first.events.find((e) => e.type === 'content_block_start' && (e.content_block as { type: string }).type === 'tool_use');
    expect(toolStart).toMatchObject({ content_block: { type: 'tool_use', id: 'fake_call_1', name: 'read' } });
    expect(first.events.some((e) => e.type === 'content_block_delta' && (e.delta as { type: string }).type === 'input_json_delta')).toBe(true);

    const entries: Entry[] = [
      { type: 'user', text: 'read a.txt' },
      first.result.entry,
      { type: 'tool_results', results: [{ type: 'tool_result', tool_use_id: 'fake_call_1', content: 'A' }] },
    ];
    const second = await service.callModel(call(entries), new AbortController().signal, (fn) => fn(), 'gem');
    expect(second.entry.content).toEqual([{ type: 'text', text: 'It says A.' }]);
    expect(fake.generateRequests()[1]!.body.contents).toEqual([
      { role: 'user', parts: [{ text: 'read a.txt' }] },
      { role: 'model', parts: [{ functionCall: { id: 'fake_call_1', name: 'read', args: { path: 'a.txt' } }, thoughtSignature: sig }] },
      { role: 'user', parts: [{ functionResponse: { id: 'fake_call_1', name: 'read', response: { output: 'A' } } }] },
    ]);
  });

  it('thinking: the budget becomes thinkingConfig, thoughts come back as thinking blocks and go back as thought parts', async () => {
    await boot({ script: [callTools(think('Read it first.'), { name: 'read', input: { path: 'b' } }), say('done')] });
    const first = await streamed(call([{ type: 'user', text: 'q' }], { thinking: { budgetTokens: 2048 } }));
    expect(fake.generateRequests()[0]!.body.generationConfig).toEqual({ maxOutputTokens: 3048, thinkingConfig: { thinkingBudget: 2048, includeThoughts: true } });
    expect(first.result.entry.content.map((b) => b.type)).toEqual(['thinking', 'redacted_thinking', 'tool_use']);
    expect(first.result.entry.content[0]).toEqual({ type: 'thinking', thinking: 'Read it first.', signature: '' });
    expect(first.events.some((e) => e.type === 'content_block_delta' && (e.delta as { type: string }).type === 'thinking_delta')).toBe(true);
    expect(first.result.usage.outputTokens).toBeGreaterThan(0);
    const id = (first.result.entry.content[2] as { id: string }).id;
    await streamed(call([{ type: 'user', text: 'q' }, first.result.entry, { type: 'tool_results', results: [{ type: 'tool_result', tool_use_id: id, content: 'B', is_error: true }] }], { thinking: { budgetTokens: 2048 } }));
    const model = fake.generateRequests()[1]!.body.contents[1];
    expect(model.parts[0]).toEqual({ text: 'Read it first.', thought: true });
    expect(model.parts[1].thoughtSignature).toBe(signFunctionCall({ name: 'read', args: { path: 'b' } }));
    expect(fake.generateRequests()[1]!.body.contents[2].parts[0].functionResponse.response).toEqual({ error: 'B' });
  });

  it('calls without ids (Gemini 2.5): ours are made up, never sent back; the response is matched by name', async () => {
    await boot({ functionCallIds: false, script: [callTools({ name: 'read', input: { path: 'c' } }), say('C.')] });
    const first = await streamed(call([{ type: 'user', text: 'read c' }]));
    const use = first.result.entry.content.find((b) => b.type === 'tool_use') as { id: string };
    expect(use.id).toMatch(/^gemini_call_/);
    const entries: Entry[] = [{ type: 'user', text: 'read c' }, first.result.entry, { type: 'tool_results', results: [{ type: 'tool_result', tool_use_id: use.id, content: 'C' }] }];
    await expect(streamed(call(entries))).resolves.toMatchObject({ result: { stopReason: 'end_turn' } });
    const contents = fake.generateRequests()[1]!.body.contents;
    expect(contents[1].parts[0].functionCall).toEqual({ name: 'read', args: { path: 'c' } });
    expect(contents[2].parts[0].functionResponse).toEqual({ name: 'read', response: { output: 'C' } });
  });

  it("a thinking reply's signature, streamed on an empty last part, is kept after the text and goes back on it", async () => {
    await boot({ script: [say('The answer.', { thinking: 'Think.' }), say('ok')] });
    const first = await streamed(call([{ type: 'user', text: 'q' }], { thinking: { budgetTokens: 1024 } }));
    const sig = first.result.entry.content.find((b) => b.type === 'redacted_thinking');
    expect(sig).toEqual({ type: 'redacted_thinking', data: expect.any(String) });
    expect(first.result.entry.content).toEqual([{ type: 'thinking', thinking: 'Think.', signature: '' }, { type: 'text', text: 'The answer.' }, sig]);
    // One text block: the empty signed part closed it without splitting the text.
    expect(first.events.filter((e) => e.type === 'content_block_start' && (e.content_block as { type: string }).type === 'text')).toHaveLength(1);
    await streamed(call([{ type: 'user', text: 'q' }, first.result.entry, { type: 'user', text: 'and?' }], { thinking: { budgetTokens: 1024 } }));
    expect(fake.generateRequests()[1]!.body.contents[1].parts).toEqual([
      { text: 'Think.', thought: true },
      { text: 'The answer.', thoughtSignature: (sig as { data: string }).data },
    ]);
  });

  it('errors are ModelCallErrors by kind: the overflow is context_overflow, a 429 rate_limited with its delay, a 503 server', async () => {
    await boot({ script: [fail(429, { retryAfterSeconds: 3 }), fail(529)], contextWindowTokens: 30 });
    const overflow = await service.provider('gem').call(call([{ type: 'user', text: 'many words '.repeat(40) }]), {}).catch((e: unknown) => e);
    expect(overflow).toBeInstanceOf(ModelCallError);
    expect(overflow).toMatchObject({ kind: 'context_overflow', status: 400, code: 'MODEL_CONTEXT_OVERFLOW' });
    expect(isOverflowError(overflow)).toBe(true);
    expect((overflow as Error).message).toMatch(/input token count \(\d+\) exceeds the maximum number of tokens allowed \(30\)/);
    const small = call([{ type: 'user', text: 'hi' }], { system: undefined, tools: [] });
    await expect(service.provider('gem').call(small, {})).rejects.toMatchObject({ kind: 'rate_limited', status: 429, retryAfterMs: 3000 });
    await expect(service.provider('gem').call(small, {})).rejects.toMatchObject({ kind: 'server', status: 503 });
  });

  it("Claude's server-side context editing is refused by name, never dropped", async () => {
    await boot({ script: [say('would have answered')] });
    const request = call([{ type: 'user', text: 'hi' }], { contextManagement: { edits: [], betas: ['context-management-2025-06-27'] } });
    await expect(service.provider('gem').call(request, {})).rejects.toMatchObject({ kind: 'invalid_request', message: expect.stringContaining('no server-side context editing') });
    expect(fake.requests).toHaveLength(0);
  });

  it('an abort ends the call', async () => {
    await boot({ script: [say('slow reply that pauses', { stream: { pauseAfterDeltas: 1 } })] });
    const ac = new AbortController();
    const pending = service.provider('gem').call(call([{ type: 'user', text: 'hi' }]), { signal: ac.signal, onEvent: () => undefined });
    await fake.paused();
    ac.abort();
    await expect(pending).rejects.toBeInstanceOf(ModelCallError);
    fake.release();
  });

  it('countTokens counts the whole request (system and tools too) at the count endpoint; modelFacts and verifyModel read models.get', async () => {
    await boot({ contextWindowTokens: 777, onlyListedModels: true, models: { [MODEL]: { inputTokenLimit: 777 } } });
    const provider = service.provider('gem');
    expect(provider.capabilities).toEqual({ thinking: true, promptCaching: 'automatic', tokenCounting: true, serverContextEditing: false, thinkingSignatures: true });
    const request = call([{ type: 'user', text: 'count me' }]);
    const n = await provider.countTokens!(request);
    const sent = fake.requests.at(-1)!;
    expect(sent.path).toMatch(/:countTokens$/);
    expect(n).toBe(countGeminiTokens(sent.body.generateContentRequest));
    expect(n).toBeGreaterThan(countGeminiTokens({ contents: [{ role: 'user', parts: [{ text: 'count me' }] }] }));
    expect(await provider.modelFacts(MODEL)).toEqual({ contextWindowTokens: 777 });
    await expect(provider.verifyModel(MODEL)).resolves.toBeUndefined();
    await expect(provider.verifyModel('gemini-nope')).rejects.toBeInstanceOf(UnknownModelError);
    const resolved = await service.resolveModel({ model: MODEL, connection: 'gem' }, (fn) => fn());
    expect(resolved.contextWindowTokens).toBe(777);
  });

  it('a wrong key is authentication; no key at all is MISSING_API_KEY naming Gemini\'s variables', async () => {
    await boot({ script: [say('never')] });
    const wrong = new ModelService({ connection: {}, connections: { gem: { provider: 'google', baseURL: fake.url, apiKey: 'bad' } } });
    await expect(wrong.provider('gem').call(call([{ type: 'user', text: 'hi' }]), {})).rejects.toMatchObject({ kind: 'authentication', status: 400 });
    const saved = { g: process.env.GOOGLE_API_KEY, m: process.env.GEMINI_API_KEY };
    delete process.env.GOOGLE_API_KEY;
    delete process.env.GEMINI_API_KEY;
    try {
      const none = new ModelService({ connection: {}, connections: { gem: { provider: 'google', baseURL: fake.url } } });
      const err = await none.provider('gem').call(call([{ type: 'user', text: 'hi' }]), {}).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(MissingApiKeyError);
      expect((err as Error).message).toContain('GEMINI_API_KEY');
      process.env.GEMINI_API_KEY = 'k';
      const fromEnv = new ModelService({ connection: {}, connections: { gem: { provider: 'google', baseURL: fake.url } } });
      await expect(fromEnv.provider('gem').call(call([{ type: 'user', text: 'hi' }]), {})).resolves.toMatchObject({ stopReason: 'end_turn' });
    } finally {
      if (saved.g === undefined) delete process.env.GOOGLE_API_KEY;
      else process.env.GOOGLE_API_KEY = saved.g;
      if (saved.m === undefined) delete process.env.GEMINI_API_KEY;
      else process.env.GEMINI_API_KEY = saved.m;
    }
  });

  it('a built-in google connection exists; a missing provider package is PROVIDER_PACKAGE_MISSING naming it', () => {
    expect(new ModelService({ connection: {} }).provider('google').protocol).toBe('google');
    let err: unknown;
    try {
      requireProviderPackage('@google/genai-not-installed', 'google');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ProviderPackageMissingError);
    expect(err).toMatchObject({ code: 'PROVIDER_PACKAGE_MISSING', packageName: '@google/genai-not-installed' });
    expect((err as Error).message).toContain('npm install @google/genai-not-installed');
  });
});
