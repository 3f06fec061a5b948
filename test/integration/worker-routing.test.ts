/**
 * Two workers with different agents on ONE task queue (every rolling deploy looks like this for a while):
 * a run is never failed because the worker that picked up its workflow task lacks the agent. An unknown
 * agent fails the workflow task (Temporal retries it, so the worker that has the agent takes it), and tool
 * calls go to the queue of the run's agent set, which only workers running those agents poll. With no
 * worker that knows the agent, the run stays open and says why.
 *
 * Which of two polling workers gets a retried workflow task is chance, and the server backs retries off
 * (5 s, 10 s, 20 s... after the third attempt), so a test that ran both at once took 1 to 130 s. Here the
 * worker without the agent is alone first (each run's task fails on it, and the run stays open), then
 * the worker with the agent takes over: the same guarantee, in a bounded time.
 */
import { randomUUID } from 'node:crypto';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { Client, WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { createWorker, FabricHarnessPlugin, MemoryTranscriptStore, type TranscriptStore } from '@fabric-harness/sdk/worker';
import { FakeAnthropicServer, callTools, say, type RecordedRequest } from '@fabric-harness/sdk/testing';
import { testConnection, type TestConnection } from '../support/temporal';

/** The model: call the agent's one tool, then repeat its result. Stateless, so concurrent runs share it. */
function route(req: RecordedRequest) {
  const body = req.body as { tools?: Array<{ name: string }>; messages: Array<{ content: unknown }> };
  const last = body.messages.at(-1)!.content;
  const result = Array.isArray(last) ? last.find((b: { type: string }) => b.type === 'tool_result') : undefined;
  if (result) return say(`result: ${typeof result.content === 'string' ? result.content : JSON.stringify(result.content)}`);
  const tool = body.tools?.[0]?.name;
  if (tool === 'route_add') return callTools({ name: 'route_add', input: { a: 2, b: 3 } });
  if (tool === 'route_stamp') return callTools({ name: 'route_stamp', input: { note: 'n' } });
  return say('no tool');
}

describe('workers with different agents on one task queue', () => {
  let t: TestConnection;
  let fake: FakeAnthropicServer;
  let client: Client;
  const taskQueue = `routing-${process.pid}-${Date.now()}`;
  const store: TranscriptStore = new MemoryTranscriptStore(); // shared: both workers are one deployment's store
  const running: Array<{ worker: Worker; done: Promise<void> }> = [];
  const connections: NativeConnection[] = [];

  /** A worker of `module` on the shared queue, running (a connection each, as two processes would have). */
  async function startWorker(module: string): Promise<{ worker: Worker; done: Promise<void> }> {
    const connection = await NativeConnection.connect({ address: t.address });
    connections.push(connection);
    const worker = await createWorker({ agents: require.resolve(module), connection, namespace: t.namespace, taskQueue, model: { apiKey: 'test-key', baseURL: fake.url }, store });
    const w = { worker, done: worker.run() };
    running.push(w);
    return w;
  }

  /** The failure message of the run's first failed workflow task, once there is one. */
  async function firstTaskFailure(handle: WorkflowHandle): Promise<string> {
    for (let i = 0; i < 150; i++) {
      const events = (await handle.fetchHistory()).events ?? [];
      const message = events.map((e) => e.workflowTaskFailedEventAttributes?.failure?.message).find((m) => m?.includes('Unknown agent'));
      if (message) return message;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`no failed workflow task on ${handle.workflowId}`);
  }

  beforeAll(async () => {
    t = await testConnection();
    fake = await FakeAnthropicServer.start();
    fake.setRoute(route);
    client = new Client({ connection: t.connection, namespace: t.namespace, plugins: [new FabricHarnessPlugin({ store })] });
  }, 120_000);

  afterAll(async () => {
    for (const w of running) w.worker.getState() === 'RUNNING' && w.worker.shutdown();
    await Promise.all(running.map((w) => w.done));
    await Promise.all(connections.map((c) => c.close()));
    await fake?.stop();
    await t?.close();
  });

  it('a run whose workflow task reached a worker without its agent stays open, and completes on the worker with it', async () => {
    const editor = await startWorker('../fixtures/routing-editor');
    const handles = await Promise.all(
      Array.from({ length: 4 }, (_, i) => client.workflow.start('route-calc', { taskQueue, workflowId: `route-calc-${i}-${randomUUID()}`, args: [] })),
    );
    for (const h of handles) {
      expect(await firstTaskFailure(h)).toMatch(/Unknown agent 'route-calc' on task queue '.*': this worker registers route-editor/);
      expect((await h.describe()).status.name).toBe('RUNNING');
    }
    // The deploy moves on: the worker with the agent comes, the other goes.
    await startWorker('../fixtures/routing-calc');
    editor.worker.shutdown();
    await editor.done;
    const results = await Promise.all(handles.map((h) => h.result().catch((err: unknown) => (err instanceof WorkflowFailedError ? `FAILED: ${err.cause?.message}` : String(err)))));
    expect(results).toEqual(Array(4).fill('result: sum 5'));
    // The tool call went to the agent set's queue, not the shared one the other worker polled too.
    const events = (await handles[0]!.fetchHistory()).events ?? [];
    const queues = events.map((e) => e.activityTaskScheduledEventAttributes).filter((a) => a?.activityType?.name === 'fhTool').map((a) => a!.taskQueue?.name);
    expect(queues).toHaveLength(1);
    expect(queues[0]).not.toBe(taskQueue);
    expect(queues[0]).toContain(taskQueue);
  }, 90_000);

  it('with no worker that knows the agent, the run stays open with a workflow task failure naming the task queue', async () => {
    const handle = await client.workflow.start('route-nobody', { taskQueue, workflowId: `route-nobody-${randomUUID()}`, args: [] });
    const message = await firstTaskFailure(handle);
    expect(message).toContain(`Unknown agent 'route-nobody' on task queue '${taskQueue}'`);
    expect(message).toMatch(/this worker registers route-calc/);
    const described = await handle.describe();
    expect(described.status.name).toBe('RUNNING'); // not FAILED: a worker with the agent can still take it
    expect(described.raw.pendingWorkflowTask?.attempt ?? 0).toBeGreaterThanOrEqual(1);
    await handle.terminate('test done: no worker has this agent');
  }, 60_000);
});
