/**
 * Claude on Vertex behind the model port (src/activities/models/vertex): the official AnthropicVertex
 * client against the Vertex fake. A streamed call gives our entry and the canonical events; a tool call
 * goes round; counts go to Vertex's count endpoint; errors are classified.
 */
import { VertexProvider } from '../../src/activities/models/vertex/provider';
import type { MessagesCall, RawStreamEvent } from '../../src/activities/models/port';
import { ModelCallError } from '../../src/core/errors';
import { Connections } from '../../src/activities/models/connections';
import { callTools, fail, FakeVertexServer, say } from '../../src/testing';

const MODEL = 'claude-sonnet-4-5@20250929';
const TOOL = { name: 'read', description: 'read a file', input_schema: { type: 'object', properties: { path: { type: 'string' } } } };

let fake: FakeVertexServer;
afterEach(() => fake?.stop());

const provider = (accessToken = 'ya29.fake') => new VertexProvider({ baseURL: fake.url, region: 'us-east5', projectId: 'proj', accessToken });
const ask = (text: string): MessagesCall => ({ model: MODEL, maxTokens: 100, tools: [TOOL], entries: [{ type: 'user', text }] });

describe('VertexProvider', () => {
  it('streams a reply: our entry, and every event in the Anthropic shape', async () => {
    fake = await FakeVertexServer.start({ script: [say('hello from vertex')], accessToken: 'ya29.fake', projectId: 'proj', region: 'us-east5' });
    const events: RawStreamEvent[] = [];
    const result = await provider().call(ask('hi'), { onEvent: (e) => events.push(e) });
    expect(result.entry).toMatchObject({ type: 'assistant', content: [{ type: 'text', text: 'hello from vertex' }], stopReason: 'end_turn' });
    expect(events[0]!.type).toBe('message_start');
    expect(events[events.length - 1]!.type).toBe('message_stop');
    expect(events.filter((e) => e.type === 'content_block_delta').length).toBeGreaterThan(1);
    expect(fake.requests[0]!.body.anthropic_version).toBe('vertex-2023-10-16');
    expect(fake.requests[0]!.headers['authorization']).toBe('Bearer ya29.fake');
  });

  it('goes round a tool call, and counts at the count endpoint', async () => {
    fake = await FakeVertexServer.start({ script: [callTools({ name: 'read', input: { path: 'a.txt' }, id: 'toolu_1' }), say('the file says hi')] });
    const p = provider();
    const first = await p.call(ask('read a.txt'), { onEvent: () => undefined });
    expect(first.entry.content).toEqual([{ type: 'tool_use', id: 'toolu_1', name: 'read', input: { path: 'a.txt' } }]);
    const next: MessagesCall = {
      ...ask('read a.txt'),
      entries: [{ type: 'user', text: 'read a.txt' }, first.entry, { type: 'tool_results', results: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'hi' }] }],
    };
    const second = await p.call(next, {});
    expect(second.entry.content).toEqual([{ type: 'text', text: 'the file says hi' }]);
    expect(fake.requests[1]!.path).toMatch(/:rawPredict$/);
    const counted = await p.countTokens(next);
    expect(counted).toBe(fake.anthropic.countTokens(fake.messageRequests()[1]!.body));
  });

  it('classifies an overflow as context_overflow, and a 429 as rate limited', async () => {
    fake = await FakeVertexServer.start({ contextWindow: 5, script: [] });
    const err = (await provider().call(ask('a prompt far longer than five fake tokens can hold'), { onEvent: () => undefined }).catch((e: unknown) => e)) as ModelCallError;
    expect(err).toBeInstanceOf(ModelCallError);
    expect(err.kind).toBe('context_overflow');
    expect(err.message).toMatch(/^Vertex AI 400: prompt is too long/);
    await fake.stop();
    fake = await FakeVertexServer.start({ script: [fail(429, { retryAfterSeconds: 3 })] });
    const limited = (await provider().call({ ...ask('x') }, {}).catch((e: unknown) => e)) as ModelCallError;
    expect(limited.kind).toBe('rate_limited');
    expect(limited.retryAfterMs).toBe(3000);
  });

  it("passes an error mid-stream through as Anthropic's event: overloaded, retryable", async () => {
    fake = await FakeVertexServer.start({ script: [say('a long answer that breaks', { stream: { chunkChars: 4, errorAfterDeltas: 2 } })], keepRequests: 0 });
    const seen: RawStreamEvent[] = [];
    const err = (await provider().call(ask('hi'), { onEvent: (e) => seen.push(e) }).catch((e: unknown) => e)) as ModelCallError;
    expect(seen.filter((e) => e.type === 'content_block_delta')).toHaveLength(2);
    expect(err.kind).toBe('overloaded');
    expect(err.retryable).toBe(true);
    expect(fake.requests).toEqual([]);
  });

  it("refuses another token as authentication (Google's error shape), and says what it cannot do", async () => {
    fake = await FakeVertexServer.start({ script: [say('never')], accessToken: 'ya29.right' });
    const err = (await provider('ya29.wrong').call(ask('hi'), {}).catch((e: unknown) => e)) as ModelCallError;
    expect(err.kind).toBe('authentication');
    expect(err.message).toMatch(/invalid authentication credentials/);
    const p = provider();
    expect(p.capabilities).toMatchObject({ tokenCounting: true, thinking: true, promptCaching: 'explicit' });
    expect('serialisedBodies' in p).toBe(false);
    await expect(p.modelFacts(MODEL)).resolves.toEqual({ contextWindowTokens: 200_000 });
    await expect(p.verifyModel('anthropic.claude-sonnet-4-5-20250929-v1:0')).rejects.toMatchObject({ code: 'UNKNOWN_MODEL' });
    await expect(p.verifyModel(MODEL)).resolves.toBeUndefined();
  });

  it('needs a region: a typed error naming the field', async () => {
    const saved = process.env.CLOUD_ML_REGION;
    delete process.env.CLOUD_ML_REGION;
    try {
      await expect(new Connections({ v: { provider: 'vertex', projectId: 'p' } }).provider('v').call(ask('x'), {})).rejects.toEqual(
        expect.objectContaining({ code: 'INVALID_INPUT', field: 'region' }),
      );
    } finally {
      if (saved !== undefined) process.env.CLOUD_ML_REGION = saved;
    }
  });
});
