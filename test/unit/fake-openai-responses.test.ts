/**
 * The fake OpenAI Responses server, driven by the REAL `openai` SDK over HTTP: its streams parse into
 * the events and final response the SDK's own helpers build, tool-call argument deltas add up, usage
 * is reported, and what the API refuses is refused with OpenAI's error bodies.
 */
import OpenAI, { APIError } from 'openai';
import { FakeOpenAIResponsesServer } from '../../src/testing/openai-responses/fake-openai-responses';
import { callTools, fail, reply, say, think } from '../../src/testing/anthropic/fake-anthropic-script';
import type { FakeOpenAIOptions } from '../../src/testing/openai-common/fake-openai-server';

let server: FakeOpenAIResponsesServer;
let client: OpenAI;

async function boot(opts: FakeOpenAIOptions = {}): Promise<void> {
  server = await FakeOpenAIResponsesServer.start(opts);
  client = new OpenAI({ apiKey: 'k', baseURL: server.url, maxRetries: 0 });
}

afterEach(async () => {
  await server?.stop();
});

async function refusal(p: Promise<unknown>): Promise<APIError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof APIError) return err;
    throw err;
  }
  throw new Error('expected the request to be refused');
}

describe('fake OpenAI Responses API', () => {
  it('streams a text reply the SDK assembles (stream helper: finalResponse, output_text) with usage', async () => {
    await boot({ script: [say('Hello from the fake Responses API')] });
    const stream = client.responses.stream({ model: 'gpt-5.1', input: 'hi', instructions: 'Be brief.' });
    const types: string[] = [];
    let text = '';
    for await (const e of stream) {
      types.push(e.type);
      if (e.type === 'response.output_text.delta') text += e.delta;
    }
    const final = await stream.finalResponse();
    expect(text).toBe('Hello from the fake Responses API');
    expect(final.output_text).toBe('Hello from the fake Responses API');
    expect(final.status).toBe('completed');
    expect(final.usage?.input_tokens).toBeGreaterThan(0);
    expect(final.usage?.output_tokens).toBeGreaterThan(0);
    expect(types.slice(0, 4)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
    expect(types.slice(-4)).toEqual(['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed']);
    expect(types.filter((t) => t === 'response.output_text.delta').length).toBeGreaterThan(1);
  });

  it('streams tool calls as function_call items whose argument deltas add up to the arguments', async () => {
    await boot({ script: [callTools({ name: 'read', input: { path: 'src/a-rather-long-file-name.ts' } }, { name: 'ls', input: {} })] });
    const stream = client.responses.stream({ model: 'gpt-5.1', input: 'read it', tools: [{ type: 'function', name: 'read', parameters: { type: 'object' }, strict: false }] });
    const deltas = new Map<number, string>();
    for await (const e of stream) if (e.type === 'response.function_call_arguments.delta') deltas.set(e.output_index, (deltas.get(e.output_index) ?? '') + e.delta);
    const final = await stream.finalResponse();
    const calls = final.output.filter((o) => o.type === 'function_call');
    expect(calls.map((c) => c.type === 'function_call' && [c.name, JSON.parse(c.arguments)])).toEqual([
      ['read', { path: 'src/a-rather-long-file-name.ts' }],
      ['ls', {}],
    ]);
    expect(JSON.parse(deltas.get(0)!)).toEqual({ path: 'src/a-rather-long-file-name.ts' });
    expect(calls.every((c) => c.type === 'function_call' && c.call_id.startsWith('call_'))).toBe(true);
  });

  it('answers without streaming with the same response object', async () => {
    await boot({ script: [say('plain')] });
    const res = await client.responses.create({ model: 'gpt-5.1', input: [{ role: 'user', content: 'hi' }] });
    expect(res.output_text).toBe('plain');
    expect(res.object).toBe('response');
  });

  it('reports an incomplete response at the output limit, and encrypted reasoning only when included', async () => {
    await boot({ script: [reply({ content: ['cut'], stopReason: 'max_tokens' }), callTools(think('plan it'), { name: 'ls' })] });
    const cut = await client.responses.create({ model: 'gpt-5.1', input: 'x' });
    expect(cut.status).toBe('incomplete');
    expect(cut.incomplete_details?.reason).toBe('max_output_tokens');
    const reasoned = await client.responses.create({ model: 'gpt-5.1', input: 'x', reasoning: { effort: 'low' }, include: ['reasoning.encrypted_content'] });
    const item = reasoned.output.find((o) => o.type === 'reasoning');
    expect(item?.type === 'reasoning' && item.encrypted_content).toMatch(/^fakeenc_/);
    expect(reasoned.usage?.output_tokens_details.reasoning_tokens).toBeGreaterThan(0);
  });

  it('reports cached input tokens for a repeated prefix of at least 1024 tokens', async () => {
    await boot({ script: [say('a'), say('b')] });
    const long = 'word '.repeat(1500);
    const first = await client.responses.create({ model: 'gpt-5.1', input: [{ role: 'user', content: long }] });
    const second = await client.responses.create({ model: 'gpt-5.1', input: [{ role: 'user', content: long }, { role: 'assistant', content: 'a' }, { role: 'user', content: 'more' }] });
    expect(first.usage?.input_tokens_details.cached_tokens).toBe(0);
    expect(second.usage?.input_tokens_details.cached_tokens).toBeGreaterThanOrEqual(1024);
    expect(second.usage!.input_tokens_details.cached_tokens).toBeLessThanOrEqual(second.usage!.input_tokens);
  });

  it('refuses what the API refuses, with its error body and a request id', async () => {
    await boot({ apiKey: 'k' });
    const noModel = await refusal(client.responses.create({ input: 'x' } as never));
    expect([noModel.status, noModel.param, noModel.code]).toEqual([400, 'model', 'missing_required_parameter']);
    expect(noModel.requestID).toMatch(/^req_fake/);
    const noInput = await refusal(client.responses.create({ model: 'gpt-5.1' }));
    expect(noInput.param).toBe('input');
    const role = await refusal(client.responses.create({ model: 'gpt-5.1', input: [{ role: 'tool', content: 'x' } as never] }));
    expect([role.param, role.code]).toEqual(['input[0].role', 'invalid_value']);
    const orphan = await refusal(client.responses.create({ model: 'gpt-5.1', input: [{ type: 'function_call_output', call_id: 'call_9', output: 'x' }] }));
    expect(orphan.message).toContain('No tool call found for function call output with call_id call_9');
    const forged = await refusal(client.responses.create({ model: 'gpt-5.1', input: [{ type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'forged' }] }));
    expect(forged.code).toBe('invalid_encrypted_content');
    const badKey = await refusal(new OpenAI({ apiKey: 'wrong', baseURL: server.url, maxRetries: 0 }).responses.create({ model: 'gpt-5.1', input: 'x' }));
    expect([badKey.status, badKey.code]).toEqual([401, 'invalid_api_key']);
    expect(server.acceptedRequests()).toHaveLength(0);
  });

  it('refuses input over contextWindowTokens with context_length_exceeded, and counts input tokens', async () => {
    await boot({ contextWindowTokens: 50, script: [say('fits')] });
    const over = await refusal(client.responses.create({ model: 'gpt-5.1', input: 'many words '.repeat(60) }));
    expect([over.status, over.code, over.param]).toEqual([400, 'context_length_exceeded', 'input']);
    const counted = await client.responses.inputTokens.count({ model: 'gpt-5.1', input: 'many words '.repeat(60) });
    expect(counted.input_tokens).toBe(server.countTokens({ input: 'many words '.repeat(60) }));
    expect(counted.input_tokens).toBeGreaterThan(50);
    expect((await client.responses.create({ model: 'gpt-5.1', input: 'short' })).output_text).toBe('fits');
  });

  it('plays scripted errors as OpenAI sends them (429 with retry-after) and a stream cut by an error event', async () => {
    await boot({ script: [fail(429, { retryAfterSeconds: 3 }), say('x'.repeat(64), { stream: { errorAfterDeltas: 2 } })] });
    const limited = await refusal(client.responses.create({ model: 'gpt-5.1', input: 'x' }));
    expect([limited.status, limited.code, limited.headers?.get('retry-after')]).toEqual([429, 'rate_limit_exceeded', '3']);
    const types: string[] = [];
    const cut = await refusal(
      (async () => {
        for await (const e of await client.responses.create({ model: 'gpt-5.1', input: 'x', stream: true })) types.push(e.type);
      })(),
    );
    // The SDK throws the `error` event as an APIError without a status (the 200 was sent already).
    expect([cut.status, cut.code]).toEqual([undefined, 'server_error']);
    expect(types.filter((t) => t === 'response.output_text.delta')).toHaveLength(2);
    expect(types).not.toContain('response.completed');
  });

  it('serves the models endpoints', async () => {
    await boot({ models: ['gpt-5.1'] });
    expect((await client.models.retrieve('gpt-5.1')).id).toBe('gpt-5.1');
    const unknown = await refusal(client.models.retrieve('gpt-nope'));
    expect([unknown.status, unknown.code]).toEqual([404, 'model_not_found']);
  });
});
