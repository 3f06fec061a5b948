/**
 * A session of an agent no polling worker knows is refused when it starts (UNKNOWN_AGENT, naming the
 * agents that worker has), and ended rather than left waiting; with no worker polling, nothing can be
 * told yet and the session is started to wait for one. An agent run (startAgent) is refused the same way.
 */
import { startAgent, startSession } from '@fabric-harness/sdk/client';
import { FakeAnthropicServer } from '@fabric-harness/sdk/testing';
import { startTestWorker, type TestWorker } from '../support/test-worker';

describe('startSession with an agent the workers do not know', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;

  beforeAll(async () => {
    fake = await FakeAnthropicServer.start();
    w = await startTestWorker({ name: 'unknown-agent', baseURL: fake.url });
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  it('is refused at once with UNKNOWN_AGENT naming the known agents, and the session is ended', async () => {
    const id = `unknown-agent-${process.pid}-${Date.now()}`;
    const err = await startSession(w.client, 'editr', { id, taskQueue: w.taskQueue }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'UNKNOWN_AGENT', agent: 'editr', taskQueue: w.taskQueue });
    const known = (err as { known: string[] }).known;
    expect(known.length).toBeGreaterThan(1);
    expect(known).toEqual(expect.arrayContaining(['calculator', 'assistant']));
    expect((await w.client.workflow.getHandle(id).describe()).status.name).toBe('TERMINATED');
  });

  it('startAgent of an agent the workers do not know: UNKNOWN_AGENT at start, the run terminated (not a result that never comes)', async () => {
    const workflowId = `unknown-run-${process.pid}-${Date.now()}`;
    const err = await startAgent(w.client, 'no-such-agent', {}, { workflowId, taskQueue: w.taskQueue }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'UNKNOWN_AGENT', agent: 'no-such-agent', taskQueue: w.taskQueue });
    expect((err as { known: string[] }).known).toEqual(expect.arrayContaining(['calculator', 'assistant']));
    const desc = await w.client.workflow.getHandle(workflowId).describe();
    expect(desc.status.name).toBe('TERMINATED');
  });

  it('a known agent starts as before', async () => {
    const s = await startSession(w.client, 'assistant', { id: `known-agent-${process.pid}-${Date.now()}`, taskQueue: w.taskQueue });
    expect((await w.client.workflow.getHandle(s.id).describe()).status.name).toBe('RUNNING');
    await w.client.workflow.getHandle(s.id).terminate('test done');
  });

  it('with no worker polling the task queue, the session is started to wait for one', async () => {
    const s = await startSession(w.client, 'editr', { id: `no-worker-${process.pid}-${Date.now()}`, taskQueue: `nobody-polls-${Date.now()}` });
    expect((await w.client.workflow.getHandle(s.id).describe()).status.name).toBe('RUNNING');
    await w.client.workflow.getHandle(s.id).terminate('test done');
  });
});
