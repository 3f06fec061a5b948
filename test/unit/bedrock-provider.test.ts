/**
 * Claude on Bedrock behind the model port (src/activities/models/bedrock): the official
 * AnthropicBedrock client against the Bedrock fake. A streamed call gives our entry and the canonical
 * (Anthropic-shaped) events; a tool call goes round; Bedrock's errors are classified.
 */
import { BedrockProvider } from '../../src/activities/models/bedrock/provider';
import { classifyBedrockError } from '../../src/activities/models/bedrock/errors';
import type { MessagesCall, ModelProvider, RawStreamEvent } from '../../src/activities/models/port';
import { ModelCallError } from '../../src/core/errors';
import { Connections } from '../../src/activities/models/connections';
import { callTools, fail, FakeBedrockServer, say } from '../../src/testing';

const MODEL = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';
const TOOL = { name: 'read', description: 'read a file', input_schema: { type: 'object', properties: { path: { type: 'string' } } } };

let fake: FakeBedrockServer;
afterEach(() => fake?.stop());

function provider(): BedrockProvider {
  return new BedrockProvider({ baseURL: fake.url, region: 'us-east-1', awsAccessKey: 'AKIDEXAMPLE', awsSecretKey: 'x' });
}

const ask = (text: string): MessagesCall => ({ model: MODEL, maxTokens: 100, tools: [TOOL], entries: [{ type: 'user', text }] });

describe('BedrockProvider', () => {
  it('streams a reply: our entry, and every event in the Anthropic shape', async () => {
    fake = await FakeBedrockServer.start({ script: [say('hello from bedrock')], awsAccessKey: 'AKIDEXAMPLE' });
    const events: RawStreamEvent[] = [];
    const result = await provider().call(ask('hi'), { onEvent: (e) => events.push(e) });
    expect(result.entry).toMatchObject({ type: 'assistant', content: [{ type: 'text', text: 'hello from bedrock' }], stopReason: 'end_turn' });
    expect(result.usage.outputTokens).toBeGreaterThan(0);
    expect(events.map((e) => e.type)).toEqual([
      'message_start',
      'content_block_start',
      ...events.filter((e) => e.type === 'content_block_delta').map(() => 'content_block_delta'),
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(events.filter((e) => e.type === 'content_block_delta').length).toBeGreaterThan(1);
    expect(fake.requests[0]!.body.anthropic_version).toBe('bedrock-2023-05-31');
  });

  it('goes round a tool call: the tool_use comes back, its result goes out, the answer follows', async () => {
    fake = await FakeBedrockServer.start({ script: [callTools({ name: 'read', input: { path: 'a.txt' }, id: 'toolu_1' }), say('the file says hi')] });
    const p = provider();
    const first = await p.call(ask('read a.txt'), { onEvent: () => undefined });
    expect(first.stopReason).toBe('tool_use');
    expect(first.entry.content).toEqual([{ type: 'tool_use', id: 'toolu_1', name: 'read', input: { path: 'a.txt' } }]);
    const second = await p.call(
      {
        ...ask('read a.txt'),
        entries: [{ type: 'user', text: 'read a.txt' }, first.entry, { type: 'tool_results', results: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'hi' }] }],
      },
      {},
    );
    expect(second.entry.content).toEqual([{ type: 'text', text: 'the file says hi' }]);
    const sent = fake.requests[1]!.body;
    expect(sent.messages[2]).toEqual({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'hi' }] });
    expect(fake.requests[1]!.path).toBe(`/model/${MODEL}/invoke`);
  });

  it("classifies an overflow as context_overflow, in either of Bedrock's words", async () => {
    fake = await FakeBedrockServer.start({ contextWindow: 5, script: [] });
    const err = await provider().call(ask('a prompt far longer than five fake tokens can hold'), { onEvent: () => undefined }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelCallError);
    expect((err as ModelCallError).kind).toBe('context_overflow');
    expect((err as ModelCallError).message).toMatch(/^Bedrock 400: prompt is too long/);

    fake.anthropic.enqueue(fail(400, { message: 'Input is too long for requested model.' }));
    const other = await new BedrockProvider({ baseURL: fake.url, region: 'us-east-1', awsAccessKey: 'AKIDEXAMPLE', awsSecretKey: 'x' })
      .call({ ...ask('x'), model: MODEL }, {})
      .catch((e: unknown) => e);
    expect((other as ModelCallError).kind).toBe('context_overflow');
  });

  it('classifies an error mid-stream (an exception frame) and throttling as retryable', async () => {
    fake = await FakeBedrockServer.start({ script: [say('a long answer that breaks', { stream: { chunkChars: 4, errorAfterDeltas: 2 } }), fail(429)] });
    const seen: RawStreamEvent[] = [];
    const err = (await provider().call(ask('hi'), { onEvent: (e) => seen.push(e) }).catch((e: unknown) => e)) as ModelCallError;
    expect(seen.filter((e) => e.type === 'content_block_delta')).toHaveLength(2);
    expect(err).toBeInstanceOf(ModelCallError);
    expect(err.kind).toBe('overloaded');
    expect(err.retryable).toBe(true);
    const throttled = (await provider().call(ask('hi'), {}).catch((e: unknown) => e)) as ModelCallError;
    expect(throttled.kind).toBe('rate_limited');
    expect(throttled.status).toBe(429);
  });

  it('refuses bad credentials as authentication, and says what it cannot do', async () => {
    fake = await FakeBedrockServer.start({ script: [say('never')], awsAccessKey: 'AKIDOTHER' });
    const err = (await provider().call(ask('hi'), {}).catch((e: unknown) => e)) as ModelCallError;
    expect(err.kind).toBe('authentication');
    const p = provider();
    expect((p as ModelProvider).countTokens).toBeUndefined();
    expect(p.capabilities).toMatchObject({ tokenCounting: false, thinking: true, promptCaching: 'explicit' });
    expect('serialisedBodies' in p).toBe(false);
    await expect(p.modelFacts(MODEL)).resolves.toEqual({ contextWindowTokens: 200_000 });
    await expect(p.verifyModel('claude-sonnet-4-5')).rejects.toMatchObject({ code: 'UNKNOWN_MODEL' });
    await expect(p.verifyModel(MODEL)).resolves.toBeUndefined();
    expect(classifyBedrockError(new Error('socket hang up')).kind).toBe('network');
  });

  it('signs with static keys even when AWS_BEARER_TOKEN_BEDROCK is set; sends a Bedrock API key as a bearer token', async () => {
    fake = await FakeBedrockServer.start({ script: [say('signed'), say('keyed')], apiKey: 'bedrock-api-key' });
    const saved = process.env.AWS_BEARER_TOKEN_BEDROCK;
    process.env.AWS_BEARER_TOKEN_BEDROCK = 'from-the-environment';
    try {
      await provider().call(ask('hi'), {});
      expect(fake.requests[0]!.headers['authorization']).toMatch(/^AWS4-HMAC-SHA256 /);
    } finally {
      if (saved === undefined) delete process.env.AWS_BEARER_TOKEN_BEDROCK;
      else process.env.AWS_BEARER_TOKEN_BEDROCK = saved;
    }
    const keyed = await new BedrockProvider({ baseURL: fake.url, region: 'us-east-1', apiKey: 'bedrock-api-key' }).call(ask('hi'), {});
    expect(keyed.entry.content).toEqual([{ type: 'text', text: 'keyed' }]);
    expect(fake.requests[1]!.headers['authorization']).toBe('Bearer bedrock-api-key');
  });

  it("is the built-in 'bedrock' connection, its SDK loaded only when first used", () => {
    const connections = new Connections();
    expect(connections.names()).toEqual(expect.arrayContaining(['anthropic', 'bedrock', 'vertex']));
    expect(connections.provider('bedrock').protocol).toBe('bedrock');
  });
});
