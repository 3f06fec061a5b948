/**
 * Two workers with different agents on ONE task queue (every rolling deploy looks like this for a while):
 * a run is never failed because the worker that picked up its workflow task or its tool call lacks the
 * agent or the tool. An unknown agent fails the workflow task (Temporal retries it, so the worker that has
 * the agent takes it), and tool calls go to the queue of the run's agent set, which only workers running
 * those agents poll. With no worker that knows the agent, the run stays open and says why.
 */
import { randomUUID } from 'node:crypto';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { Client, WorkflowFailedError } from '@temporalio/client';
import { createWorker, FabricHarnessPlugin, MemoryTranscriptStore } from '@fabric-harness/sdk/worker';
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
  const workers: Array<{ worker: Worker; running: Promise<void> }> = [];
  const connections: NativeConnection[] = [];

  beforeAll(async () => {
    t = await testConnection();
    fake = await FakeAnthropicServer.start();
    fake.setRoute(route);
    const store = new MemoryTranscriptStore(); // shared: both workers are one deployment's store
    for (const module of ['../fixtures/routing-calc', '../fixtures/routing-editor']) {
      // A connection each, as two processes would have: core refuses two workers of one queue on one client.
      const connection = await NativeConnection.connect({ address: t.address });
      connections.push(connection);
      const worker = await createWorker({
        agents: require.resolve(module),
        connection,
        namespace: t.namespace,
        taskQueue,
        model: { apiKey: 'test-key', baseURL: fake.url },
        store,
      });
      workers.push({ worker, running: worker.run() });
    }
    client = new Client({ connection: t.connection, namespace: t.namespace, plugins: [new FabricHarnessPlugin({ store })] });
  }, 120_000);

  afterAll(async () => {
    for (const w of workers) w.worker.shutdown();
    await Promise.all(workers.map((w) => w.running));
    await Promise.all(connections.map((c) => c.close()));
    await fake?.stop();
    await t?.close();
  });

  it('every run of either agent completes (4 each, started together)', async () => {
    const runs = ['route-calc', 'route-editor'].flatMap((agent) =>
      Array.from({ length: 4 }, (_, i) => client.workflow.start(agent, { taskQueue, workflowId: `${agent}-${i}-${randomUUID()}`, args: [] })),
    );
    const handles = await Promise.all(runs);
    const results = await Promise.all(handles.map((h) => h.result().catch((err: unknown) => (err instanceof WorkflowFailedError ? `FAILED: ${err.cause?.message}` : String(err)))));
    expect(results).toEqual([...Array(4).fill('result: sum 5'), ...Array(4).fill('result: stamped n')]);
    for (const h of handles) expect((await h.describe()).status.name).toBe('COMPLETED');
  }, 120_000);

  it('with no worker that knows the agent, the run stays open with a workflow task failure naming the task queue', async () => {
    const handle = await client.workflow.start('route-nobody', { taskQueue, workflowId: `route-nobody-${randomUUID()}`, args: [] });
    let message: string | undefined;
    for (let i = 0; i < 150 && !message; i++) {
      const events = (await handle.fetchHistory()).events ?? [];
      message = events.map((e) => e.workflowTaskFailedEventAttributes?.failure?.message).find((m) => m?.includes("Unknown agent 'route-nobody'")) ?? undefined;
      if (!message) await new Promise((r) => setTimeout(r, 200));
    }
    expect(message).toContain(`on task queue '${taskQueue}'`);
    expect(message).toMatch(/this worker registers route-(calc|editor)/);
    const described = await handle.describe();
    expect(described.status.name).toBe('RUNNING'); // not FAILED: a worker with the agent can still take it
    expect(described.raw.pendingWorkflowTask?.attempt ?? 0).toBeGreaterThanOrEqual(1);
    await handle.terminate('test done: no worker has this agent');
  }, 60_000);
});
