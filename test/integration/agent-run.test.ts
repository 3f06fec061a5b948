import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { startAgent } from '@fabric-harness/sdk/client';
import { FakeAnthropicServer, callTools, say } from '@fabric-harness/sdk/testing';
import { FabricHarnessPlugin, workflowsPathFor } from '@fabric-harness/sdk/worker';
import { addTool, calculator } from '../fixtures/agents';
import { testConnection } from '../support/temporal';
import { startTestWorker, type TestWorker } from '../support/test-worker';

function script() {
  return [
    callTools({ name: 'add', input: { a: 2, b: 3 } }),
    callTools({ name: 'write_file', input: { path: 'sum.txt', content: '5' } }),
    say('The sum is 5, written to sum.txt.'),
  ];
}

describe('an agent with two tools', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;
  let dir: string;

  beforeAll(async () => {
    fake = await FakeAnthropicServer.start();
    w = await startTestWorker({ name: 'agent-run', baseURL: fake.url });
  });

  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-calc-'));
  });

  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  it('completes as a workflow: one activity per model call and per tool call', async () => {
    fake.enqueue(...script());
    const workflowId = `calc-${Date.now()}`;
    const handle = await startAgent(w.client, calculator, { task: 'Add 2 and 3, then save the sum', dir }, { workflowId, taskQueue: w.taskQueue });
    const result = await handle.result();
    expect(result.reply).toBe('The sum is 5, written to sum.txt.');
    expect(result.usage.modelCalls).toBe(3);
    expect(await fs.readFile(path.join(dir, 'sum.txt'), 'utf8')).toBe('5');

    const history = await handle.fetchHistory();
    const scheduled = history.events!.filter((e) => e.activityTaskScheduledEventAttributes).map(
      (e) => e.activityTaskScheduledEventAttributes!.activityType!.name,
    );
    expect(scheduled.filter((n) => n === 'fhModel')).toHaveLength(3);
    expect(scheduled.filter((n) => n === 'fhTool')).toHaveLength(2);

    // What the model was sent: every tool_result answers the tool_use just before it.
    const sent = fake.messageRequests().slice(-3).map((r) => r.body);
    expect(sent).toHaveLength(3);
    const last = sent[2].messages;
    expect(last.map((m: any) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
    expect(last[2].content[0]).toMatchObject({ type: 'tool_result', tool_use_id: last[1].content[0].id, content: '5' });
    expect(last[4].content[0]).toMatchObject({ type: 'tool_result', tool_use_id: last[3].content[0].id });
    expect(sent[0].tools.map((tl: any) => tl.name)).toEqual(['add', 'write_file']);
    expect(sent[0].system).toContain('careful calculator');
  });

  it('streams its model calls unless started with streaming: false, and sends the same conversation either way', async () => {
    const run = async (streaming: boolean | undefined) => {
      fake.enqueue(...script());
      const before = fake.messageRequests().length;
      const opts = { workflowId: `calc-stream-${streaming}-${Date.now()}`, taskQueue: w.taskQueue, ...(streaming === undefined ? {} : { streaming }) };
      const handle = await startAgent(w.client, calculator, { task: 'Add 2 and 3, then save the sum', dir }, opts);
      expect((await handle.result()).reply).toBe('The sum is 5, written to sum.txt.');
      return fake.messageRequests().slice(before).map((r) => r.body);
    };
    const streamed = await run(undefined);
    const plain = await run(false);
    expect(streamed.map((b) => b.stream)).toEqual([true, true, true]);
    expect(plain.map((b) => b.stream)).toEqual([undefined, undefined, undefined]);
    // The tool_use ids differ per run; everything else the model is sent is the same.
    const shape = (b: any) => JSON.stringify(b.messages).replace(/"(id|tool_use_id)":"[^"]*"/g, '"$1":"ID"');
    expect(plain.map(shape)).toEqual(streamed.map(shape));
    await expect(startAgent(w.client, calculator, { task: 'x', dir }, { workflowId: `calc-bad-${Date.now()}`, taskQueue: w.taskQueue, streaming: 'no' as never })).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'streaming' });
  });

  it('the same definition completes inline with the same result', async () => {
    fake.enqueue(...script());
    const before = fake.messageRequests().length;
    const result = await calculator.invoke({ task: 'Add 2 and 3, then save the sum', dir }, { apiKey: 'test-key', baseURL: fake.url });
    expect(result.reply).toBe('The sum is 5, written to sum.txt.');
    expect(await fs.readFile(path.join(dir, 'sum.txt'), 'utf8')).toBe('5');
    expect(fake.messageRequests().length - before).toBe(3);
  });
});

/** A plain Worker.create and Client with nothing but the plugin and workflowsPathFor. */
async function pluginWorker(t: Awaited<ReturnType<typeof testConnection>>, taskQueue: string, baseURL: string): Promise<{ worker: Worker; client: Client }> {
  const plugin = new FabricHarnessPlugin({ tools: [addTool], model: { apiKey: 'test-key', baseURL } });
  const worker = await Worker.create({
    connection: t.nativeConnection,
    namespace: t.namespace,
    taskQueue,
    plugins: [plugin],
    workflowsPath: await workflowsPathFor(require.resolve('../fixtures/agents')),
  });
  return { worker, client: new Client({ connection: t.connection, namespace: t.namespace, plugins: [plugin] }) };
}

describe('the harness as a plugin on a plain Worker.create and Client', () => {
  it('runs an agent with nothing but the plugin and workflowsPathFor', async () => {
    const fake = await FakeAnthropicServer.start({ script: [callTools({ name: 'add', input: { a: 20, b: 22 } }), say('42')] });
    const t = await testConnection();
    try {
      const taskQueue = `plugin-${process.pid}`;
      const { worker, client } = await pluginWorker(t, taskQueue, fake.url);
      const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-plugin-'));
      const result = await worker.runUntil(async () =>
        (await startAgent(client, calculator, { task: 'add 20 and 22', dir }, { workflowId: `plugin-${Date.now()}`, taskQueue })).result(),
      );
      expect(result.reply).toBe('42');
    } finally {
      await t.close();
      await fake.stop();
    }
  });

  it('worker.runUntil ends when its promise is rejected at once (an input refused before it reaches Temporal), with the worker stopped', async () => {
    // Temporal's runUntil stops the worker only if it is RUNNING when the promise settles; the plugin
    // awaited the tool queue's worker before letting it run, so this waited forever.
    const t = await testConnection();
    try {
      const taskQueue = `plugin-bad-input-${process.pid}`;
      const { worker, client } = await pluginWorker(t, taskQueue, 'http://127.0.0.1:9');
      const refused = startAgent(client, calculator, { task: 42 } as never, { workflowId: `plugin-bad-${Date.now()}`, taskQueue });
      let timer: NodeJS.Timeout | undefined;
      const hung = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`runUntil still waiting after 15 s; worker ${worker.getState()}`)), 15_000)));
      try {
        await expect(Promise.race([worker.runUntil(refused), hung])).rejects.toThrow(/task/);
      } finally {
        clearTimeout(timer);
      }
      expect(worker.getState()).toBe('STOPPED');
    } finally {
      await t.close();
    }
  });
});
