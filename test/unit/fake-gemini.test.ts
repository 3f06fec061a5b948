/**
 * The scripted fake Gemini server, exercised through the REAL @google/genai client over HTTP: its
 * streams parse in the SDK, its function calls, usage and errors are Gemini's, and what Gemini
 * refuses it refuses.
 */
import { ApiError, GoogleGenAI, type Content, type GenerateContentResponse } from '@google/genai';
import { callTools, fail, say, think } from '../../src/testing/anthropic/fake-anthropic';
import { FakeGeminiServer, countGeminiTokens, signFunctionCall, type FakeGeminiOptions } from '../../src/testing/gemini/fake-gemini';
import { classifyGeminiError } from '../../src/activities/models/google/errors';

const MODEL = 'gemini-fake-2.5';
/** Jest's sandbox hides Node's fetch dispatcher from the SDK (see the provider's sandboxFetch): plain fetch. */
const sdkFetch = (input: RequestInfo | URL, init?: RequestInit) => fetch(input, init);
let fake: FakeGeminiServer;
let ai: GoogleGenAI;

async function boot(opts: FakeGeminiOptions = {}): Promise<void> {
  fake = await FakeGeminiServer.start({ apiKey: 'k', ...opts });
  ai = new GoogleGenAI({ apiKey: 'k', httpOptions: { baseUrl: fake.url, fetch: sdkFetch } });
}

afterEach(async () => {
  await fake?.stop();
});

async function collect(contents: Content[], config: Record<string, unknown> = {}): Promise<GenerateContentResponse[]> {
  const chunks: GenerateContentResponse[] = [];
  for await (const chunk of await ai.models.generateContentStream({ model: MODEL, contents, config })) chunks.push(chunk);
  return chunks;
}

async function apiError(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    return err as ApiError;
  }
  throw new Error('expected the request to fail');
}

const googleMessage = (err: ApiError): string => (JSON.parse(err.message) as { error: { message: string } }).error.message;
const user = (text: string): Content => ({ role: 'user', parts: [{ text }] });

describe('FakeGeminiServer through @google/genai', () => {
  it('streams a text reply in pieces over alt=sse; the last chunk has the finish reason and the output usage', async () => {
    await boot({ script: [say('Hello from the fake Gemini.')] });
    const chunks = await collect([user('hi')]);
    expect(chunks.length).toBeGreaterThan(2);
    expect(chunks.map((c) => c.text).join('')).toBe('Hello from the fake Gemini.');
    expect(chunks.slice(0, -1).every((c) => c.candidates?.[0]?.finishReason === undefined)).toBe(true);
    const last = chunks[chunks.length - 1]!;
    expect(last.candidates?.[0]?.finishReason).toBe('STOP');
    const input = countGeminiTokens({ contents: [user('hi')] });
    expect(last.usageMetadata).toMatchObject({ promptTokenCount: input, candidatesTokenCount: expect.any(Number) });
    expect(chunks[0]!.usageMetadata?.promptTokenCount).toBe(input);
    const req = fake.requests[0]!;
    // The SDK (3.x) asks v1; the fake serves v1beta (the API's documented version) the same.
    expect(req.path).toBe(`/v1/models/${MODEL}:streamGenerateContent`);
    expect(req.headers['x-goog-api-key']).toBe('k');
  });

  it('sends a function call whole in one chunk with its id, args and a thought signature; finish STOP', async () => {
    await boot({ script: [callTools({ name: 'read', input: { path: 'a.txt' } }, { name: 'list', input: {} })] });
    const chunks = await collect([user('read it')], { tools: [{ functionDeclarations: [{ name: 'read', parametersJsonSchema: { type: 'object', properties: { path: { type: 'string' } } } }, { name: 'list' }] }] });
    const calls = chunks.flatMap((c) => c.candidates?.[0]?.content?.parts ?? []).filter((p) => p.functionCall);
    expect(calls).toHaveLength(2);
    expect(calls[0]!.functionCall).toEqual({ id: expect.stringMatching(/^fake_call_/), name: 'read', args: { path: 'a.txt' } });
    expect(calls[0]!.thoughtSignature).toBe(signFunctionCall(calls[0]!.functionCall!));
    expect(calls[1]!.thoughtSignature).toBeUndefined(); // only a call turn's first call is signed
    // Each call comes whole, alone in its chunk (Gemini does not stream a call's arguments).
    const callChunks = chunks.filter((c) => c.candidates?.[0]?.content?.parts?.some((p) => p.functionCall));
    expect(callChunks.map((c) => c.candidates![0]!.content!.parts!.length)).toEqual([1, 1]);
    expect(chunks.at(-1)!.candidates?.[0]?.finishReason).toBe('STOP');
  });

  it('shows thoughts only when includeThoughts asks, and counts them as thoughtsTokenCount either way', async () => {
    await boot({ script: [say('Answer.', { thinking: 'Let me think.' }), say('Again.', { thinking: 'Quietly.' })] });
    const shown = await collect([user('q')], { thinkingConfig: { thinkingBudget: 1024, includeThoughts: true } });
    const parts = shown.flatMap((c) => c.candidates?.[0]?.content?.parts ?? []);
    expect(parts.filter((p) => p.thought).map((p) => p.text).join('')).toBe('Let me think.');
    expect(shown.at(-1)!.usageMetadata?.thoughtsTokenCount).toBeGreaterThan(0);
    const hidden = await collect([user('q')]);
    expect(hidden.flatMap((c) => c.candidates?.[0]?.content?.parts ?? []).some((p) => p.thought)).toBe(false);
    expect(hidden.at(-1)!.usageMetadata?.thoughtsTokenCount).toBeGreaterThan(0);
  });

  it('answers generateContent whole, countTokens (contents or a generateContentRequest) and models.get', async () => {
    await boot({ script: [say('whole')], contextWindowTokens: 5000 });
    const res = await ai.models.generateContent({ model: MODEL, contents: [user('hi')] });
    expect(res.text).toBe('whole');
    const counted = await ai.models.countTokens({ model: MODEL, contents: [user('count these words')] });
    expect(counted.totalTokens).toBe(countGeminiTokens({ contents: [user('count these words')] }));
    const info = await ai.models.get({ model: MODEL });
    expect(info).toMatchObject({ name: `models/${MODEL}`, inputTokenLimit: 5000, outputTokenLimit: 65536 });
  });

  it('refuses what Gemini refuses, in its error shape', async () => {
    await boot({ script: [say('never')] });
    const noContents = await apiError(ai.models.countTokens({ model: MODEL, contents: undefined as never, config: { httpOptions: { extraBody: { generateContentRequest: { model: `models/${MODEL}` } } } } }));
    expect(noContents.status).toBe(400);
    expect(JSON.parse(noContents.message)).toEqual({ error: { code: 400, status: 'INVALID_ARGUMENT', message: expect.stringContaining('contents is not specified') } });
    const role = await apiError(collect([{ role: 'assistant', parts: [{ text: 'x' }] }]));
    expect(role.message).toContain('Please use a valid role: user, model.');
    const orphan = await apiError(collect([user('hi'), { role: 'user', parts: [{ functionResponse: { name: 'read', response: { output: 'x' } } }] }]));
    expect(orphan.message).toContain('function response turn comes immediately after a function call turn');
    const schema = await apiError(
      collect([user('hi')], { tools: [{ functionDeclarations: [{ name: 'read', parametersJsonSchema: { type: 'object', properties: { path: { type: 'text' } } } }] }] }),
    );
    expect(googleMessage(schema)).toContain('unknown type "text"');
    const badName = await apiError(collect([user('hi')], { tools: [{ functionDeclarations: [{ name: 'has space' }] }] }));
    expect(badName.message).toContain('Invalid function name');
    expect(fake.remaining()).toBe(1); // nothing refused played a step
  });

  it('refuses a function call of the current turn sent back without its signature (Gemini 3)', async () => {
    await boot({ script: [say('ok'), say('ok')] });
    const call = { id: 'c1', name: 'read', args: { path: 'a' } };
    const turn = (signature?: string): Content[] => [
      user('read a'),
      { role: 'model', parts: [{ functionCall: call, ...(signature ? { thoughtSignature: signature } : {}) }] },
      { role: 'user', parts: [{ functionResponse: { id: 'c1', name: 'read', response: { output: 'A' } } }] },
    ];
    const missing = await apiError(collect(turn()));
    expect(missing.message).toContain('Function call is missing a thought_signature');
    expect(await collect(turn(signFunctionCall(call)))).not.toHaveLength(0);
  });

  it('checks the key: none is 403 PERMISSION_DENIED, a wrong one 400 API_KEY_INVALID (classified as authentication)', async () => {
    await boot({ script: [say('never')] });
    const wrong = new GoogleGenAI({ apiKey: 'wrong', httpOptions: { baseUrl: fake.url, fetch: sdkFetch } });
    const err = await apiError(wrong.models.generateContent({ model: MODEL, contents: [user('hi')] }));
    expect(err.status).toBe(400);
    expect(classifyGeminiError(err).kind).toBe('authentication');
    const res = await fetch(`${fake.url}/v1beta/models/${MODEL}:generateContent`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { status: string } }).error.status).toBe('PERMISSION_DENIED');
    const byQuery = await fetch(`${fake.url}/v1beta/models/${MODEL}?key=k`);
    expect(byQuery.status).toBe(200);
  });

  it('an over-long request is Gemini 400 "input token count exceeds", classified as context_overflow', async () => {
    await boot({ script: [say('never')], contextWindowTokens: 20 });
    const err = await apiError(collect([user('word '.repeat(50))]));
    expect(err.status).toBe(400);
    expect(err.message).toMatch(/The input token count \(\d+\) exceeds the maximum number of tokens allowed \(20\)\./);
    expect(classifyGeminiError(err)).toMatchObject({ kind: 'context_overflow', status: 400 });
    expect(fake.remaining()).toBe(1);
  });

  it('scripted errors: 429 RESOURCE_EXHAUSTED with its retry delay, 500 and 503 are server errors; a mid-stream error chunk throws', async () => {
    await boot({ script: [fail(429, { retryAfterSeconds: 7 }), fail(500), fail(529), say('a long enough reply', { stream: { errorAfterDeltas: 1, chunkChars: 4 } })] });
    const limited = classifyGeminiError(await apiError(collect([user('a')])));
    expect(limited).toMatchObject({ kind: 'rate_limited', status: 429, retryAfterMs: 7000 });
    expect(classifyGeminiError(await apiError(collect([user('a')])))).toMatchObject({ kind: 'server', status: 500 });
    expect(classifyGeminiError(await apiError(collect([user('a')])))).toMatchObject({ kind: 'server', status: 503 });
    expect(classifyGeminiError(await apiError(collect([user('a')])))).toMatchObject({ kind: 'server', status: 503 });
  });

  it('implicit caching: a request that repeats an earlier prefix reads it (cachedContentTokenCount)', async () => {
    await boot({ script: [say('one'), say('two')], implicitCacheMinTokens: 10 });
    const first: Content[] = [user('a long first message with many words in it to pass the minimum')];
    await collect(first);
    const second = await collect([...first, { role: 'model', parts: [{ text: 'one' }] }, user('next')]);
    expect(second.at(-1)!.usageMetadata?.cachedContentTokenCount).toBe(countGeminiTokens({ contents: first }));
  });

  it('thinks with think() in a tool turn and shows it as thought parts', async () => {
    await boot({ script: [callTools(think('plan first'), { name: 'read' })] });
    const parts = (await collect([user('q')], { thinkingConfig: { includeThoughts: true } })).flatMap((c) => c.candidates?.[0]?.content?.parts ?? []);
    expect(parts[0]).toMatchObject({ thought: true });
    expect(parts.find((p) => p.functionCall)?.functionCall?.name).toBe('read');
  });
});
