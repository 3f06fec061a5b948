/**
 * compaction.strategy: the choice from the Models API capabilities, the `context_management` edits a
 * server strategy sends, named errors for bad settings, and (inline, against the fake server) the edits
 * the server applies and the compaction blocks it returns, accounted in events and usage.
 */
import { init, schema, tool, type AgentEvent } from '@fabric-harness/sdk';
import { FakeAnthropicServer, callTools, say } from '@fabric-harness/sdk/testing';
import { modelCapabilities } from '../../src/testing/anthropic/fake-anthropic-capabilities';
import { chooseStrategy, contextManagementParams, serverContextCapabilities, COMPACTION_BETA, CONTEXT_MANAGEMENT_BETA } from '../../src/core/context/strategy';
import { parseCompactionSettings } from '../../src/core/context/settings';
import { InvalidCompactionSettingsError } from '../../src/core/context/compaction/errors';
import { messagesParams } from '../../src/activities/models/anthropic/messages';
import { savedAnthropicEnv } from '../support/anthropic-env';

const ALL = { clearToolUses: true, clearThinking: true, compact: true };

describe('strategy choice from the Models API capabilities', () => {
  it('reads capabilities.context_management', () => {
    expect(serverContextCapabilities(modelCapabilities({ contextManagement: ['clear_tool_uses_20250919', 'compact_20260112'] }))).toEqual({
      clearToolUses: true,
      clearThinking: false,
      compact: true,
    });
    expect(serverContextCapabilities(modelCapabilities({}))).toEqual({ clearToolUses: false, clearThinking: false, compact: false });
    expect(serverContextCapabilities(null)).toBeUndefined();
  });

  it("auto: server where the model supports an edit, client where it does not or cannot say", () => {
    expect(chooseStrategy('auto', 'm', ALL)).toMatchObject({ strategy: 'server', edits: ALL });
    expect(chooseStrategy('auto', 'm', { clearToolUses: false, clearThinking: false, compact: false })).toMatchObject({ strategy: 'client' });
    const unknown = chooseStrategy('auto', 'm', undefined);
    expect(unknown.strategy).toBe('client');
    expect(unknown.why).toMatch(/did not report/);
  });

  it('client stays client; server trusts a silent API (clearing only) and refuses a denying one', () => {
    expect(chooseStrategy('client', 'm', ALL).strategy).toBe('client');
    expect(chooseStrategy('server', 'm', undefined)).toMatchObject({ strategy: 'server', edits: { clearToolUses: true, compact: false } });
    expect(chooseStrategy('server', 'm', { clearToolUses: false, clearThinking: false, compact: false }).strategy).toBe('client');
  });
});

describe('context_management edits', () => {
  const settings = { compactAtTokens: 100_000, keepRecentEntries: 20 };

  it('derives triggers and keep from the settings, clear_thinking first and only with thinking, with the betas', () => {
    const d = chooseStrategy('auto', 'm', ALL);
    expect(contextManagementParams(d, settings, true)).toEqual({
      edits: [
        { type: 'clear_thinking_20251015', keep: { type: 'thinking_turns', value: 1 } },
        { type: 'clear_tool_uses_20250919', trigger: { type: 'input_tokens', value: 80_000 }, keep: { type: 'tool_uses', value: 10 } },
        { type: 'compact_20260112', trigger: { type: 'input_tokens', value: 100_000 } },
      ],
      betas: [CONTEXT_MANAGEMENT_BETA, COMPACTION_BETA],
    });
    const noThinking = contextManagementParams(d, { compactAtTokens: 1000, keepRecentEntries: 1 }, false)!;
    expect(noThinking.edits.map((e) => e.type)).toEqual(['clear_tool_uses_20250919', 'compact_20260112']);
    // The API's smallest compaction trigger; keep at least one tool use.
    expect(noThinking.edits[1]).toEqual({ type: 'compact_20260112', trigger: { type: 'input_tokens', value: 50_000 } });
    expect(noThinking.edits[0]).toMatchObject({ keep: { type: 'tool_uses', value: 1 } });
  });

  it('sends nothing under the client strategy', () => {
    expect(contextManagementParams(chooseStrategy('client', 'm', ALL), settings, false)).toBeUndefined();
    expect(contextManagementParams(undefined, settings, false)).toBeUndefined();
  });

  it('the request carries context_management; only the newest compaction block goes back, none without the beta', () => {
    const block = (c: string) => ({ type: 'compaction' as const, content: c, encrypted_content: null, signature: `sig-${c}` });
    const entries = [
      { type: 'user' as const, text: 'a' },
      { type: 'assistant' as const, content: [block('old'), { type: 'text' as const, text: 'x' }] },
      { type: 'user' as const, text: 'b' },
      { type: 'assistant' as const, content: [block('new'), { type: 'text' as const, text: 'y' }] },
      { type: 'user' as const, text: 'c' },
    ];
    const cm = contextManagementParams(chooseStrategy('auto', 'm', ALL), settings, false)!;
    const p = messagesParams({ model: 'm', maxTokens: 10, tools: [], entries, contextManagement: cm }) as any;
    expect(p.context_management).toEqual({ edits: cm.edits });
    const sent = JSON.stringify(p.messages);
    expect(sent).toContain('"content":"new"');
    expect(sent).not.toContain('"content":"old"');
    const plain = messagesParams({ model: 'm', maxTokens: 10, tools: [], entries }) as any;
    expect(plain.context_management).toBeUndefined();
    expect(JSON.stringify(plain.messages)).not.toContain('compaction');
  });
});

describe('compaction.strategy setting', () => {
  it('a bad value names the field', () => {
    let caught: unknown;
    try {
      parseCompactionSettings({ strategy: 'cloud' });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(InvalidCompactionSettingsError);
    expect((caught as InvalidCompactionSettingsError).field).toBe('strategy');
    expect(parseCompactionSettings({ strategy: 'auto' })).toEqual({ strategy: 'auto' });
  });
});

describe('server strategy inline, against the fake server', () => {
  let fake: FakeAnthropicServer;
  const env = savedAnthropicEnv();
  afterEach(async () => {
    await fake.stop();
    env.restore();
  });
  async function start(contextManagement: Array<'clear_tool_uses_20250919' | 'clear_thinking_20251015' | 'compact_20260112'>) {
    fake = await FakeAnthropicServer.start({ models: { 'fake-cm': { maxInputTokens: 200_000, capabilities: { contextManagement } } } });
    env.pointAt(fake.url);
  }
  const big = tool({ name: 'fetch', description: 'Fetch a page.', input: schema.object({ page: schema.number() }), execute: ({ page }) => `page ${page}: ${'lorem ipsum '.repeat(400)}` });

  it("auto on a capable model: edits sent with the beta, the server clears, events and usage say so, ours stays off", async () => {
    await start(['clear_tool_uses_20250919', 'compact_20260112']);
    const events: AgentEvent[] = [];
    const fh = await init({ model: 'fake-cm', tools: [big], compaction: { strategy: 'auto', compactAtTokens: 2000, keepRecentEntries: 2 }, onEvent: (e) => events.push(e) });
    const s = await fh.session();
    expect(s.compactionState().strategy).toEqual({ strategy: 'server', why: expect.stringContaining('clear_tool_uses_20250919') });
    fake.enqueue(...[1, 2, 3, 4].map((page) => callTools({ name: 'fetch', input: { page } })), say('done'));
    await s.prompt('read four pages');
    const reqs = fake.messageRequests();
    expect(reqs).toHaveLength(5); // no summariser call: our threshold compaction is off
    for (const r of reqs) {
      expect(r.headers['anthropic-beta']).toContain(CONTEXT_MANAGEMENT_BETA);
      expect(r.body.context_management.edits.map((e: { type: string }) => e.type)).toEqual(['clear_tool_uses_20250919', 'compact_20260112']);
    }
    const edited = events.filter((e) => e.type === 'context_edited');
    expect(edited.length).toBeGreaterThan(0);
    const usage = s.usage();
    expect(usage.serverContext!.clearedToolUses).toBeGreaterThan(0);
    expect(usage.serverContext!.clearedInputTokens).toBeGreaterThan(0);
    expect(s.messages().some((e) => e.type === 'summary')).toBe(false);
  });

  it('a compaction block the server returns is kept and sent back, and counted', async () => {
    await start(['clear_tool_uses_20250919', 'compact_20260112']);
    const huge = tool({ name: 'dump', description: 'Dump.', input: schema.object({}), execute: () => 'data '.repeat(60_000) });
    const fh = await init({ model: 'fake-cm', tools: [huge], compaction: { strategy: 'auto', compactAtTokens: 50_000, artifacts: { enabled: false } } }); // a 300 KB result would be offloaded, and nothing left to compact
    const s = await fh.session();
    fake.enqueue(callTools({ name: 'dump', input: {} }), say('done'), say('again'));
    await s.prompt('dump it');
    expect(s.usage().serverContext!.compactions).toBe(1);
    const kept = s.messages().flatMap((e) => (e.type === 'assistant' ? e.content : [])).filter((b) => b.type === 'compaction');
    expect(kept).toHaveLength(1);
    await s.prompt('and again');
    const last = fake.messageRequests().at(-1)!;
    expect(JSON.stringify(last.body.messages)).toContain('"type":"compaction"');
    expect(last.headers['anthropic-beta']).toContain(COMPACTION_BETA);
  });

  it('auto on a model without the capability: client compaction, nothing sent', async () => {
    await start([]);
    const fh = await init({ model: 'fake-cm', compaction: { strategy: 'auto' } });
    const s = await fh.session();
    expect(s.compactionState().strategy.strategy).toBe('client');
    fake.enqueue(say('hi'));
    await s.prompt('hello');
    expect(fake.messageRequests()[0]!.body.context_management).toBeUndefined();
    expect(s.usage().serverContext).toBeUndefined();
  });
});

describe('the fake server refuses malformed context_management', () => {
  let fake: FakeAnthropicServer;
  beforeAll(async () => {
    fake = await FakeAnthropicServer.start();
  });
  afterAll(async () => {
    await fake.stop();
  });
  const create = async (betas: string[], body: Record<string, unknown>) => {
    const res = await fetch(`${fake.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2023-06-01', 'anthropic-beta': betas.join(',') },
      body: JSON.stringify({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'q' }], ...body }),
    });
    return { status: res.status, message: ((await res.json()) as { error?: { message?: string } }).error?.message ?? '' };
  };
  const BOTH = [CONTEXT_MANAGEMENT_BETA, COMPACTION_BETA];

  it.each([
    ['edits not a list', { context_management: { edits: { type: 'clear_tool_uses_20250919' } } }, /edits: Input should be a valid list/],
    ['a type twice', { context_management: { edits: [{ type: 'clear_tool_uses_20250919' }, { type: 'clear_tool_uses_20250919' }] } }, /duplicate/],
    [
      'clear_thinking after clear_tool_uses',
      { thinking: { type: 'enabled', budget_tokens: 1024 }, max_tokens: 2000, context_management: { edits: [{ type: 'clear_tool_uses_20250919' }, { type: 'clear_thinking_20251015' }] } },
      /must come before/,
    ],
    ['a compaction trigger below the minimum', { context_management: { edits: [{ type: 'compact_20260112', trigger: { type: 'input_tokens', value: 1000 } }] } }, /greater than or equal to 50000/],
    ['a trigger without a value', { context_management: { edits: [{ type: 'clear_tool_uses_20250919', trigger: { type: 'input_tokens' } }] } }, /trigger\.input_tokens\.value: Field required/],
    ['an unknown key', { context_management: { edits: [], clear: true } }, /context_management\.clear: Extra inputs/],
  ])('%s', async (_, body, message) => {
    const r = await create(BOTH, body);
    expect(r.status).toBe(400);
    expect(r.message).toMatch(message);
  });

  it('a compaction block whose summary was changed', async () => {
    const r = await create(BOTH, {
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: [{ type: 'compaction', content: 'edited summary', signature: 'fake_csig_x' }, { type: 'text', text: 'a' }] },
        { role: 'user', content: 'again' },
      ],
    });
    expect(r.status).toBe(400);
    expect(r.message).toMatch(/does not match its signature/);
  });
});
