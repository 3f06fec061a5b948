/**
 * Prompt caching, inline against the fake server's cache simulation: breakpoints on the tools, the
 * system prompt and the conversation's tail; the second call reads what the first wrote; usage counts
 * cache reads and writes; off by default.
 */
import { init, schema, tool } from '@fabric-harness/sdk';
import { FakeAnthropicServer, say } from '@fabric-harness/sdk/testing';
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

const lookup = tool({ name: 'lookup', description: 'Look something up.', input: schema.object({ q: schema.string() }), execute: ({ q }) => q });
// Long enough to be cacheable (the minimum cacheable prefix is 1,024+ tokens).
const SYSTEM = `You are a meticulous assistant. ${'Follow the house style guide in every answer. '.repeat(400)}`;

async function twoTurns(promptCaching?: boolean | { ttl?: '5m' | '1h' }) {
  const fh = await init({ system: SYSTEM, tools: [lookup], contextWindowTokens: 200_000, ...(promptCaching !== undefined ? { promptCaching } : {}) });
  const s = await fh.session();
  fake.enqueue(say('first answer'), say('second answer'));
  await s.prompt('first question');
  await s.prompt('second question');
  return { s, requests: fake.messageRequests() };
}

describe('prompt caching', () => {
  it('puts breakpoints on the last tool, the system prompt and the last block; the next call reads the prefix', async () => {
    const { s, requests } = await twoTurns(true);
    const body = requests[0]!.body;
    expect(body.tools.at(-1).cache_control).toEqual({ type: 'ephemeral' });
    expect(body.system).toEqual([{ type: 'text', text: SYSTEM, cache_control: { type: 'ephemeral' } }]);
    expect(body.messages.at(-1).content.at(-1).cache_control).toEqual({ type: 'ephemeral' });
    const breakpoints = JSON.stringify(requests[1]!.body).split('"cache_control"').length - 1;
    expect(breakpoints).toBe(3);
    const usage = s.usage();
    expect(usage.cacheCreationInputTokens).toBeGreaterThan(1000);
    expect(usage.cacheReadInputTokens).toBeGreaterThan(1000);
  });

  it('a 1-hour cache asks for it', async () => {
    const { requests } = await twoTurns({ ttl: '1h' });
    expect(requests[0]!.body.system[0].cache_control).toEqual({ type: 'ephemeral', ttl: '1h' });
  });

  it('is off by default: no breakpoints, nothing read from a cache', async () => {
    const { s, requests } = await twoTurns();
    expect(JSON.stringify(requests.map((r) => r.body))).not.toContain('cache_control');
    expect(s.usage().cacheReadInputTokens ?? 0).toBe(0);
  });

  it('a bad setting names the field', async () => {
    await expect(init({ promptCaching: { ttl: '2h' as never } })).rejects.toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('promptCaching') });
  });
});
