/**
 * Extended thinking, inline against the fake server (which signs thinking blocks and rejects a changed
 * one, as the API does): the `thinking` parameter and max_tokens, thinking blocks kept in the history
 * exactly and sent back unmodified in a tool-use loop, redacted thinking, a level change waiting for the
 * next prompt, budget validation naming the field, usage, and the summariser's view of thinking.
 */
import { init, schema, tool } from '@fabric-harness/sdk';
import { FakeAnthropicServer, callTools, redactedThinking, say, think } from '@fabric-harness/sdk/testing';
import type { AssistantEntry, Entry } from '../../src/core/entries';
import { renderEntryForSummary } from '../../src/core/context/compaction/render';
import { entrySchema } from '../../src/inline/session-files';
import { savedAnthropicEnv } from '../support/anthropic-env';

let fake: FakeAnthropicServer;
const env = savedAnthropicEnv();

beforeEach(async () => {
  fake = await FakeAnthropicServer.start();
  env.pointAt(fake.url);
});
afterEach(async () => {
  await fake.stop();
});
afterAll(() => {
  env.restore();
});

const lookup = tool({ name: 'lookup', description: 'Look something up.', input: schema.object({ q: schema.string() }), execute: ({ q }) => `found ${q}` });
const PLAN = 'The user wants x; I should look it up before answering.';

/** POSTs a body to the fake as the SDK would; the fake's verdict. */
async function post(body: unknown): Promise<{ status: number; message?: string }> {
  const res = await fetch(`${fake.url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'test-key', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { error?: { message?: string } };
  return { status: res.status, message: json.error?.message };
}

describe('extended thinking', () => {
  it('sends thinking with max_tokens above the budget, keeps the signed block and sends it back unchanged in the tool loop', async () => {
    const fh = await init({ tools: [lookup], thinking: 'low', maxTokens: 1000 });
    const s = await fh.session();
    fake.enqueue(callTools(think(PLAN), { name: 'lookup', input: { q: 'x' } }), say('x is found.', { thinking: 'Done.' }));
    await expect(s.prompt('what is x?')).resolves.toBe('x is found.');

    const [first, second] = fake.messageRequests();
    expect(fake.requests.filter((r) => r.path === '/v1/messages')).toHaveLength(2); // none rejected
    expect(first!.body.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(first!.body.max_tokens).toBe(2048 + 1000);

    const kept = s.messages()[1] as AssistantEntry;
    expect(kept.content[0]).toEqual({ type: 'thinking', thinking: PLAN, signature: expect.stringMatching(/^fake_sig_/) });
    // The follow-up carries the block exactly as it came, first in the turn being answered.
    expect(second!.body.messages[1]).toEqual({ role: 'assistant', content: kept.content });
    expect(second!.body.messages[1].content[0]).toEqual(kept.content[0]);

    // The fake's rule the harness must not trip: the same request with the thinking changed is refused.
    const tampered = structuredClone(second!.body);
    tampered.messages[1].content[0].thinking += ' (edited)';
    await expect(post(tampered)).resolves.toEqual({ status: 400, message: 'messages.1.content.0: Invalid `signature` in `thinking` block' });
  });

  it('a history whose thinking was changed is refused by the API: the harness sends what it holds', async () => {
    const fh = await init({ tools: [lookup], thinking: 'low' });
    const s = await fh.session();
    fake.enqueue(callTools(think(PLAN), { name: 'lookup', input: { q: 'x' } }), say('ok', { thinking: 'ok' }));
    await s.prompt('what is x?');
    const entries = structuredClone(s.messages()) as Entry[];
    (entries[1] as AssistantEntry).content[0] = { type: 'thinking', thinking: 'something else', signature: (entries[1] as any).content[0].signature };
    s.restore({ entries });
    fake.enqueue(say('never', { thinking: 'never' }));
    await expect(s.prompt('again')).rejects.toMatchObject({ message: expect.stringContaining('Invalid `signature` in `thinking` block') });
  });

  it('redacted thinking is kept and sent back with its data unchanged', async () => {
    const fh = await init({ tools: [lookup], thinking: { budgetTokens: 1024 } });
    const s = await fh.session();
    fake.enqueue(callTools(redactedThinking('hidden plan'), { name: 'lookup', input: { q: 'y' } }), say('y.', { thinking: 'fine' }));
    await expect(s.prompt('what is y?')).resolves.toBe('y.');
    const kept = (s.messages()[1] as AssistantEntry).content[0];
    expect(kept).toEqual({ type: 'redacted_thinking', data: expect.stringMatching(/^fake_redacted_/) });
    expect(fake.messageRequests()[1]!.body.messages[1].content[0]).toEqual(kept);
    expect(fake.messageRequests()[0]!.body.max_tokens).toBe(1024 + 4096);
  });

  it('is off by default: no thinking parameter, max_tokens as configured', async () => {
    const fh = await init({});
    const s = await fh.session();
    fake.enqueue(say('hi'));
    await s.prompt('hello');
    const body = fake.messageRequests()[0]!.body;
    expect(body.thinking).toBeUndefined();
    expect(body.max_tokens).toBe(4096);
  });

  it('a level changed during a tool loop applies from the next prompt (the API refuses thinking switched on mid-loop)', async () => {
    let s!: Awaited<ReturnType<Awaited<ReturnType<typeof init>>['session']>>;
    const switcher = tool({
      name: 'think_harder',
      description: 'Turns thinking on.',
      input: schema.object({}),
      execute: () => {
        s.changeThinking({ budgetTokens: 4096 });
        return 'ok';
      },
    });
    const fh = await init({ tools: [switcher] });
    s = await fh.session();
    fake.enqueue(callTools({ name: 'think_harder', input: {} }), say('done'), say('thought', { thinking: 'now I think' }));
    await expect(s.prompt('go')).resolves.toBe('done');
    await expect(s.prompt('next')).resolves.toBe('thought');
    const bodies = fake.messageRequests().map((r) => r.body);
    expect(bodies.map((b) => b.thinking?.budget_tokens)).toEqual([undefined, undefined, 4096]);
    s.changeThinking(undefined);
    fake.enqueue(say('plain'));
    await s.prompt('off again');
    expect(fake.messageRequests()[3]!.body.thinking).toBeUndefined();
  });

  it('counts thinking in the output tokens of the reply and the session', async () => {
    const fh = await init({ thinking: 'low' });
    const s = await fh.session();
    fake.enqueue(say('a', { thinking: 'a long line of careful reasoning about the question at hand' }));
    await s.prompt('q');
    const withThinking = (s.messages()[1] as AssistantEntry).usage!.outputTokens;
    const fh2 = await init({});
    const s2 = await fh2.session();
    fake.enqueue(say('a'));
    await s2.prompt('q');
    const without = (s2.messages()[1] as AssistantEntry).usage!.outputTokens;
    expect(withThinking).toBeGreaterThan(without);
    expect(s.usage().outputTokens).toBe(withThinking);
  });

  it('a bad budget or level names the field', async () => {
    await expect(init({ thinking: { budgetTokens: 500 } })).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'thinking.budgetTokens', message: expect.stringContaining('1024') });
    await expect(init({ thinking: 'huge' as never })).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'thinking' });
    await expect(init({ thinking: { budgetTokens: 2048, extra: 1 } as never })).rejects.toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('thinking') });
    const s = await (await init({})).session();
    expect(() => s.changeThinking({ budgetTokens: 1.5 })).toThrow(expect.objectContaining({ code: 'INVALID_INPUT', field: 'thinking.budgetTokens' }));
    await expect((await init({})).session({ thinking: { budgetTokens: 0 } })).rejects.toMatchObject({ field: 'thinking.budgetTokens' });
  });

  it('summaries skip thinking; saved inline sessions keep it', () => {
    const entry: AssistantEntry = {
      type: 'assistant',
      content: [
        { type: 'thinking', thinking: 'SECRET PLAN', signature: 'sig' },
        { type: 'redacted_thinking', data: 'opaque' },
        { type: 'text', text: 'Reading it.' },
        { type: 'tool_use', id: 't1', name: 'lookup', input: { q: 'x' } },
      ],
    };
    const rendered = renderEntryForSummary(entry);
    expect(rendered).toBe('Assistant: Reading it.\nTool call lookup({"q":"x"})');
    expect(entrySchema.parse(entry)).toEqual(entry);
  });
});
