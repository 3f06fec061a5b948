/**
 * Claude's own context features on the real Temporal server: prompt caching (breakpoints within the
 * API's limit of four, cache read and creation tokens reaching the run's usage) and extended thinking
 * (a signed thinking block carried back unmodified through a tool loop that spans activities). The
 * fake server checks each request as the API does: a dropped or altered thinking block is a 400.
 */
import { startAgent } from '@fabric-harness/sdk/client';
import { FakeAnthropicServer, callTools, say, signThinking, think, type RecordedRequest } from '@fabric-harness/sdk/testing';
import { thinker } from '../fixtures/context-agents';
import { startTestWorker, type TestWorker } from '../support/test-worker';

/** Every cache_control breakpoint of a request: tools, system blocks, message blocks. */
function breakpoints(body: any): number {
  const count = (blocks: unknown): number => (Array.isArray(blocks) ? blocks.filter((b: any) => b?.cache_control).length : 0);
  return count(body.tools) + count(body.system) + (body.messages as any[]).reduce((n, m) => n + count(m.content), 0);
}

describe('prompt caching and extended thinking on Temporal', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;

  beforeAll(async () => {
    fake = await FakeAnthropicServer.start();
    w = await startTestWorker({ name: 'context-claude', baseURL: fake.url });
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  it('caches the prefix across activities and carries the signed thinking through the tool loop', async () => {
    fake.enqueue(
      callTools(think('I should write the note first.'), { name: 'note', input: { text: 'cache me' } }),
      say('Noted.', { thinking: 'The note is written.' }),
      say('Still here.', { thinking: 'A short answer will do.' }),
    );
    const before = fake.requests.length;
    const handle = await startAgent(w.client, thinker, { prompts: ['Write a note.', 'Are you there?'] }, { workflowId: `claude-${Date.now()}`, taskQueue: w.taskQueue });
    const result = await handle.result();
    expect(result.replies).toEqual(['Noted.', 'Still here.']);

    const all = fake.requests.slice(before).filter((r) => r.path === '/v1/messages');
    const accepted = new Set(fake.messageRequests());
    // The fake rejects a request whose thinking block is missing, altered or unsigned: none was.
    expect(all.filter((r: RecordedRequest) => !accepted.has(r))).toEqual([]);
    expect(all).toHaveLength(3);

    // Thinking on every call, with the reply's room kept.
    for (const r of all) expect(r.body.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    // The call after the tool ran (another activity) sends the signed block first, unmodified.
    const loop = all[1]!.body.messages.at(-2);
    expect(loop.role).toBe('assistant');
    expect(loop.content[0]).toEqual({ type: 'thinking', thinking: 'I should write the note first.', signature: signThinking('I should write the note first.') });
    expect(loop.content[1]).toMatchObject({ type: 'tool_use', name: 'note' });

    // Caching: breakpoints on every call, never more than the API's four.
    for (const r of all) {
      expect(breakpoints(r.body)).toBeGreaterThanOrEqual(1);
      expect(breakpoints(r.body)).toBeLessThanOrEqual(4);
    }
    // The first call wrote the long prefix, the later ones read it; the run's usage says so.
    expect(result.usage.cacheCreationInputTokens).toBeGreaterThan(1000);
    expect(result.usage.cacheReadInputTokens).toBeGreaterThan(2 * 1000);
    expect(result.usage.modelCalls).toBe(3);
    const queried = await handle.usage();
    expect(queried).toMatchObject({ cacheCreationInputTokens: result.usage.cacheCreationInputTokens, cacheReadInputTokens: result.usage.cacheReadInputTokens });
  });
});
