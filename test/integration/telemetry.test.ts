/**
 * OpenTelemetry on the real dev server: one prompt's spans, received by an OTLP/HTTP receiver in this
 * test, form one tree — client StartWorkflow → RunWorkflow → StartActivity → RunActivity → our
 * `chat <model>` / `execute_tool <name>` / `fabric.compaction.decide` spans with GenAI attributes —
 * and replaying the run exports no span at all.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@temporalio/client';
import { Worker, type WorkflowBundle } from '@temporalio/worker';
import { startAgent, startSession } from '@fabric-harness/sdk/client';
import { bundleAgents, createTelemetry, createWorker, FabricHarnessPlugin, FileTranscriptStore, type Telemetry } from '@fabric-harness/sdk/worker';
import { callTools, FakeAnthropicServer, say } from '@fabric-harness/sdk/testing';
import { traced, tracedSession } from '../fixtures/ecosystem-agents';
import { testConnection, type TestConnection } from '../support/temporal';
import { startReceiver, type ReceivedSpan } from '../support/otlp-receiver';

const AGENTS = [path.resolve(__dirname, '../fixtures/ecosystem-agents.ts')];

describe('OpenTelemetry traces', () => {
  let fake: FakeAnthropicServer;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let telemetry: Telemetry;
  let t: TestConnection;
  let bundle: WorkflowBundle;

  beforeAll(async () => {
    fake = await FakeAnthropicServer.start();
    receiver = await startReceiver();
    telemetry = createTelemetry({ endpoint: receiver.url, exportImmediately: true, serviceName: 'fh-test' });
    t = await testConnection();
    bundle = await bundleAgents(AGENTS, { workflowInterceptorModules: [require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors')], logger: quiet() });
  });
  afterAll(async () => {
    await telemetry?.shutdown();
    await receiver?.close();
    await t?.close();
    await fake?.stop();
  });

  it('one prompt makes one tree of spans; a replay exports none', async () => {
    const store = new FileTranscriptStore(await fs.mkdtemp(path.join(os.tmpdir(), 'fh-otel-')));
    const taskQueue = `otel-${process.pid}-${Date.now()}`;
    const worker = await createWorker({ agents: AGENTS, connection: t.nativeConnection, namespace: t.namespace, taskQueue, model: { apiKey: 'k', baseURL: fake.url }, store, telemetry, workflowBundle: bundle });
    const client = new Client({ connection: t.connection, namespace: t.namespace, plugins: [new FabricHarnessPlugin({ store }), telemetry.plugin] });
    const running = worker.run();
    let history;
    let workflowId;
    try {
      fake.enqueue(callTools({ name: 'sum', input: { a: 2, b: 3 } }), say('5'));
      const handle = await startAgent(client, traced, { task: 'add 2 and 3' }, { workflowId: `otel-${Date.now()}`, taskQueue });
      expect(await handle.result()).toBe('5');
      history = await handle.fetchHistory();
      workflowId = handle.workflowId;
    } finally {
      worker.shutdown();
      await running;
    }
    await telemetry.forceFlush();
    const spans = [...receiver.spans];
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const parentName = (s: ReceivedSpan) => (s.parentSpanId ? byId.get(s.parentSpanId)?.name : undefined);
    const named = (name: string) => spans.filter((s) => s.name === name);

    // One trace, rooted at the client's StartWorkflow.
    const start = named('StartWorkflow:eco-traced');
    expect(start).toHaveLength(1);
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([start[0]!.traceId]));
    expect(named('RunWorkflow:eco-traced').map(parentName)).toEqual(['StartWorkflow:eco-traced']);
    expect(named('StartActivity:fhModel').map(parentName)).toEqual(['RunWorkflow:eco-traced', 'RunWorkflow:eco-traced']);
    expect(named('RunActivity:fhModel').map(parentName)).toEqual(['StartActivity:fhModel', 'StartActivity:fhModel']);

    // Our spans under the activities, with GenAI attributes.
    const chats = spans.filter((s) => s.name.startsWith('chat '));
    expect(chats).toHaveLength(2);
    expect(chats.map(parentName)).toEqual(['RunActivity:fhModel', 'RunActivity:fhModel']);
    expect(chats[0]!.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'anthropic', 'gen_ai.response.finish_reasons': expect.anything() });
    expect(Number(chats[0]!.attributes['gen_ai.usage.input_tokens'])).toBeGreaterThan(0);
    expect(Number(chats[0]!.attributes['gen_ai.usage.output_tokens'])).toBeGreaterThan(0);
    const tool = named('execute_tool sum');
    expect(tool.map(parentName)).toEqual(['RunActivity:fhTool']);
    expect(tool[0]!.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'sum' });
    const decisions = named('fabric.compaction.decide');
    expect(decisions).toHaveLength(2);
    expect(decisions.map(parentName)).toEqual(['RunActivity:fhModel', 'RunActivity:fhModel']);
    expect(decisions[0]!.attributes).toMatchObject({ 'fabric.compaction.compact': false });

    // Replaying the run (with the same telemetry) exports nothing.
    const before = receiver.spans.length;
    await Worker.runReplayHistory({ workflowBundle: bundle, plugins: [new FabricHarnessPlugin(), telemetry.plugin], replayName: 'otel-replay' }, history!, workflowId);
    await telemetry.forceFlush();
    expect(receiver.spans.length).toBe(before);
  });
});

describe('OpenTelemetry spans from workflow code', () => {
  let fake: FakeAnthropicServer;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let telemetry: Telemetry;
  let t: TestConnection;

  beforeAll(async () => {
    fake = await FakeAnthropicServer.start();
    receiver = await startReceiver();
    telemetry = createTelemetry({ endpoint: receiver.url, exportImmediately: true });
    t = await testConnection();
  });
  afterAll(async () => {
    await telemetry?.shutdown();
    await receiver?.close();
    await t?.close();
    await fake?.stop();
  });

  it('an approval is a span from its request to its decision, in the session workflow trace', async () => {
    const bundle = await bundleAgents(AGENTS, { workflowInterceptorModules: [require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors')], logger: quiet() });
    const store = new FileTranscriptStore(await fs.mkdtemp(path.join(os.tmpdir(), 'fh-otel-')));
    const taskQueue = `otel-session-${process.pid}-${Date.now()}`;
    const worker = await createWorker({ agents: AGENTS, connection: t.nativeConnection, namespace: t.namespace, taskQueue, model: { apiKey: 'k', baseURL: fake.url }, store, telemetry, workflowBundle: bundle });
    const client = new Client({ connection: t.connection, namespace: t.namespace, plugins: [new FabricHarnessPlugin({ store }), telemetry.plugin] });
    const running = worker.run();
    try {
      const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-otel-dir-'));
      const session = await startSession(client, tracedSession, { taskQueue, title: 'Traced', settings: { permissionMode: 'ask', workingDirectory: dir } });
      fake.enqueue(callTools({ name: 'write_file', input: { path: 'a.txt', content: 'x' } }), say('written'));
      const { messageId } = await session.send('write a.txt');
      let pending = await session.pendingApprovals();
      for (let i = 0; pending.length === 0 && i < 200; i++) {
        await new Promise((r) => setTimeout(r, 50));
        pending = await session.pendingApprovals();
      }
      await session.approve(pending[0]!.callId);
      expect(await session.reply(messageId)).toBe('written');
      await session.end();
    } finally {
      worker.shutdown();
      await running;
    }
    await telemetry.forceFlush();
    const approval = receiver.spans.filter((s) => s.name === 'fabric.approval write_file');
    expect(approval).toHaveLength(1);
    expect(approval[0]!.attributes).toMatchObject({ 'gen_ai.tool.name': 'write_file', 'fabric.approval.approved': true });
    // In the session's trace: the same trace as its workflow's spans.
    const run = receiver.spans.find((s) => s.name === 'RunWorkflow:eco-traced-session');
    expect(run).toBeDefined();
    expect(approval[0]!.traceId).toBe(run!.traceId);
  });
});

function quiet() {
  const noop = () => undefined;
  return { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: (m: string) => console.error(m) };
}
