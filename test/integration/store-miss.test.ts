/**
 * A worker whose transcript store lacks the run's transcript (another machine, a cleared store) gets
 * the full transcript once and carries on.
 */
import { getAgentHandle, startAgent } from '@fabric-harness/sdk/client';
import { FakeAnthropicServer, say } from '@fabric-harness/sdk/testing';
import { chatter } from '../fixtures/compaction-agents';
import { startTestWorker } from '../support/test-worker';

describe('a transcript store miss', () => {
  it('is answered by resending the full transcript once', async () => {
    const fake = await FakeAnthropicServer.start({ script: [say('first answer'), say('second answer')] });
    const first = await startTestWorker({ name: 'store-miss', baseURL: fake.url });
    let second: Awaited<ReturnType<typeof startTestWorker>> | undefined;
    try {
      const workflowId = `store-miss-${Date.now()}`;
      const started = await startAgent(
        first.client,
        chatter,
        { prompts: ['first question'], contextWindowTokens: 100_000, serveMs: 60_000 },
        { workflowId, taskQueue: first.taskQueue },
      );
      while ((await started.messages()).length < 2) await new Promise((r) => setTimeout(r, 100));
      // The first worker goes away with its store; the next one has an empty store of its own.
      await first.stop();
      second = await startTestWorker({ name: 'store-miss', baseURL: fake.url, taskQueue: first.taskQueue });
      const handle = getAgentHandle<{ replies: string[] }>(second.client, workflowId);
      expect(await handle.prompt('second question')).toBe('second answer');
      await handle.close();
      expect((await handle.result()).replies).toEqual(['first answer']);

      const events = (await handle.fetchHistory()).events!;
      const models = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'fhModel');
      expect(models).toHaveLength(3); // first prompt; second prompt with a reference (miss); the same, in full
      const missed = events.find((e) => e.activityTaskFailedEventAttributes?.failure?.applicationFailureInfo?.type === 'TRANSCRIPT_STORE_MISS');
      expect(missed).toBeDefined();
      // The model saw the whole conversation on the retry.
      const last = fake.messageRequests().at(-1)!.body.messages;
      expect(last.map((m: any) => m.content[0].text)).toEqual(['first question', 'first answer', 'second question']);
      expect(fake.messageRequests()).toHaveLength(2); // the miss never reached the model
    } finally {
      await second?.stop();
      await fake.stop();
    }
  });
});
