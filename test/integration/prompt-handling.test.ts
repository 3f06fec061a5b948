/**
 * How a run answers client prompts and compactions: refused at once in the update validator when they
 * cannot be answered (unknown session, too large, malformed, not serving), answered exactly once per
 * idempotency key, and a failed prompt leaves the session usable. Real dev server, real client.
 */
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { getAgentHandle, startAgent, type AgentHandle } from '@fabric-harness/sdk/client';
import { FakeAnthropicServer, fail, say } from '@fabric-harness/sdk/testing';
import type { Entry } from '@fabric-harness/sdk';
import { chatter } from '../fixtures/compaction-agents';
import { startDelayProxy, type DelayProxy } from '../support/delay-proxy';
import { startTestWorker, type TestWorker } from '../support/test-worker';
import { rejection } from '../support/waiting';
import { TEST_AGENT_MODULES } from '../support/bundle-once';
import { toolQueueOf } from '../../src/worker/tool-queue-worker';
import type { WorkerOptions } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';

const text = (entries: Entry[]) => JSON.stringify(entries);



describe('client prompts and compactions on a running agent', () => {
  let fake: FakeAnthropicServer;
  let proxy: DelayProxy;
  let w: TestWorker;
  let n = 0;
  const wid = (p: string) => `${p}-${Date.now()}-${n++}`;

  beforeAll(async () => {
    fake = await FakeAnthropicServer.start();
    proxy = await startDelayProxy(fake.url);
    w = await startTestWorker({ name: 'prompts', baseURL: proxy.url });
  });
  afterAll(async () => {
    await w?.stop();
    await proxy?.stop();
    await fake?.stop();
  });

  /** A chatter that serves prompts (compaction off) and has answered one, so it is surely serving. */
  async function servingChat(): Promise<AgentHandle> {
    const handle = await startAgent(
      w.client,
      chatter,
      { prompts: [], serveMs: 60_000, compaction: { enabled: false } },
      { workflowId: wid('serving'), taskQueue: w.taskQueue },
    );
    fake.enqueue(say('ready'));
    expect(await handle.prompt('hello')).toBe('ready');
    return handle;
  }

  it('refuses a prompt and a compaction for an unknown session id at once; the run goes on', async () => {
    const handle = await servingChat();
    const started = Date.now();
    const err = await rejection(handle.prompt('hi', { sessionId: 'nope' }));
    expect(Date.now() - started).toBeLessThan(1000);
    expect(err).toMatchObject({ code: 'UNKNOWN_SESSION', sessionId: 'nope' });
    expect(err.message).toMatch(/Unknown session 'nope'.*main/);
    await expect(handle.compact({ sessionId: 'nope' })).rejects.toMatchObject({ code: 'UNKNOWN_SESSION' });
    fake.enqueue(say('still here'));
    expect(await handle.prompt('again')).toBe('still here');
    await handle.close();
    await handle.result();
  });

  it('refuses a 3 MB prompt from a plain Temporal client in the validator; the run goes on', async () => {
    const handle = await servingChat();
    const err = await rejection(
      w.client.workflow.getHandle(handle.workflowId).executeUpdate('fh.prompt', { args: [{ text: 'x'.repeat(3_000_000) }] }),
    );
    // Refused before acceptance (a validator rejection), with a message that says what to do instead.
    expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
    expect(err.cause?.type ?? err.cause?.cause?.type).toBe('PROMPT_TOO_LARGE');
    expect(err.cause.message).toMatch(/over the 262144-byte limit.*file/s);
    expect((await handle.workflow.describe()).status.name).toBe('RUNNING');
    fake.enqueue(say('small is fine'));
    expect(await handle.prompt('a normal prompt')).toBe('small is fine');
    // The refused update never entered history.
    const history = await handle.fetchHistory();
    const accepted = history.events!.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes);
    expect(accepted).toHaveLength(2);
    await handle.close();
    await handle.result();
  });

  it('gives compact(null) and a malformed prompt clear validation errors naming the field', async () => {
    const handle = await servingChat();
    await expect(handle.compact(null as any)).rejects.toMatchObject({ code: 'INVALID_INPUT', message: expect.stringMatching(/compact request/) });
    await expect(handle.compact({ keepRecentEntries: 0 })).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'keepRecentEntries' });
    await expect(handle.prompt('')).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'text' });
    // Whitespace only: the API would refuse it (400), so the validator does first.
    await expect(handle.prompt(' \n\t ')).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'text' });
    await expect(
      handle.workflow.executeUpdate('fh.prompt', { args: [{ text: 'hi', extra: 1 } as any] }).catch((e) => {
        throw e.cause;
      }),
    ).rejects.toMatchObject({ type: 'INVALID_INPUT' });
    fake.enqueue(say('usable'));
    expect(await handle.prompt('ok?')).toBe('usable');
    await handle.close();
    await handle.result();
  });

  it('answers a prompt sent to a run that never serves with NOT_SERVING before the run ends', async () => {
    proxy.delayNext(2_000); // the run's own prompt takes a while
    fake.enqueue(say('own answer'));
    const handle = await startAgent(
      w.client,
      chatter,
      { prompts: ['my own task'], compaction: { enabled: false } },
      { workflowId: wid('no-serve'), taskQueue: w.taskQueue },
    );
    await proxy.held();
    const err = await rejection(handle.prompt('are you there?'));
    expect(err).toMatchObject({ code: 'NOT_SERVING', reason: 'never-served' });
    expect(err.message).toMatch(/without calling harness\.serve\(\)/);
    expect(await handle.result()).toMatchObject({ replies: ['own answer'] });
    // Accepted, in history, and answered (with the error) before the run completed.
    const events = (await handle.fetchHistory()).events!;
    const accepted = events.findIndex((e) => e.workflowExecutionUpdateAcceptedEventAttributes);
    const completedUpdate = events.findIndex((e) => e.workflowExecutionUpdateCompletedEventAttributes);
    const completedRun = events.findIndex((e) => e.workflowExecutionCompletedEventAttributes);
    expect(accepted).toBeGreaterThan(0);
    expect(completedUpdate).toBeGreaterThan(accepted);
    expect(completedRun).toBeGreaterThan(completedUpdate);
  });

  it('a prompt to a run that has completed is NOT_SERVING (a typed error), not a raw WorkflowNotFoundError', async () => {
    fake.enqueue(say('done'));
    const handle = await startAgent(
      w.client,
      chatter,
      { prompts: ['the only task'], compaction: { enabled: false } },
      { workflowId: wid('completed'), taskQueue: w.taskQueue },
    );
    await handle.result();
    const err = await rejection(handle.prompt('anyone?'));
    expect(err).toMatchObject({ code: 'NOT_SERVING', reason: 'returned' });
    expect(err.name).not.toBe('WorkflowNotFoundError');
    // A workflow that never existed is still Temporal's not-found, not a NOT_SERVING that would mislead.
    const ghost = await rejection(getAgentHandle(w.client, wid('never-started')).prompt('hello?'));
    expect(ghost.code).toBeUndefined();
    expect(ghost.name).toBe('WorkflowNotFoundError');
  });

  it('a run that returns while a compaction update is still running waits for it (no TMPRL1102)', async () => {
    fake.setRoute((req) => (String(req.body?.system ?? '').startsWith('[fabric-harness:summarize]') ? say('## Goal\nSummary.') : undefined));
    // The run's second prompt takes a while (the first model call goes at once); the client's compaction
    // queues behind it.
    proxy.delayNext(0);
    proxy.delayNext(3_000);
    fake.enqueue(say('one answered'), say('two answered'));
    const handle = await startAgent(
      w.client,
      chatter,
      { prompts: ['one', 'two'], contextWindowTokens: 50_000, compaction: { enabled: false } },
      { workflowId: wid('returns-mid-update'), taskQueue: w.taskQueue },
    );
    try {
      while ((await handle.messages()).length < 3) await new Promise((r) => setTimeout(r, 50));
      const compacted = handle.compact({ keepRecentEntries: 1 });
      // The run returns right after its second prompt, with the compaction (a summary activity) to go.
      expect(await compacted).toMatchObject({ compactedEntries: 3 });
      expect(await handle.result()).toMatchObject({ replies: ['one answered', 'two answered'] });
    } finally {
      fake.setRoute(undefined);
    }
    const log = globalThis.__FH_WORKER_LOG__ ?? [];
    expect(log.filter((e) => /TMPRL1102|update handler/i.test(e.message))).toEqual([]);
  });

  it("the tool queue's activity-only worker does not log Temporal's 'No workflows registered' warning", async () => {
    // This file's worker serves its agents' tool queue with an activity-only worker: wait until it polls.
    const plan = toolQueueOf({ taskQueue: w.taskQueue } as WorkerOptions, TEST_AGENT_MODULES)!;
    for (;;) {
      const d = await w.client.connection.workflowService.describeTaskQueue({
        namespace: w.t.namespace,
        taskQueue: { name: plan.taskQueue },
        taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
      });
      if ((d.pollers ?? []).length > 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const log = globalThis.__FH_WORKER_LOG__ ?? [];
    expect(log.filter((e) => /No workflows registered/.test(e.message))).toEqual([]);
  });

  it('rolls a failed prompt back: the next prompt works and does not carry it', async () => {
    const handle = await servingChat();
    // The API refuses the request (e.g. something it cannot accept in the conversation).
    fake.enqueue(fail(400, { message: 'messages.1.content.0.text: text content blocks must contain non-whitespace text' }));
    await expect(handle.prompt('POISON-ONE')).rejects.toMatchObject({ code: 'MODEL_INVALID_REQUEST' });
    // Context window exceeded with compaction off.
    fake.enqueue(fail(400, { message: 'prompt is too long: 250000 tokens > 200000 maximum' }));
    await expect(handle.prompt('POISON-TWO')).rejects.toMatchObject({ code: 'CONTEXT_WINDOW_EXCEEDED' });

    fake.enqueue(say('recovered'));
    const before = fake.messageRequests().length;
    expect(await handle.prompt('a good prompt')).toBe('recovered');
    const sent = fake.messageRequests().slice(before).map((r) => JSON.stringify(r.body.messages));
    expect(sent).toHaveLength(1);
    expect(sent[0]).not.toMatch(/POISON/);
    expect(sent[0]).toMatch(/a good prompt/);
    const messages = await handle.messages();
    expect(text(messages)).not.toMatch(/POISON/);
    expect(messages.map((m) => m.type)).toEqual(['user', 'assistant', 'user', 'assistant']);
    // The failures stay visible: failed activities in history, error events in the run.
    const events = await handle.events();
    expect(events.filter((e) => e.type === 'error').map((e: any) => e.data.code)).toEqual(['MODEL_INVALID_REQUEST', 'CONTEXT_WINDOW_EXCEEDED']);
    await handle.close();
    await handle.result();
  });

  it('runs a prompt once per idempotency key, also when the first caller timed out', async () => {
    const handle = await servingChat();
    fake.enqueue(say('answer one'));
    const before = fake.messageRequests().length;
    expect(await handle.prompt('once please', { updateId: 'key-1' })).toBe('answer one');
    expect(await handle.prompt('once please', { updateId: 'key-1' })).toBe('answer one');
    expect(fake.messageRequests().length - before).toBe(1);

    // A caller that gives up while the model is slow, then retries with the same key.
    proxy.delayNext(3_000);
    fake.enqueue(say('slow answer'));
    await expect(
      w.client.withDeadline(Date.now() + 1_000, () => handle.prompt('slow one', { updateId: 'key-2' })),
    ).rejects.toBeDefined();
    expect(await handle.prompt('slow one', { updateId: 'key-2' })).toBe('slow answer');
    expect(fake.messageRequests().length - before).toBe(2);
    const messages = await handle.messages();
    expect(messages.filter((m) => m.type === 'user' && m.text === 'slow one')).toHaveLength(1);
    await handle.close();
    await handle.result();
  });
});
