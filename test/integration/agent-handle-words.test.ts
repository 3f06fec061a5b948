/**
 * AgentHandle in the 0.5.0 words (docs/architecture.md): a run's conversations are named by
 * `conversationId`, listed by `conversations()`, read by `entries()`; the 0.4.0 names (`sessionId`,
 * `sessions()`, `messages()`) still work, and the wire keeps its names (`fh.sessions`, `sessionId`).
 * Real dev server, real client.
 */
import { startAgent } from '@fabric-harness/sdk/client';
import { FakeAnthropicServer, say } from '@fabric-harness/sdk/testing';
import { chatter } from '../fixtures/compaction-agents';
import { startTestWorker, type TestWorker } from '../support/test-worker';

describe('AgentHandle names conversations', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;

  beforeAll(async () => {
    fake = await FakeAnthropicServer.start();
    w = await startTestWorker({ name: 'handle-words', baseURL: fake.url });
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  it('prompts by conversationId, lists conversations, reads entries; the 0.4.0 names agree', async () => {
    const handle = await startAgent(
      w.client,
      chatter,
      { prompts: [], serveMs: 60_000, compaction: { enabled: false } },
      { workflowId: `handle-words-${Date.now()}`, taskQueue: w.taskQueue },
    );
    fake.enqueue(say('one'));
    expect(await handle.prompt('first', { conversationId: 'main' })).toBe('one');
    expect(await handle.conversations()).toEqual(['main']);
    expect(await handle.sessions()).toEqual(['main']);

    // conversationId is what goes out (as the wire's sessionId), and it wins over the deprecated name.
    await expect(handle.prompt('x', { conversationId: 'nope' })).rejects.toMatchObject({ code: 'UNKNOWN_SESSION', sessionId: 'nope' });
    fake.enqueue(say('two'));
    expect(await handle.prompt('second', { conversationId: 'main', sessionId: 'nope' })).toBe('two');
    fake.enqueue(say('three'));
    expect(await handle.prompt('third', { sessionId: 'main' })).toBe('three');

    const entries = await handle.entries();
    expect(entries.map((e) => e.type)).toEqual(['user', 'assistant', 'user', 'assistant', 'user', 'assistant']);
    expect(await handle.entries('main')).toEqual(entries);
    expect(await handle.messages()).toEqual(entries);
    await handle.close();
    await handle.result();
  });
});
