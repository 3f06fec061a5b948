/** usage() counts compaction summaries apart from the conversation's model calls (inline, scripted fake model). */
import { init } from '@fabric-harness/sdk';
import { FakeAnthropicServer, say } from '@fabric-harness/sdk/testing';
import { savedAnthropicEnv } from '../support/anthropic-env';

const MARKER = '[fabric-harness:summarize]';
const isSummary = (r: { body: any }) => String(r.body?.system ?? '').startsWith(MARKER);

describe('session usage', () => {
  let fake: FakeAnthropicServer;
  const env = savedAnthropicEnv();

  beforeAll(async () => {
    fake = await FakeAnthropicServer.start({ route: (req) => (isSummary(req) ? say('## Goal\nModel summary.') : undefined) });
    env.pointAt(fake.url);
  });
  afterAll(async () => {
    await fake.stop();
    env.restore();
  });

  it('counts summariser calls and their tokens separately', async () => {
    const session = await (await init({ contextWindowTokens: 100_000 })).session();
    fake.enqueue(say('one'), say('two'), say('three'));
    await session.prompt('first');
    await session.prompt('second');
    await session.prompt('third');
    expect(session.usage().summarizer).toEqual({ inputTokens: 0, outputTokens: 0, calls: 0 });
    const before = fake.requests.length;
    await session.compact({ keepRecentEntries: 2 });
    const summaries = fake.requests.slice(before).filter(isSummary);
    expect(summaries.length).toBeGreaterThanOrEqual(1);
    const usage = session.usage();
    expect(usage.modelCalls).toBe(3);
    expect(usage.summarizer).toEqual({
      calls: summaries.length,
      inputTokens: summaries.reduce((t, r: any) => t + r.inputTokens, 0),
      outputTokens: expect.any(Number),
    });
    expect(usage.summarizer.inputTokens).toBeGreaterThan(0);
    expect(usage.summarizer.outputTokens).toBeGreaterThan(0);
  });

  it('a window the agent sets is not looked up from the Models API', async () => {
    const before = fake.requests.length;
    await (await init({ contextWindowTokens: 4_000 })).session();
    expect(fake.requests.slice(before).map((r: any) => r.path)).toEqual([]);
    const looked = fake.requests.length;
    await (await init({})).session();
    expect(fake.requests.length).toBeGreaterThan(looked); // without it, the window is looked up
  });
});
