/**
 * Claude features in the fake Anthropic server (prompt caching, extended thinking, context management,
 * compaction, token counting, model capabilities), driven by the REAL @anthropic-ai/sdk client over HTTP.
 */
import Anthropic, { APIError } from '@anthropic-ai/sdk';
import {
  CLEARED_TOOL_RESULT,
  FakeAnthropicServer,
  callTools,
  redactedThinking,
  reply,
  say,
  think,
  type FakeAnthropicOptions,
} from '../../src/testing/anthropic/fake-anthropic';

const MODEL = 'claude-fake-1';
const CM_BETA = 'context-management-2025-06-27';
const COMPACT_BETA = 'compact-2026-01-12';

let server: FakeAnthropicServer;
let client: Anthropic;

async function boot(opts: FakeAnthropicOptions = {}): Promise<void> {
  server = await FakeAnthropicServer.start(opts);
  client = new Anthropic({ apiKey: 'test', baseURL: server.url, maxRetries: 0 });
}

afterEach(async () => {
  await server?.stop();
});

async function apiError(p: Promise<unknown>): Promise<APIError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(Anthropic.APIError);
    return err as APIError;
  }
  throw new Error('expected the request to fail');
}
const inner = (err: APIError) => (err.error as { error: { type: string; message: string } }).error;
async function rejectsWith(p: Promise<unknown>, message: string | RegExp): Promise<void> {
  const err = await apiError(p);
  expect(err.status).toBe(400);
  expect(inner(err).type).toBe('invalid_request_error');
  if (typeof message === 'string') expect(inner(err).message).toBe(message);
  else expect(inner(err).message).toMatch(message);
}

const create = (body: Record<string, unknown>) =>
  client.messages.create({ model: MODEL, max_tokens: 256, ...body } as Anthropic.MessageCreateParamsNonStreaming);
const createBeta = (betas: string[], body: Record<string, unknown>) =>
  client.beta.messages.create({ model: MODEL, max_tokens: 256, betas, ...body } as any) as Promise<any>;

const user = (content: unknown) => ({ role: 'user', content });
const assistant = (content: unknown) => ({ role: 'assistant', content });
const eph = (ttl?: '5m' | '1h') => (ttl ? { type: 'ephemeral', ttl } : { type: 'ephemeral' });
/** A text of about `n` fake tokens (one per word). */
const words = (n: number, seed = 'alpha') => Array.from({ length: n }, (_, i) => `${seed}${String.fromCharCode(97 + (i % 26))}`).join(' ');

describe('prompt caching: cache_control rules', () => {
  it('accepts breakpoints on tools, system blocks and message blocks (including tool_result content)', async () => {
    await boot({ script: [say('ok')] });
    const msg = await create({
      tools: [{ name: 'read', input_schema: { type: 'object' }, cache_control: eph('1h') }],
      system: [{ type: 'text', text: 'You are terse.', cache_control: eph('1h') }],
      messages: [
        user([{ type: 'text', text: 'read a', cache_control: eph() }]),
        assistant([{ type: 'tool_use', id: 't1', name: 'read', input: {} }]),
        user([{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'x', cache_control: eph() }] }]),
      ],
    });
    expect(msg.content).toEqual([{ type: 'text', text: 'ok', citations: null }]);
  });

  it('rejects a fifth breakpoint with the API message (the top-level automatic one counts)', async () => {
    await boot();
    const blocks = Array.from({ length: 5 }, (_, i) => ({ type: 'text', text: `b${i}`, cache_control: eph() }));
    await rejectsWith(create({ messages: [user(blocks)] }), 'A maximum of 4 blocks with cache_control may be provided. Found 5.');
    await rejectsWith(
      create({ cache_control: eph(), messages: [user(blocks.slice(0, 4))] }),
      'A maximum of 4 blocks with cache_control may be provided. Found 5.',
    );
  });

  it('rejects a 1h breakpoint after a 5m one, in tools → system → messages order', async () => {
    await boot();
    await rejectsWith(
      create({
        tools: [{ name: 'read', input_schema: { type: 'object' }, cache_control: eph() }],
        system: [{ type: 'text', text: 'sys', cache_control: eph('1h') }],
        messages: [user('hi')],
      }),
      "system.0.cache_control.ttl: a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. Note that blocks are processed in the following order: `tools`, `system`, `messages`.",
    );
  });

  it('rejects cache_control on an empty text block, on a thinking block, and a bad type or ttl', async () => {
    await boot();
    await rejectsWith(
      create({ messages: [user([{ type: 'text', text: 'a' }, { type: 'text', text: '', cache_control: eph() }])] }),
      'messages.0.content.1.text: cache_control cannot be set for empty text blocks',
    );
    const sig = (await bootThinkingTurn()).signature;
    await rejectsWith(
      create({
        thinking: { type: 'enabled', budget_tokens: 1024 },
        max_tokens: 2048,
        messages: [user('q'), assistant([{ type: 'thinking', thinking: 'plan', signature: sig, cache_control: eph() }, { type: 'text', text: 'a' }]), user('more')],
      }),
      'messages.1.content.0.thinking.cache_control: Extra inputs are not permitted',
    );
    await rejectsWith(create({ messages: [user([{ type: 'text', text: 'a', cache_control: { type: 'persistent' } }])] }), "messages.0.content.0.cache_control.type: Input should be 'ephemeral'");
    await rejectsWith(create({ messages: [user([{ type: 'text', text: 'a', cache_control: { type: 'ephemeral', ttl: '2h' } }])] }), "messages.0.content.0.cache_control.ttl: Input should be '5m' or '1h'");
  });

  /** A thinking block as the fake signs it (the fake's signature is deterministic per text). */
  async function bootThinkingTurn(): Promise<{ signature: string }> {
    server.enqueue(say('x', { thinking: 'plan' }));
    const m = await create({ thinking: { type: 'enabled', budget_tokens: 1024 }, max_tokens: 2048, messages: [user('q')] });
    return { signature: (m.content[0] as Anthropic.ThinkingBlock).signature };
  }
});

describe('prompt caching: the simulated cache', () => {
  const system = (ttl?: '5m' | '1h') => [{ type: 'text', text: words(1500), cache_control: eph(ttl) }];

  it('misses and writes, reads within the TTL (refreshing it), and misses after the TTL', async () => {
    await boot({ script: [say('1'), say('2'), say('3'), say('4')] });
    const body = { system: system(), messages: [user('question one')] };

    const first = await create(body);
    const prefix = first.usage.cache_creation_input_tokens!;
    expect(prefix).toBeGreaterThanOrEqual(1500);
    expect(first.usage.cache_read_input_tokens).toBe(0);
    expect(first.usage.cache_creation).toEqual({ ephemeral_5m_input_tokens: prefix, ephemeral_1h_input_tokens: 0 });
    const total = server.countTokens(body as any);
    expect(first.usage.input_tokens + prefix).toBe(total);

    server.advanceTime(4 * 60_000);
    const second = await create({ ...body, messages: [user('a different question')] });
    expect(second.usage.cache_read_input_tokens).toBe(prefix);
    expect(second.usage.cache_creation_input_tokens).toBe(0);

    server.advanceTime(4 * 60_000); // 8 minutes after the write, 4 after the refreshing read
    const third = await create(body);
    expect(third.usage.cache_read_input_tokens).toBe(prefix);

    server.advanceTime(5 * 60_000 + 1);
    const fourth = await create(body);
    expect(fourth.usage.cache_read_input_tokens).toBe(0);
    expect(fourth.usage.cache_creation_input_tokens).toBe(prefix);
  });

  it('1h entries outlive 5m ones; the tail breakpoint reads the longest cached prefix', async () => {
    await boot({ script: [say('1'), say('2'), say('3')] });
    const convo = [user(words(10, 'q')), assistant('answer'), user([{ type: 'text', text: words(10, 'r'), cache_control: eph() }])];
    const first = await create({ system: system('1h'), messages: convo });
    expect(first.usage.cache_creation!.ephemeral_1h_input_tokens).toBeGreaterThan(1500);
    expect(first.usage.cache_creation!.ephemeral_5m_input_tokens).toBeGreaterThan(0);

    const again = await create({ system: system('1h'), messages: convo });
    expect(again.usage.cache_read_input_tokens).toBe(first.usage.cache_creation_input_tokens);

    server.advanceTime(10 * 60_000);
    const later = await create({ system: system('1h'), messages: convo });
    expect(later.usage.cache_read_input_tokens).toBe(first.usage.cache_creation!.ephemeral_1h_input_tokens);
    expect(later.usage.cache_creation!.ephemeral_5m_input_tokens).toBe(first.usage.cache_creation!.ephemeral_5m_input_tokens);
  });

  it('does not cache a prefix below the model minimum (1024 by default, per model when set)', async () => {
    await boot({ script: [say('1'), say('2'), say('3')], models: { 'claude-haiku-4-5': { maxInputTokens: 200_000, minCacheableTokens: 4096 } } });
    const small = { system: [{ type: 'text', text: words(900), cache_control: eph() }], messages: [user('q')] };
    const r = await create(small);
    expect(r.usage.cache_creation_input_tokens).toBe(0);
    expect(r.usage.input_tokens).toBe(server.countTokens(small as any));
    const haiku = await create({ model: 'claude-haiku-4-5', system: system(), messages: [user('q')] });
    expect(haiku.usage.cache_creation_input_tokens).toBe(0);
    const sonnet = await create({ system: system(), messages: [user('q')] });
    expect(sonnet.usage.cache_creation_input_tokens).toBeGreaterThan(1024);
  });

  it('automatic caching (top-level cache_control) caches up to the last block and grows with the conversation', async () => {
    await boot({ script: [say('1'), say('2')] });
    const turn1 = [user(words(1200))];
    const a = await create({ cache_control: eph(), messages: turn1 });
    expect(a.usage.cache_creation_input_tokens).toBe(server.countTokens({ messages: turn1 }));
    const turn2 = [...turn1, assistant('ok'), user('next')];
    const b = await create({ cache_control: eph(), messages: turn2 });
    expect(b.usage.cache_read_input_tokens).toBe(a.usage.cache_creation_input_tokens);
    expect(b.usage.cache_creation_input_tokens).toBeGreaterThan(0);
  });

  it('a changed prefix misses', async () => {
    await boot({ script: [say('1'), say('2')] });
    await create({ system: system(), messages: [user('q')] });
    const changed = await create({ system: [{ type: 'text', text: `Date: today. ${words(1500)}`, cache_control: eph() }], messages: [user('q')] });
    expect(changed.usage.cache_read_input_tokens).toBe(0);
  });
});

describe('extended thinking', () => {
  const THINK = { type: 'enabled', budget_tokens: 1024 };

  it('validates the thinking parameter and its incompatibilities with the API messages', async () => {
    await boot();
    await rejectsWith(create({ thinking: { type: 'enabled', budget_tokens: 512 }, messages: [user('q')] }), 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024');
    await rejectsWith(
      create({ thinking: THINK, max_tokens: 1024, messages: [user('q')] }),
      '`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size',
    );
    await rejectsWith(create({ thinking: THINK, max_tokens: 2048, temperature: 0.2, messages: [user('q')] }), /^`temperature` may only be set to 1 when thinking is enabled\./);
    await rejectsWith(create({ thinking: THINK, max_tokens: 2048, top_k: 5, messages: [user('q')] }), /^`top_k` must be unset when thinking is enabled\./);
    await rejectsWith(create({ thinking: { type: 'sometimes' }, messages: [user('q')] }), /^thinking: Input tag 'sometimes'/);
  });

  it('plays signed thinking blocks; a tool-use round trip sent back unmodified is accepted', async () => {
    await boot({ script: [callTools(think('I should read a.'), { name: 'read', input: { path: 'a' } }), say('done', { thinking: 'Read it.' })] });
    const tools = [{ name: 'read', input_schema: { type: 'object' as const } }];
    const first = await create({ thinking: THINK, max_tokens: 2048, tools, messages: [user('read a')] });
    expect(first.content[0]).toMatchObject({ type: 'thinking', thinking: 'I should read a.' });
    expect((first.content[0] as Anthropic.ThinkingBlock).signature).toMatch(/^fake_sig_/);
    const toolId = (first.content[1] as Anthropic.ToolUseBlock).id;
    const second = await create({
      thinking: THINK,
      max_tokens: 2048,
      tools,
      messages: [user('read a'), assistant(first.content), user([{ type: 'tool_result', tool_use_id: toolId, content: 'A' }])],
    });
    expect(second.content.map((b) => b.type)).toEqual(['thinking', 'text']);
    expect(second.usage.output_tokens).toBeGreaterThan(1);
  });

  it('rejects modified thinking text or signature, dropped thinking in a tool loop, and redacted data it did not issue', async () => {
    await boot({ script: [callTools(think('plan'), redactedThinking('hidden'), { name: 'read' })] });
    const tools = [{ name: 'read', input_schema: { type: 'object' as const } }];
    const first = await create({ thinking: THINK, max_tokens: 2048, tools, messages: [user('go')] });
    const [th, red, call] = first.content as [Anthropic.ThinkingBlock, Anthropic.RedactedThinkingBlock, Anthropic.ToolUseBlock];
    const loop = (content: unknown) => create({ thinking: THINK, max_tokens: 2048, tools, messages: [user('go'), assistant(content), user([{ type: 'tool_result', tool_use_id: call.id, content: 'x' }])] });

    await rejectsWith(loop([{ ...th, thinking: 'plan!' }, red, call]), 'messages.1.content.0: Invalid `signature` in `thinking` block');
    await rejectsWith(loop([{ ...th, signature: `${th.signature}x` }, red, call]), 'messages.1.content.0: Invalid `signature` in `thinking` block');
    await rejectsWith(loop([th, { ...red, data: 'forged' }, call]), /^messages\.1\.content\.1: Invalid `data`/);
    await rejectsWith(
      loop([call]),
      'messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking',
    );
    await rejectsWith(loop([call, th]), 'messages.1.content.0: If an assistant message contains any thinking blocks, the first block must be thinking or redacted_thinking. Found tool_use.');
  });

  it('with thinking disabled: earlier turns may keep thinking blocks, a final assistant message may not', async () => {
    await boot({ script: [say('a', { thinking: 'p' }), say('ok')] });
    const first = await create({ thinking: THINK, max_tokens: 2048, messages: [user('q')] });
    await expect(create({ messages: [user('q'), assistant(first.content), user('next')] })).resolves.toMatchObject({ content: [{ text: 'ok' }] });
    await rejectsWith(
      create({ messages: [user('q'), assistant(first.content)] }),
      'messages.1.content.0: When thinking is disabled, an `assistant` message in the final position cannot contain `thinking`. To use thinking blocks, enable `thinking` in your request.',
    );
  });

  it('a script that thinks when the request did not enable thinking fails loudly', async () => {
    await boot({ script: [say('a', { thinking: 'p' })] });
    const err = await apiError(create({ messages: [user('q')] }));
    expect(err.status).toBe(500);
    expect(inner(err).message).toMatch(/did not enable thinking/);
  });
});

describe('context management (beta)', () => {
  const tools = [
    { name: 'read', input_schema: { type: 'object' as const } },
    { name: 'test', input_schema: { type: 'object' as const } },
  ];
  /** A conversation of `n` read calls with large results, then a question. */
  const toolHeavy = (n: number, size = 300) => {
    const msgs: unknown[] = [user('start')];
    for (let i = 0; i < n; i++) {
      const name = i === 0 ? 'test' : 'read';
      msgs.push(assistant([{ type: 'tool_use', id: `t${i}`, name, input: { i } }]));
      msgs.push(user([{ type: 'tool_result', tool_use_id: `t${i}`, content: words(size, `r${i}`) }]));
    }
    return msgs;
  };

  it('needs the beta header (without it the field is unknown)', async () => {
    await boot();
    await rejectsWith(create({ context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] }, messages: [user('q')] }), 'context_management: Extra inputs are not permitted');
  });

  it('validates edit shapes', async () => {
    await boot();
    await rejectsWith(createBeta([CM_BETA], { context_management: { edits: [{ type: 'clear_everything' }] }, messages: [user('q')] }), /^context_management\.edits\.0: Input tag 'clear_everything'/);
    await rejectsWith(
      createBeta([CM_BETA], { context_management: { edits: [{ type: 'clear_tool_uses_20250919', keep: { type: 'input_tokens', value: 3 } }] }, messages: [user('q')] }),
      /^context_management\.edits\.0\.clear_tool_uses_20250919\.keep: Input tag 'input_tokens'/,
    );
    await rejectsWith(
      createBeta([CM_BETA], { context_management: { edits: [{ type: 'clear_tool_uses_20250919', keep_last: 3 }] }, messages: [user('q')] }),
      'context_management.edits.0.clear_tool_uses_20250919.keep_last: Extra inputs are not permitted',
    );
    await rejectsWith(createBeta([CM_BETA], { context_management: { edits: [{ type: 'clear_thinking_20251015' }] }, messages: [user('q')] }), /requires thinking to be enabled/);
    await rejectsWith(createBeta([CM_BETA], { context_management: { edits: [{ type: 'compact_20260112' }] }, messages: [user('q')] }), /requires the 'compact-2026-01-12' beta/);
  });

  it('clears the oldest tool results past the trigger, keeps the recent ones and excluded tools, and reports it', async () => {
    await boot({ script: [say('done')] });
    const messages = toolHeavy(6);
    const edit = { type: 'clear_tool_uses_20250919', trigger: { type: 'input_tokens', value: 1000 }, keep: { type: 'tool_uses', value: 2 }, exclude_tools: ['test'] };
    const msg = await createBeta([CM_BETA], { tools, context_management: { edits: [edit] }, messages });
    const full = server.countTokens({ tools, messages } as any);
    expect(msg.context_management.applied_edits).toEqual([{ type: 'clear_tool_uses_20250919', cleared_tool_uses: 3, cleared_input_tokens: expect.any(Number) }]);
    const cleared = msg.context_management.applied_edits[0].cleared_input_tokens;
    expect(cleared).toBeGreaterThan(800);
    expect(msg.usage.input_tokens).toBe(full - cleared);
    // The request as sent is recorded unchanged (the client's history is its own).
    expect(JSON.stringify(server.messageRequests()[0]!.body)).not.toContain(CLEARED_TOOL_RESULT);
  });

  it('does nothing below the trigger or when less than clear_at_least would be cleared', async () => {
    await boot({ script: [say('1'), say('2')] });
    const messages = toolHeavy(4, 20);
    const below = await createBeta([CM_BETA], { tools, context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] }, messages });
    expect(below.context_management).toEqual({ applied_edits: [] });
    const tooLittle = await createBeta([CM_BETA], {
      tools,
      context_management: { edits: [{ type: 'clear_tool_uses_20250919', trigger: { type: 'tool_uses', value: 2 }, keep: { type: 'tool_uses', value: 1 }, clear_at_least: { type: 'input_tokens', value: 5000 } }] },
      messages,
    });
    expect(tooLittle.context_management.applied_edits).toEqual([]);
  });

  it('clear_thinking keeps thinking only in the last N assistant turns', async () => {
    await boot({ script: [say('a', { thinking: words(50, 'p') }), say('b', { thinking: words(50, 'q') }), say('c')] });
    const THINK = { type: 'enabled', budget_tokens: 1024 };
    const a = await create({ thinking: THINK, max_tokens: 2048, messages: [user('1')] });
    const b = await create({ thinking: THINK, max_tokens: 2048, messages: [user('1'), assistant(a.content), user('2')] });
    const c = await createBeta([CM_BETA], {
      thinking: THINK,
      max_tokens: 2048,
      context_management: { edits: [{ type: 'clear_thinking_20251015', keep: { type: 'thinking_turns', value: 1 } }] },
      messages: [user('1'), assistant(a.content), user('2'), assistant(b.content), user('3')],
    });
    expect(c.context_management.applied_edits).toEqual([{ type: 'clear_thinking_20251015', cleared_thinking_turns: 1, cleared_input_tokens: expect.any(Number) }]);
    expect(c.context_management.applied_edits[0].cleared_input_tokens).toBeGreaterThan(50);
  });

  it('count_tokens accepts and rejects the same fields, and reports the count before edits', async () => {
    await boot();
    const messages = toolHeavy(6);
    const edit = { type: 'clear_tool_uses_20250919', trigger: { type: 'input_tokens', value: 1000 }, keep: { type: 'tool_uses', value: 1 } };
    const counted: any = await client.beta.messages.countTokens({ model: MODEL, betas: [CM_BETA], tools, context_management: { edits: [edit] }, messages } as any);
    expect(counted.context_management.original_input_tokens).toBe(server.countTokens({ tools, messages } as any));
    expect(counted.input_tokens).toBeLessThan(counted.context_management.original_input_tokens);
    // Same rejections as messages: cache_control limit, thinking, and context_management without the beta.
    const five = Array.from({ length: 5 }, (_, i) => ({ type: 'text', text: `b${i}`, cache_control: eph() }));
    await rejectsWith(client.messages.countTokens({ model: MODEL, messages: [user(five)] } as any), 'A maximum of 4 blocks with cache_control may be provided. Found 5.');
    await rejectsWith(client.messages.countTokens({ model: MODEL, thinking: { type: 'enabled', budget_tokens: 100 }, messages: [user('q')] } as any), 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024');
    await rejectsWith(client.messages.countTokens({ model: MODEL, context_management: { edits: [] }, messages: [user('q')] } as any), 'context_management: Extra inputs are not permitted');
  });
});

describe('server-side compaction (compact_20260112)', () => {
  const compactEdit = (pause: boolean) => ({ edits: [{ type: 'compact_20260112', trigger: { type: 'input_tokens', value: 50_000 }, pause_after_compaction: pause }] });

  it('past the trigger returns a signed compaction block (alone, stop_reason compaction, when paused); the block round-trips', async () => {
    await boot({ script: [say('continuing')], compactionSummary: () => 'User asked for X; we did Y.' });
    const long = [user(words(52_000))];
    const paused = await createBeta([COMPACT_BETA], { context_management: compactEdit(true), messages: long });
    expect(paused.stop_reason).toBe('compaction');
    expect(paused.content).toEqual([{ type: 'compaction', content: 'User asked for X; we did Y.', encrypted_content: null, signature: expect.stringMatching(/^fake_csig_/) }]);
    expect(server.remaining()).toBe(1); // no step played

    const next = await createBeta([COMPACT_BETA], { context_management: compactEdit(true), messages: [...long, assistant(paused.content), user('go on')] });
    expect(next.content).toEqual([{ type: 'text', text: 'continuing', citations: null }]);
    expect(next.usage.input_tokens).toBeLessThan(100); // everything before the block is dropped

    const tampered = await apiError(createBeta([COMPACT_BETA], { messages: [...long, assistant([{ ...paused.content[0], content: 'User asked for Z.' }]), user('go on')] }));
    expect(tampered.status).toBe(400);
    expect((tampered as any).errorCode ?? inner(tampered)).toBeTruthy();
    expect((inner(tampered) as any).details).toEqual({ error_code: 'compaction_content_mismatch' });
  });

  it('compaction blocks are unknown without the beta', async () => {
    await boot();
    await rejectsWith(create({ messages: [user('q'), assistant([{ type: 'compaction', content: 's', signature: 'x' }]), user('r')] }), /^messages\.1\.content\.0: Input tag 'compaction'/);
  });
});

describe('models API capabilities', () => {
  it('reports declared capabilities (every key present) and null when none are declared', async () => {
    await boot({
      models: {
        'claude-smart': { maxInputTokens: 200_000, capabilities: { thinking: true, contextManagement: ['clear_tool_uses_20250919', 'compact_20260112'] } },
        'claude-plain': { maxInputTokens: 100_000 },
      },
    });
    const smart = await client.models.retrieve('claude-smart');
    expect(smart.capabilities!.context_management).toEqual({
      supported: true,
      clear_tool_uses_20250919: { supported: true },
      clear_thinking_20251015: { supported: false },
      compact_20260112: { supported: true },
    });
    expect(smart.capabilities!.thinking).toMatchObject({ supported: true, types: { enabled: { supported: true }, adaptive: { supported: true } } });
    expect(Object.keys(smart.capabilities!).sort()).toEqual(
      ['batch', 'citations', 'code_execution', 'context_management', 'effort', 'image_input', 'pdf_input', 'server_tools', 'structured_outputs', 'thinking'].sort(),
    );
    expect((await client.models.retrieve('claude-plain')).capabilities).toBeNull();
  });

  it('rejects a feature the model declares unsupported', async () => {
    await boot({ models: { 'claude-basic': { maxInputTokens: 200_000, capabilities: { thinking: false } } } });
    await rejectsWith(create({ model: 'claude-basic', thinking: { type: 'enabled', budget_tokens: 1024 }, max_tokens: 2048, messages: [user('q')] }), /not supported by model claude-basic/);
    await rejectsWith(
      createBeta([CM_BETA], { model: 'claude-basic', context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] }, messages: [user('q')] }),
      "context_management.edits.0: 'clear_tool_uses_20250919' is not supported by model claude-basic",
    );
  });

  it('reply() mixes thinking, text and calls in order', async () => {
    await boot({ script: [reply({ content: [think('a'), 'text', { name: 'read' }] })] });
    const m = await create({ thinking: { type: 'enabled', budget_tokens: 1024 }, max_tokens: 2048, tools: [{ name: 'read', input_schema: { type: 'object' } }], messages: [user('q')] });
    expect(m.content.map((b) => b.type)).toEqual(['thinking', 'text', 'tool_use']);
    expect(m.stop_reason).toBe('tool_use');
  });
});
