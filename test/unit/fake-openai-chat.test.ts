/**
 * The fake Chat Completions server, driven by the REAL `openai` SDK over HTTP: its chunk streams parse
 * (the SDK's stream helper assembles tool calls from their deltas by index), a usage chunk follows
 * when include_usage is asked, `[DONE]` ends the stream, and what the API refuses is refused.
 */
import OpenAI, { APIError } from 'openai';
import { FakeOpenAIChatServer } from '../../src/testing/openai-chat/fake-openai-chat';
import { callTools, fail, reply, say } from '../../src/testing/anthropic/fake-anthropic-script';
import type { FakeOpenAIOptions } from '../../src/testing/openai-common/fake-openai-server';

let server: FakeOpenAIChatServer;
let client: OpenAI;

async function boot(opts: FakeOpenAIOptions = {}): Promise<void> {
  server = await FakeOpenAIChatServer.start(opts);
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

const user = (content: string) => ({ role: 'user' as const, content });

describe('fake OpenAI Chat Completions API', () => {
  it('streams text chunks, then the finish reason, then a usage chunk and [DONE]', async () => {
    await boot({ script: [say('Hello from the fake chat API')] });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const c of await client.chat.completions.create({ model: 'gpt-4.1', messages: [user('hi')], stream: true, stream_options: { include_usage: true } })) chunks.push(c);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Hello from the fake chat API');
    expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant');
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('stop');
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage!.prompt_tokens).toBeGreaterThan(0);
    expect(last.usage!.completion_tokens).toBeGreaterThan(0);
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
  });

  it('sends no usage chunk without include_usage', async () => {
    await boot({ script: [say('x')] });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const c of await client.chat.completions.create({ model: 'gpt-4.1', messages: [user('hi')], stream: true })) chunks.push(c);
    expect(chunks.every((c) => c.choices.length === 1 && c.usage === undefined)).toBe(true);
  });

  it("streams tool calls as deltas by index that the SDK's helper assembles", async () => {
    await boot({ script: [callTools({ name: 'read', input: { path: 'src/a-long-file-name.ts' } }, { name: 'ls', input: { dir: '.' } })] });
    const stream = client.chat.completions.stream({ model: 'gpt-4.1', messages: [user('read')], tools: [{ type: 'function', function: { name: 'read', parameters: { type: 'object' } } }] });
    const final = await stream.finalChatCompletion();
    const calls = final.choices[0]!.message.tool_calls!;
    expect(calls.map((c) => c.type === 'function' && [c.function.name, JSON.parse(c.function.arguments)])).toEqual([
      ['read', { path: 'src/a-long-file-name.ts' }],
      ['ls', { dir: '.' }],
    ]);
    expect(final.choices[0]!.finish_reason).toBe('tool_calls');
  });

  it('answers without streaming (finish_reason length at the output limit)', async () => {
    await boot({ script: [reply({ content: ['cut'], stopReason: 'max_tokens' })] });
    const res = await client.chat.completions.create({ model: 'gpt-4.1', messages: [user('hi')] });
    expect(res.choices[0]!.message.content).toBe('cut');
    expect(res.choices[0]!.finish_reason).toBe('length');
    expect(res.usage!.total_tokens).toBe(res.usage!.prompt_tokens + res.usage!.completion_tokens);
  });

  it('refuses what the API refuses, with its error body and a request id', async () => {
    await boot({ apiKey: 'k' });
    const noModel = await refusal(client.chat.completions.create({ messages: [user('x')] } as never));
    expect([noModel.status, noModel.message]).toEqual([400, '400 you must provide a model parameter']);
    expect(noModel.requestID).toMatch(/^req_fake/);
    const noMessages = await refusal(client.chat.completions.create({ model: 'gpt-4.1' } as never));
    expect([noMessages.param, noMessages.code]).toEqual(['messages', 'missing_required_parameter']);
    const role = await refusal(client.chat.completions.create({ model: 'gpt-4.1', messages: [{ role: 'robot', content: 'x' } as never] }));
    expect([role.param, role.code]).toEqual(['messages[0].role', 'invalid_value']);
    const orphan = await refusal(client.chat.completions.create({ model: 'gpt-4.1', messages: [user('x'), { role: 'tool', tool_call_id: 'call_1', content: 'r' }] }));
    expect(orphan.message).toContain("messages with role 'tool' must be a response to a preceeding message with 'tool_calls'");
    const unanswered = await refusal(
      client.chat.completions.create({
        model: 'gpt-4.1',
        messages: [user('x'), { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'ls', arguments: '{}' } }] }, user('y')],
      }),
    );
    expect(unanswered.message).toContain('did not have response messages: call_1');
    const badKey = await refusal(new OpenAI({ apiKey: 'wrong', baseURL: server.url, maxRetries: 0 }).chat.completions.create({ model: 'gpt-4.1', messages: [user('x')] }));
    expect([badKey.status, badKey.code]).toEqual([401, 'invalid_api_key']);
    expect(server.acceptedRequests()).toHaveLength(0);
  });

  it("refuses messages over contextWindowTokens with context_length_exceeded in the API's words", async () => {
    await boot({ contextWindowTokens: 40 });
    const over = await refusal(client.chat.completions.create({ model: 'gpt-4.1', messages: [user('many words '.repeat(40))] }));
    expect([over.status, over.code, over.param]).toEqual([400, 'context_length_exceeded', 'messages']);
    expect(over.message).toMatch(/maximum context length is 40 tokens/);
  });

  it('plays a scripted 429 with retry-after, and a stream cut by an error chunk', async () => {
    await boot({ script: [fail(429, { retryAfterSeconds: 2 }), say('y'.repeat(64), { stream: { errorAfterDeltas: 1 } })] });
    const limited = await refusal(client.chat.completions.create({ model: 'gpt-4.1', messages: [user('x')] }));
    expect([limited.status, limited.headers?.get('retry-after')]).toEqual([429, '2']);
    const cut = await refusal(
      (async () => {
        for await (const _ of await client.chat.completions.create({ model: 'gpt-4.1', messages: [user('x')], stream: true })) void _;
      })(),
    );
    expect([cut.status, cut.type]).toEqual([undefined, 'server_error']);
  });

  it('takes requests without a key when keyless (a local server)', async () => {
    await boot({ keyless: true, script: [say('local')] });
    const bare = new OpenAI({ apiKey: 'unused', baseURL: server.url, maxRetries: 0, defaultHeaders: { Authorization: null } });
    const res = await bare.chat.completions.create({ model: 'llama3', messages: [user('x')] });
    expect(res.choices[0]!.message.content).toBe('local');
    expect(server.requests[0]!.headers['authorization']).toBeUndefined();
  });
});
