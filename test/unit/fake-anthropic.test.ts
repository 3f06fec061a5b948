/**
 * The scripted fake Anthropic server, exercised through the REAL @anthropic-ai/sdk client over HTTP.
 */
import Anthropic, { APIError } from '@anthropic-ai/sdk';
import {
  FakeAnthropicServer,
  callTools,
  countFakeTokens,
  fail,
  reply,
  say,
  signThinking,
  think,
  validateMessagesRequest,
  type FakeAnthropicOptions,
} from '../../src/testing/anthropic/fake-anthropic';

const MODEL = 'claude-fake-1';

let server: FakeAnthropicServer;
let client: Anthropic;

async function boot(opts: FakeAnthropicOptions = {}): Promise<void> {
  server = await FakeAnthropicServer.start(opts);
  client = new Anthropic({ apiKey: 'test', baseURL: server.url, maxRetries: 0 });
}

afterEach(async () => {
  await server?.stop();
});

/** Runs `p`, expecting it to reject with an Anthropic APIError; returns that error. */
async function apiError(p: Promise<unknown>): Promise<APIError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(Anthropic.APIError);
    return err as APIError;
  }
  throw new Error('expected the request to fail');
}

/** The `{type, message}` inside the real error envelope. */
const inner = (err: APIError) => (err.error as { error: { type: string; message: string } }).error;

const create = (body: Record<string, unknown>) =>
  client.messages.create({ model: MODEL, max_tokens: 256, ...body } as Anthropic.MessageCreateParamsNonStreaming);

const user = (content: unknown) => ({ role: 'user', content });
const assistant = (content: unknown) => ({ role: 'assistant', content });
const toolUse = (id: string, name = 'read') => ({ type: 'tool_use', id, name, input: {} });
const toolResult = (id: string, content = 'ok') => ({ type: 'tool_result', tool_use_id: id, content });

describe('successful replies', () => {
  it('answers a text step with a real Message shape and marks itself scripted', async () => {
    await boot({ script: [say('hello there')] });
    const body = { model: MODEL, max_tokens: 256, messages: [{ role: 'user' as const, content: 'hi' }] };
    const { data, response } = await client.messages.create(body).withResponse();

    expect(data).toMatchObject({
      id: 'msg_fake_1',
      type: 'message',
      role: 'assistant',
      model: MODEL,
      content: [{ type: 'text', text: 'hello there' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: server.countTokens(body), cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    });
    expect(data.usage.output_tokens).toBe(2);
    expect(response.headers.get('x-fake-anthropic')).toBe('scripted');
    expect(response.headers.get('request-id')).toMatch(/^req_/);
    expect(server.remaining()).toBe(0);
  });

  it('honours stopReason and usage overrides', async () => {
    await boot({ script: [say('cut', { stopReason: 'max_tokens', usage: { input_tokens: 7, output_tokens: 99 } })] });
    const msg = await create({ messages: [user('hi')] });
    expect(msg.stop_reason).toBe('max_tokens');
    expect(msg.usage.input_tokens).toBe(7);
    expect(msg.usage.output_tokens).toBe(99);
  });

  it('answers tool_use, then accepts a well-formed tool_result follow-up', async () => {
    await boot({
      script: [
        { kind: 'tool_use', text: 'Reading both.', calls: [{ name: 'read', input: { path: 'a.txt' } }, { name: 'read', input: { path: 'b.txt' }, id: 'toolu_mine' }] },
        say('done'),
      ],
    });
    const tools = [{ name: 'read', description: 'read a file', input_schema: { type: 'object' as const, properties: { path: { type: 'string' } } } }];
    const first = await create({ tools, messages: [user('read a and b')] });

    expect(first.stop_reason).toBe('tool_use');
    expect(first.content.map((b) => b.type)).toEqual(['text', 'tool_use', 'tool_use']);
    const uses = first.content.filter((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use');
    expect(uses.map((u) => u.id)).toEqual(['toolu_fake_1', 'toolu_mine']);
    expect(uses[0].input).toEqual({ path: 'a.txt' });

    // The assistant turn is sent back verbatim, as a real agent loop does.
    const second = await create({
      tools,
      messages: [user('read a and b'), assistant(first.content), user(uses.map((u) => toolResult(u.id, `contents of ${u.id}`)))],
    });
    expect(second.content).toMatchObject([{ type: 'text', text: 'done' }]);
    expect(server.messageRequests()).toHaveLength(2);
  });

  it('callTools builds a tool_use step', async () => {
    await boot({ script: [callTools({ name: 'ls', input: {} })] });
    const msg = await create({ messages: [user('list')] });
    expect(msg.content).toMatchObject([{ type: 'tool_use', name: 'ls', input: {} }]);
  });
});

describe('scripted replies the SDK must handle', () => {
  it('a tool_use cut off by max_tokens, with partial input', async () => {
    await boot({ script: [reply({ content: ['Writing.', { name: 'write', input: { path: 'a.txt' }, id: 'toolu_cut' }], stopReason: 'max_tokens' })] });
    const msg = await create({ messages: [user('write it')] });
    expect(msg.stop_reason).toBe('max_tokens');
    expect(msg.content).toMatchObject([{ type: 'text', text: 'Writing.' }, { type: 'tool_use', id: 'toolu_cut', name: 'write', input: { path: 'a.txt' } }]);
  });

  it('an empty reply with end_turn', async () => {
    await boot({ script: [reply({ content: [] })] });
    const msg = await create({ messages: [user('a')] });
    expect(msg.content).toEqual([]);
    expect(msg.stop_reason).toBe('end_turn');
  });

  it.each(['refusal', 'pause_turn', 'model_context_window_exceeded'] as const)('stop_reason %s', async (stopReason) => {
    await boot({ script: [say('partial', { stopReason })] });
    expect((await create({ messages: [user('a')] })).stop_reason).toBe(stopReason);
  });

  it('a whitespace-only text reply, which the API then refuses to take back', async () => {
    await boot({ script: [say('\n\n'), say('never')] });
    const msg = await create({ messages: [user('a')] });
    expect(msg.content).toMatchObject([{ type: 'text', text: '\n\n' }]);
    const err = await apiError(create({ messages: [user('a'), assistant(msg.content), user('b')] }));
    expect(inner(err).message).toBe('messages: text content blocks must contain non-whitespace text');
  });

  it('retry-after-ms is sent when scripted', async () => {
    await boot({ script: [fail(429, { retryAfterMs: 1500 })] });
    const err = await apiError(create({ messages: [user('a')] }));
    expect(err.headers?.get('retry-after-ms')).toBe('1500');
  });
});

describe('request validation (400 invalid_request_error, no step consumed)', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['first message from the assistant', { messages: [assistant('hi'), user('a')] }, 'messages: first message must use the "user" role'],
    [
      'orphan tool_result',
      { messages: [user([toolResult('toolu_x')])] },
      'messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_x. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
    ],
    [
      'tool_result answering the wrong id',
      { messages: [user('go'), assistant([toolUse('toolu_a')]), user([toolResult('toolu_a'), toolResult('toolu_b')])] },
      'messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_b. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
    ],
    [
      'missing tool_result',
      { messages: [user('go'), assistant([{ type: 'text', text: 'ok' }, toolUse('toolu_a'), toolUse('toolu_b')]), user([toolResult('toolu_a')])] },
      'messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_b. Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
    ],
    [
      'tool_result placed after text (only leading tool_results count)',
      { messages: [user('go'), assistant([toolUse('toolu_a')]), user([{ type: 'text', text: 'here' }, toolResult('toolu_a')])] },
      'messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_a. Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
    ],
    ['missing max_tokens', { max_tokens: undefined, messages: [user('a')] }, 'max_tokens: Field required'],
    // Rules the real API enforces that the fake used to let through (sources in fake-anthropic.ts).
    ['whitespace-only text (as a model reply resent)', { messages: [user('a'), assistant([{ type: 'text', text: '\n\n' }]), user('b')] }, 'messages: text content blocks must contain non-whitespace text'],
    ['whitespace-only string content', { messages: [user('  \n')] }, 'messages: text content blocks must contain non-whitespace text'],
    ['empty assistant text block', { messages: [user('a'), assistant([{ type: 'text', text: '' }]), user('b')] }, 'messages: text content blocks must be non-empty'],
    [
      'an assistant message with empty content that is not the last',
      { messages: [user('a'), assistant([]), user('b')] },
      'messages.1: all messages must have non-empty content except for the optional final assistant message',
    ],
    ['final assistant prefill ending in whitespace', { messages: [user('a'), assistant('Sure, ')] }, 'messages: final assistant content cannot end with trailing whitespace'],
    ['tool_use without input', { messages: [user('a'), assistant([{ type: 'tool_use', id: 't1', name: 'read' }]), user([toolResult('t1')])] }, 'messages.1.content.0.tool_use.input: Field required'],
    [
      'tool_use input that is not an object',
      { messages: [user('a'), assistant([{ type: 'tool_use', id: 't1', name: 'read', input: '{"path":' }]), user([toolResult('t1')])] },
      'messages.1.content.0.tool_use.input: Input should be a valid dictionary',
    ],
    [
      'tool_result content that is an object',
      { messages: [user('a'), assistant([toolUse('t1')]), user([{ type: 'tool_result', tool_use_id: 't1', content: { text: 'x' } }])] },
      'messages.2.content.0.tool_result.content: Input should be a valid list',
    ],
    [
      'whitespace text inside a tool_result list',
      { messages: [user('a'), assistant([toolUse('t1')]), user([{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: ' ' }] }])] },
      'messages: text content blocks must contain non-whitespace text',
    ],
    ['unknown field on a text block', { messages: [user([{ type: 'text', text: 'hi', index: 0 }])] }, 'messages.0.content.0.text.index: Extra inputs are not permitted'],
    [
      'unknown field on a tool_use block',
      { messages: [user('a'), assistant([{ ...toolUse('t1'), text: 'x' }]), user([toolResult('t1')])] },
      'messages.1.content.0.tool_use.text: Extra inputs are not permitted',
    ],
    ['unknown field on a message', { messages: [{ role: 'user', content: 'a', name: 'bob' }] }, 'messages.0.name: Extra inputs are not permitted'],
    [
      'duplicate tool_use ids',
      { messages: [user('a'), assistant([toolUse('t1')]), user([toolResult('t1')]), assistant([toolUse('t1')]), user([toolResult('t1')])] },
      'messages.3.content.0: `tool_use` ids must be unique',
    ],
    [
      'tool_result not immediately after its tool_use',
      { messages: [user('a'), assistant([toolUse('t1')]), user('wait'), assistant('ok'), user([toolResult('t1')])] },
      'messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: t1. Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
    ],
    [
      'tool_choice naming a tool that is not in tools',
      { tools: [{ name: 'read', input_schema: { type: 'object' } }], tool_choice: { type: 'tool', name: 'write' }, messages: [user('a')] },
      "tool_choice: tool 'write' was not found in `tools`",
    ],
    ['zero max_tokens', { max_tokens: 0, messages: [user('a')] }, 'max_tokens: Input should be greater than or equal to 1'],
    ['empty messages', { messages: [] }, 'messages: at least one message is required'],
    ['empty model', { model: '', messages: [user('a')] }, 'model: String should have at least 1 character'],
    ['empty text block', { messages: [user([{ type: 'text', text: '' }])] }, 'messages: text content blocks must be non-empty'],
    [
      'unknown block type',
      { messages: [user([{ type: 'video', data: 'x' }])] },
      "messages.0.content.0: Input tag 'video' found using 'type' does not match any of the expected tags: 'text', 'image', 'document', 'tool_use', 'tool_result', 'thinking', 'redacted_thinking'",
    ],
    [
      'duplicate tool names',
      { tools: [{ name: 't', input_schema: { type: 'object' } }, { name: 't', input_schema: { type: 'object' } }], messages: [user('a')] },
      'tools: Tool names must be unique.',
    ],
    [
      'non-object input_schema',
      { tools: [{ name: 't', input_schema: { type: 'array' } }], messages: [user('a')] },
      "tools.0.input_schema.type: Input should be 'object'",
    ],
  ];

  it.each(cases)('%s', async (_name, body, message) => {
    await boot({ script: [say('never played')] });
    const err = await apiError(create(body));
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(err.status).toBe(400);
    expect(inner(err)).toEqual({ type: 'invalid_request_error', message });
    expect(err.requestID).toMatch(/^req_/);
    expect(server.remaining()).toBe(1);
    expect(server.messageRequests()).toHaveLength(0);
    expect(server.requests).toHaveLength(1);
  });

  it('merges consecutive same-role messages, as the API does, and pairs tool results across the merge', async () => {
    await boot({ script: [say('ok'), say('ok')] });
    expect((await create({ messages: [user('a'), user('b')] })).content).toMatchObject([{ text: 'ok' }]);
    // [tool_result] + [text] in two user messages is one user turn that starts with the result.
    await create({ messages: [user('a'), assistant([toolUse('t1')]), user([toolResult('t1')]), user('and then')] });
    expect(server.messageRequests()).toHaveLength(2);
  });

  it('accepts an empty final assistant message (prefill)', async () => {
    await boot({ script: [say('ok')] });
    await create({ messages: [user('a'), assistant([])] });
    expect(server.messageRequests()).toHaveLength(1);
  });

  it('rejects input + max_tokens over the window for models that require it, with the real message', async () => {
    await boot({ contextWindow: 100, models: { 'claude-old': { maxInputTokens: 100, maxTokensMustFit: true } }, script: [say('ok'), say('ok')] });
    const body = { model: 'claude-old', max_tokens: 95, messages: [{ role: 'user' as const, content: 'one two three' }] };
    const n = server.countTokens(body);
    const err = await apiError(client.messages.create(body));
    expect(inner(err)).toEqual({
      type: 'invalid_request_error',
      message: `input length and \`max_tokens\` exceed context limit: ${n} + 95 > 100, decrease input length or \`max_tokens\` and try again`,
    });
    expect((await client.messages.create({ ...body, max_tokens: 100 - n })).content).toMatchObject([{ text: 'ok' }]);
    // Models without the rule take any max_tokens up to their output cap (they stop at the window).
    expect((await create({ max_tokens: 20_000, messages: [user('a')] })).content).toMatchObject([{ text: 'ok' }]);
  });

  it('validateMessagesRequest is exported and accepts what the server accepts', () => {
    expect(validateMessagesRequest({ model: MODEL, max_tokens: 5, messages: [user('a')] })).toBeUndefined();
    expect(validateMessagesRequest({ model: MODEL, max_tokens: 5, messages: [user('a'), assistant([{ type: 'text', text: ' ' }]), user('b')] })).toBe(
      'messages: text content blocks must contain non-whitespace text',
    );
  });

  it('streams a step as the API does: every event in order, the final message equal to the non-streaming one', async () => {
    await boot({ script: [say('Hello streaming world'), say('Hello streaming world')] });
    const params = { model: MODEL, max_tokens: 50, messages: [{ role: 'user' as const, content: 'a' }] };
    const stream = client.messages.stream(params);
    const types: string[] = [];
    let text = '';
    for await (const ev of stream) {
      types.push(ev.type);
      if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') text += ev.delta.text;
    }
    const streamed = await stream.finalMessage();
    const plain = await client.messages.create(params);
    expect(text).toBe('Hello streaming world');
    expect(types[0]).toBe('message_start');
    expect(types.slice(-2)).toEqual(['message_delta', 'message_stop']);
    expect(types.filter((t) => t === 'content_block_delta').length).toBe(3); // 8-character deltas
    expect(streamed.content).toEqual(plain.content);
    expect(streamed.stop_reason).toBe('end_turn');
    expect(streamed.usage.output_tokens).toBe(plain.usage.output_tokens);
    expect(streamed.usage.input_tokens).toBe(plain.usage.input_tokens);
  });

  it('streams thinking with its signature_delta and tool_use input as input_json_delta', async () => {
    await boot({ script: [callTools(think('Look at the file first.'), { name: 'read', input: { path: 'notes/a.txt' }, id: 'toolu_1' })] });
    const stream = client.messages.stream({
      model: MODEL,
      max_tokens: 3000,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      tools: [{ name: 'read', input_schema: { type: 'object', properties: { path: { type: 'string' } } } }],
      messages: [{ role: 'user', content: 'a' }],
    });
    const deltas: string[] = [];
    let json = '';
    for await (const ev of stream) {
      if (ev.type === 'content_block_delta') {
        deltas.push(ev.delta.type);
        if (ev.delta.type === 'input_json_delta') json += ev.delta.partial_json;
      }
    }
    const final = await stream.finalMessage();
    expect(deltas).toContain('thinking_delta');
    expect(deltas).toContain('signature_delta');
    expect(deltas.filter((d) => d === 'input_json_delta').length).toBeGreaterThan(1);
    expect(JSON.parse(json)).toEqual({ path: 'notes/a.txt' });
    expect(final.content[0]).toMatchObject({ type: 'thinking', thinking: 'Look at the file first.', signature: signThinking('Look at the file first.') });
    expect(final.content[1]).toMatchObject({ type: 'tool_use', id: 'toolu_1', name: 'read', input: { path: 'notes/a.txt' } });
    expect(final.stop_reason).toBe('tool_use');
  });

  it('ends a stream with an overloaded_error event mid-stream, which the SDK throws as an overloaded APIError', async () => {
    await boot({ script: [say('this reply is cut off after two deltas', { stream: { errorAfterDeltas: 2 } })] });
    const stream = client.messages.stream({ model: MODEL, max_tokens: 50, messages: [{ role: 'user', content: 'a' }] });
    let text = '';
    const err = await apiError(
      (async () => {
        for await (const ev of stream) if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') text += ev.delta.text;
      })(),
    );
    expect(text).toBe('this reply is cut'.slice(0, 16));
    expect((err.error as { error?: { type?: string } }).error?.type).toBe('overloaded_error');
  });

  it('pauses a stream at a gate until the test releases it', async () => {
    await boot({ script: [say('first part, then the rest', { stream: { pauseAfterDeltas: 1, gate: 'g' } })] });
    const stream = client.messages.stream({ model: MODEL, max_tokens: 50, messages: [{ role: 'user', content: 'a' }] });
    let text = '';
    const done = (async () => {
      for await (const ev of stream) if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') text += ev.delta.text;
    })();
    await server.paused('g');
    expect(text.length).toBeLessThanOrEqual(8);
    server.release('g');
    await done;
    expect(text).toBe('first part, then the rest');
  });

  it('rejects a prompt over the window with the real message, counted by countTokens', async () => {
    await boot({ contextWindow: 50, models: { 'claude-small': { maxInputTokens: 20 } }, script: [say('ok')] });
    const long = { model: MODEL, max_tokens: 10, messages: [{ role: 'user' as const, content: 'word '.repeat(60) }] };
    const n = server.countTokens(long);
    expect(n).toBeGreaterThan(50);
    const err = await apiError(client.messages.create(long));
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(inner(err)).toEqual({ type: 'invalid_request_error', message: `prompt is too long: ${n} tokens > 50 maximum` });

    // A per-model window takes precedence over the default one.
    const mid = { ...long, model: 'claude-small', messages: [{ role: 'user' as const, content: 'word '.repeat(30) }] };
    const m = server.countTokens(mid);
    expect(m).toBeLessThanOrEqual(50);
    expect(inner(await apiError(client.messages.create(mid))).message).toBe(`prompt is too long: ${m} tokens > 20 maximum`);
    expect(server.remaining()).toBe(1);

    // Within the window it goes through.
    expect((await create({ messages: [user('short')] })).content).toMatchObject([{ text: 'ok' }]);
  });
});

describe('scripted errors', () => {
  it('429 is a RateLimitError with retry-after visible on the headers', async () => {
    await boot({ script: [fail(429, { retryAfterSeconds: 7 })] });
    const err = await apiError(create({ messages: [user('a')] }));
    expect(err).toBeInstanceOf(Anthropic.RateLimitError);
    expect(err.status).toBe(429);
    expect(err.headers?.get('retry-after')).toBe('7');
    expect(inner(err).type).toBe('rate_limit_error');
  });

  it('529 is an InternalServerError with overloaded_error', async () => {
    await boot({ script: [fail(529)] });
    const err = await apiError(create({ messages: [user('a')] }));
    expect(err).toBeInstanceOf(Anthropic.InternalServerError);
    expect(err.status).toBe(529);
    expect(err.error).toMatchObject({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
  });

  it('500 is an InternalServerError with api_error', async () => {
    await boot({ script: [fail(500, { message: 'boom' })] });
    const err = await apiError(create({ messages: [user('a')] }));
    expect(err).toBeInstanceOf(Anthropic.InternalServerError);
    expect(err.status).toBe(500);
    expect(inner(err)).toEqual({ type: 'api_error', message: 'boom' });
  });

  it.each([
    [401, Anthropic.AuthenticationError, 'authentication_error'],
    [403, Anthropic.PermissionDeniedError, 'permission_error'],
    [404, Anthropic.NotFoundError, 'not_found_error'],
    [413, Anthropic.ContentTooLargeError, 'request_too_large'],
    [400, Anthropic.BadRequestError, 'invalid_request_error'],
  ] as const)('%d maps to its error class and type', async (status, cls, type) => {
    await boot({ script: [fail(status)] });
    const err = await apiError(create({ messages: [user('a')] }));
    expect(err).toBeInstanceOf(cls);
    expect(inner(err).type).toBe(type);
  });

  it('a wrong API key is a 401 authentication_error', async () => {
    await boot({ apiKey: 'secret', script: [say('never')] });
    const err = await apiError(create({ messages: [user('a')] }));
    expect(err).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(inner(err)).toEqual({ type: 'authentication_error', message: 'invalid x-api-key' });

    const ok = new Anthropic({ apiKey: 'secret', baseURL: server.url, maxRetries: 0 });
    expect((await ok.messages.create({ model: MODEL, max_tokens: 5, messages: [{ role: 'user', content: 'a' }] })).content).toMatchObject([{ text: 'never' }]);
  });

  it('a request without any key is a 401', async () => {
    await boot();
    const res = await fetch(`${server.url}/v1/models`, { headers: { 'anthropic-version': '2023-06-01' } });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error', message: 'x-api-key header is required' } });
  });

  it('fails loudly and non-retryably when the script is exhausted', async () => {
    await boot({ script: [say('one')] });
    await create({ messages: [user('a')] });
    const err = await apiError(create({ messages: [user('b')] }));
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(inner(err).message).toBe('fake-anthropic: script exhausted at request #2 (scripted server, not a model)');
    expect(err.headers?.get('x-should-retry')).toBe('false');
  });
});

describe('keepRequests', () => {
  it('keeps only the newest requests, while the fake still counts every one', async () => {
    await boot({ script: [say('one'), say('two'), say('three')], keepRequests: 1 });
    await create({ messages: [user('a')] });
    await create({ messages: [user('b')] });
    await create({ messages: [user('c')] });
    expect(server.requests.map((r) => r.body.messages[0].content)).toEqual(['c']);
    expect(server.messageRequests().map((r) => r.body.messages[0].content)).toEqual(['c']);
    const err = await apiError(create({ messages: [user('d')] }));
    expect(inner(err).message).toBe('fake-anthropic: script exhausted at request #4 (scripted server, not a model)');
  });

  it('keeps none with 0, and refuses a count that is not a non-negative integer', async () => {
    await boot({ script: [say('one')], keepRequests: 0 });
    await create({ messages: [user('a')] });
    expect(server.requests).toEqual([]);
    await expect(FakeAnthropicServer.start({ keepRequests: -1 })).rejects.toThrow('keepRequests must be a non-negative integer, got -1');
    await expect(FakeAnthropicServer.start({ keepRequests: 1.5 })).rejects.toThrow('keepRequests must be a non-negative integer, got 1.5');
  });
});

describe('models and token counting endpoints', () => {
  it('models.retrieve returns the configured window, and a default for any other id', async () => {
    await boot({ contextWindow: 123_456, models: { 'claude-tiny': { maxInputTokens: 4096, maxTokens: 1024, displayName: 'Tiny' } } });
    const tiny = await client.models.retrieve('claude-tiny');
    expect(tiny).toMatchObject({ type: 'model', id: 'claude-tiny', display_name: 'Tiny', max_input_tokens: 4096, max_tokens: 1024 });
    const other = await client.models.retrieve('claude-anything');
    expect(other).toMatchObject({ id: 'claude-anything', display_name: 'Scripted fake (claude-anything)', max_input_tokens: 123_456 });

    const page = await client.models.list();
    expect(page.data.map((m) => m.id)).toEqual(['claude-tiny']);
  });

  it('max_tokens above the model limit is rejected', async () => {
    await boot({ models: { 'claude-tiny': { maxInputTokens: 4096, maxTokens: 1024 } }, script: [say('x')] });
    const err = await apiError(create({ model: 'claude-tiny', max_tokens: 2000, messages: [user('a')] }));
    expect(inner(err).message).toBe('max_tokens: 2000 > 1024, which is the maximum allowed number of output tokens for claude-tiny');
  });

  it('count_tokens returns the same count the server uses', async () => {
    await boot();
    const body = { model: MODEL, system: 'be brief', messages: [{ role: 'user' as const, content: 'how many tokens is this?' }] };
    const { input_tokens } = await client.messages.countTokens(body);
    expect(input_tokens).toBe(server.countTokens(body));
    expect(input_tokens).toBe(countFakeTokens(body));
  });
});

describe('routing and recording', () => {
  it('route takes precedence over the queue; undefined falls through to it', async () => {
    await boot({
      script: [say('from the queue')],
      route: (req) => (typeof req.body.system === 'string' && req.body.system.includes('summarise') ? say('a summary') : undefined),
    });
    const summary = await create({ system: 'Please summarise.', messages: [user('long history')] });
    expect(summary.content).toMatchObject([{ text: 'a summary' }]);
    expect(server.remaining()).toBe(1);

    const normal = await create({ messages: [user('carry on')] });
    expect(normal.content).toMatchObject([{ text: 'from the queue' }]);

    server.setRoute(() => say('always'));
    server.enqueue(say('queued'));
    expect((await create({ messages: [user('x')] })).content).toMatchObject([{ text: 'always' }]);
    expect(server.remaining()).toBe(1);
    server.setRoute(undefined);
    expect((await create({ messages: [user('x')] })).content).toMatchObject([{ text: 'queued' }]);
  });

  it('records every request with headers, parsed body and counted tokens', async () => {
    await boot({ script: [say('ok')] });
    const messages = [{ role: 'user' as const, content: 'remember me' }];
    await client.messages.create({ model: MODEL, max_tokens: 42, messages });
    await apiError(create({ messages: [assistant('bad first')] }));

    expect(server.requests).toHaveLength(2);
    const [good, bad] = server.requests;
    expect(good).toMatchObject({ method: 'POST', path: '/v1/messages', body: { model: MODEL, max_tokens: 42, messages } });
    // SDK 1.x sends the key as `authorization: Bearer …`; older clients (and curl users) send `x-api-key`.
    expect(good.headers['authorization'] ?? `Bearer ${good.headers['x-api-key']}`).toBe('Bearer test');
    expect(good.headers['anthropic-version']).toBeDefined();
    expect(good.headers['content-type']).toMatch(/application\/json/);
    expect(good.inputTokens).toBe(server.countTokens(good.body));
    expect(typeof good.at).toBe('number');
    expect(bad.body.messages[0].role).toBe('assistant');

    // Only the valid request counts as a message request.
    expect(server.messageRequests()).toEqual([good]);
  });
});

describe('token counting', () => {
  it('is deterministic and follows the specified rule', () => {
    const body = { system: 'Hi', tools: [{ name: 'a', input_schema: { type: 'object' } }], messages: [{ role: 'user', content: 'abcdefgh 1234' }] };
    expect(countFakeTokens(body)).toBe(countFakeTokens(JSON.parse(JSON.stringify(body))));
    // system `"Hi"` = 3; tools JSON = 27 + 8 per tool; message `"abcdefgh 1234"` = 6 (`"`,abcdef,gh,123,4,`"`) + 4.
    const toolsJson = JSON.stringify(body.tools);
    const toolTokens = toolsJson.match(/[A-Za-z]{1,6}|[0-9]{1,3}|[^\sA-Za-z0-9]/g)!.length;
    expect(countFakeTokens(body)).toBe(3 + toolTokens + 8 + 6 + 4);
  });

  it('counts base64 far more densely than prose of the same length, and is not chars/4', () => {
    const base64 = Buffer.from(Array.from({ length: 6000 }, (_, i) => (i * 37 + 11) % 256)).toString('base64');
    const prose = 'The quick brown fox jumps over the lazy dog while the agent reads a file. '.repeat(200).slice(0, base64.length);
    const tokens = (content: string) => countFakeTokens({ messages: [{ role: 'user', content }] });

    expect(tokens(base64)).toBeGreaterThan(1.5 * tokens(prose));
    expect(tokens(base64)).not.toBe(Math.ceil(base64.length / 4));
    expect(tokens(prose)).not.toBe(Math.ceil(prose.length / 4));
  });
});
