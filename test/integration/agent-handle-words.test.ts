/**
 * AgentHandle in the 0.5.0 words (docs/architecture.md): a run's conversations are named by
 * `conversationId`, listed by `conversations()`, read by `entries()`; the 0.4.0 names (`sessionId`,
 * `sessions()`, `messages()`) still work, and the wire keeps its names (`fh.sessions`, `sessionId`).
 * Real dev server, real client.
 */
import { RunNoWorkerError, RunReadEndedError, RunWaitEndedError, startAgent } from '@fabric-harness/sdk/client';
import { FakeAnthropicServer, say } from '@fabric-harness/sdk/testing';
import { chatter } from '../fixtures/compaction-agents';
import { startTestWorker, type TestWorker } from '../support/test-worker';
import { rejection } from '../support/waiting';

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
    // promptStream sends its conversationId too (it once sent only the deprecated sessionId).
    await expect((await handle.promptStream('x', { conversationId: 'nope' })).reply).rejects.toMatchObject({ code: 'UNKNOWN_SESSION', sessionId: 'nope' });
    fake.enqueue(say('four'));
    expect(await (await handle.promptStream('fourth', { conversationId: 'main' })).reply).toBe('four');

    const entries = await handle.entries();
    expect(entries.map((e) => e.type)).toEqual(['user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user', 'assistant']);
    expect(await handle.entries('main')).toEqual(entries);
    expect(await handle.messages()).toEqual(entries);
    await handle.close();
    await handle.result();
  });

  it('a prompt or a decision to a run no worker serves ends at the caller\'s bound, typed; sent again with its update id, it is answered once', async () => {
    const queue = `${w.taskQueue}-later`;
    const handle = await startAgent(w.client, chatter, { prompts: [], serveMs: 60_000, compaction: { enabled: false } }, { workflowId: `handle-bound-${Date.now()}`, taskQueue: queue });
    // Refused before anything is sent, naming the field.
    expect(await rejection(handle.prompt('first', { timeoutMs: '5s' as never }))).toMatchObject({ code: 'INVALID_INPUT', field: 'timeoutMs' });
    expect(await rejection(handle.approve('call-1', { timeout: 5 } as never))).toMatchObject({ code: 'INVALID_INPUT', field: 'timeout' });
    expect(await rejection(handle.prompt('first', { timeout: 5 } as never))).toMatchObject({ code: 'INVALID_INPUT', field: 'timeout' });
    expect(await rejection(handle.promptStream('first', { updateId: 'u-1' } as never))).toMatchObject({ code: 'INVALID_INPUT', field: 'updateId' });

    // A read with no bound: no worker is NO_WORKER naming the queue, not a bare gRPC error (nothing was sent).
    // The server waits about 29 s for a worker to take a query; an update sent meanwhile clears the query it
    // holds (asked again: twice the wait), so this one goes alone.
    const refused = await rejection(handle.promptStream('never sent either').then((s) => s.reply));
    expect(refused).toBeInstanceOf(RunNoWorkerError);
    expect(refused).toMatchObject({ code: 'NO_WORKER', workflowId: handle.workflowId, taskQueue: queue, message: expect.stringContaining(`task queue ${queue}`) });

    let t0 = Date.now();
    const ended = await rejection(handle.prompt('first', { conversationId: 'main', timeoutMs: 1_500 }));
    expect(ended).toBeInstanceOf(RunWaitEndedError);
    expect(ended).toMatchObject({ code: 'WAIT_ENDED', reason: 'timeout', workflowId: handle.workflowId, noWorker: { taskQueue: queue }, updateId: expect.any(String) });
    expect(Date.now() - t0).toBeLessThan(10_000);
    const { updateId } = ended as RunWaitEndedError;
    // The same prompt again (its update id), abandoned by its caller: still the one update.
    const gone = new AbortController();
    setTimeout(() => gone.abort(), 300);
    t0 = Date.now();
    expect(await rejection(handle.prompt('first', { conversationId: 'main', updateId, signal: gone.signal }))).toMatchObject({ code: 'WAIT_ENDED', reason: 'aborted', updateId });
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(await rejection(handle.deny('call-1', { note: 'no', timeoutMs: 500 }))).toMatchObject({ code: 'WAIT_ENDED', reason: 'timeout' });
    expect(await rejection(handle.compact({ keepRecentEntries: 2, timeoutMs: 500 }))).toMatchObject({ code: 'WAIT_ENDED', reason: 'timeout', noWorker: { taskQueue: queue } });
    // A streamed prompt reads where the stream stands first (a query), within the same bound: nothing is sent.
    t0 = Date.now();
    const unread = await rejection(handle.promptStream('never sent', { timeoutMs: 1_000 }));
    expect(unread).toBeInstanceOf(RunWaitEndedError);
    expect(unread).toMatchObject({ code: 'WAIT_ENDED', reason: 'timeout', sent: false, noWorker: { taskQueue: queue } });
    expect(Date.now() - t0).toBeLessThan(10_000);
    // The run's other reads (queries) are typed too: the client's bound ends one WAIT_ENDED.
    t0 = Date.now();
    const cut = await rejection(w.client.withDeadline(Date.now() + 1_000, () => handle.usage()));
    expect(cut).toBeInstanceOf(RunReadEndedError);
    expect(cut).toMatchObject({ code: 'WAIT_ENDED', reason: 'timeout', workflowId: handle.workflowId, noWorker: { taskQueue: queue } });
    expect(Date.now() - t0).toBeLessThan(10_000);
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 300);
    expect(await rejection(w.client.withAbortSignal(stop.signal, () => handle.entries()))).toMatchObject({ code: 'WAIT_ENDED', reason: 'aborted', workflowId: handle.workflowId });

    // A worker comes: the prompt, sent again with its update id, is answered, and the model asked once.
    const later = await startTestWorker({ name: 'handle-bound-later', baseURL: fake.url, taskQueue: queue });
    try {
      const asked = fake.messageRequests().length;
      fake.enqueue(say('here now'));
      expect(await handle.prompt('first', { conversationId: 'main', updateId, timeoutMs: 60_000 })).toBe('here now');
      expect(fake.messageRequests().length - asked).toBe(1);
      expect((await handle.entries('main')).filter((e) => e.type === 'user')).toHaveLength(1);
      await handle.close();
      await handle.result();
    } finally {
      await later.stop();
    }
  });
});
