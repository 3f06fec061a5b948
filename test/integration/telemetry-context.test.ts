/**
 * OpenTelemetry spans of context management on the real dev server: a run that compacts and climbs the
 * overflow ladder (test/fixtures/ladder-agents.ts; the fake rejects the last prompt as too long until
 * the tool results are purged) exports one `fabric.compaction` span per compaction, one
 * `fabric.overflow_step <step>` span per ladder step and a `fabric.compaction.decide` span under each
 * deciding model call, received by an in-process OTLP receiver. The worker keeps no workflow cache, so
 * every workflow task replays the run from its history first: each span still arrives once. Replaying
 * the recorded run exports nothing.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { isEvent, type AgentEvent } from '@fabric-harness/sdk';
import { startAgent } from '@fabric-harness/sdk/client';
import { bundleAgents, createTelemetry, createWorker, FabricHarnessPlugin, FileTranscriptStore, type Telemetry } from '@fabric-harness/sdk/worker';
import { callTools, fail, FakeAnthropicServer, say, type RecordedRequest } from '@fabric-harness/sdk/testing';
import { ladderer } from '../fixtures/ladder-agents';
import { startReceiver, type ReceivedSpan } from '../support/otlp-receiver';
import { testConnection, type TestConnection } from '../support/temporal';

const AGENTS = [path.resolve(__dirname, '../fixtures/ladder-agents.ts')];
const MARKER = '[fabric-harness:summarize]';
const FINAL = 'read page 3 please';
const isSummary = (r: RecordedRequest) => String(r.body?.system ?? '').startsWith(MARKER);
const body = (r: RecordedRequest) => JSON.stringify(r.body.messages);
/** How many full page results a request carries (each is 300 repetitions). */
const bigResults = (r: RecordedRequest) => (body(r).match(/lorem ipsum dolor lorem/g) ?? []).length / 299;

describe('OpenTelemetry spans of compaction and the overflow ladder', () => {
  let fake: FakeAnthropicServer;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let telemetry: Telemetry;
  let t: TestConnection;

  beforeAll(async () => {
    fake = await FakeAnthropicServer.start({
      route: (req) => {
        if (isSummary(req)) return say('## Goal\nRead the manual.\n## Progress\nRead pages.');
        // The last prompt fits once at most one page result is left: emergency compaction, then the purge.
        return !body(req).includes(FINAL) || bigResults(req) <= 1 ? undefined : fail(400, { message: 'prompt is too long: 250000 tokens > 200000 maximum' });
      },
    });
    receiver = await startReceiver();
    telemetry = createTelemetry({ endpoint: receiver.url, exportImmediately: true, serviceName: 'fh-test-context' });
    t = await testConnection();
  });
  afterAll(async () => {
    await telemetry?.shutdown();
    await receiver?.close();
    await t?.close();
    await fake?.stop();
  });

  it('compactions and ladder steps are spans, each exported once by a worker that replays every task; a replay exports none', async () => {
    const bundle = await bundleAgents(AGENTS, { workflowInterceptorModules: [require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors')], logger: quiet() });
    const store = new FileTranscriptStore(await fs.mkdtemp(path.join(os.tmpdir(), 'fh-otel-ctx-')));
    const taskQueue = `otel-ctx-${process.pid}-${Date.now()}`;
    const events: AgentEvent[] = [];
    const worker = await createWorker({
      agents: AGENTS,
      connection: t.nativeConnection,
      namespace: t.namespace,
      taskQueue,
      model: { apiKey: 'k', baseURL: fake.url },
      store,
      telemetry,
      workflowBundle: bundle,
      onEvent: (e) => events.push(e),
      // No workflow cache: every workflow task rebuilds the run by replaying its history on this worker.
      maxCachedWorkflows: 0,
    });
    const client = new Client({ connection: t.connection, namespace: t.namespace, plugins: [new FabricHarnessPlugin({ store }), telemetry.plugin] });
    const running = worker.run();
    let history;
    let workflowId;
    try {
      for (let i = 0; i < 3; i++) fake.enqueue(callTools({ name: 'read_page', input: { n: i } }), callTools({ name: 'read_page', input: { n: i + 10 } }), say(`read ${i}`));
      fake.enqueue(say('answered'));
      const handle = await startAgent(client, ladderer, { prompts: ['read page 0', 'read page 1', 'read page 2', FINAL] }, { workflowId: `otel-ctx-${Date.now()}`, taskQueue });
      expect((await handle.result()).replies.at(-1)).toBe('answered');
      history = await handle.fetchHistory();
      workflowId = handle.workflowId;
    } finally {
      worker.shutdown();
      await running;
    }
    await telemetry.forceFlush();
    const spans = [...receiver.spans];
    const named = (prefix: string) => spans.filter((s) => s.name === prefix || s.name.startsWith(`${prefix} `));

    // Exactly once: no span id twice, and as many spans as the run had events.
    expect(new Set(spans.map((s) => s.spanId)).size).toBe(spans.length);
    const steps = events.flatMap((e) => (isEvent(e, 'overflow_step') ? [e.data.step] : []));
    expect(steps).toEqual(['emergency-compaction', 'purge-tool-results']);
    const ladder = named('fabric.overflow_step');
    expect(ladder.map((s) => s.name)).toEqual(steps.map((step) => `fabric.overflow_step ${step}`));
    for (const [i, s] of ladder.entries()) {
      expect(s.attributes).toMatchObject({ 'fabric.ladder.step': steps[i], 'fabric.ladder.applied': true, 'gen_ai.conversation.id': workflowId });
      expect(String(s.attributes['fabric.ladder.why'])).not.toBe('');
    }
    const compactions = events.filter((e) => isEvent(e, 'compaction'));
    expect(compactions.length).toBeGreaterThanOrEqual(2); // the run's own compaction after the warm-up, the ladder's emergency one
    const compactionSpans = named('fabric.compaction');
    expect(compactionSpans).toHaveLength(compactions.length);
    for (const [i, s] of compactionSpans.entries()) {
      const data = (compactions[i] as Extract<AgentEvent, { type: 'compaction' }>).data;
      expect(s.attributes).toMatchObject({ 'fabric.compaction.tokens_before': data.tokensBefore, 'fabric.compaction.tokens_after': data.tokensAfter, 'gen_ai.conversation.id': workflowId });
    }
    // The decisions made in model calls: under their RunActivity:fhModel, one per deciding call.
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const decisions = named('fabric.compaction.decide');
    expect(decisions.length).toBeGreaterThan(0);
    expect(new Set(decisions.map((s) => (s.parentSpanId ? byId.get(s.parentSpanId)?.name : undefined)))).toEqual(new Set(['RunActivity:fhModel']));
    for (const s of decisions) expect(typeof s.attributes['fabric.compaction.compact']).toBe('boolean');
    // All in the run's trace.
    const run = named('RunWorkflow:ladderer');
    expect(run.length).toBeGreaterThan(0);
    expect(new Set([...ladder, ...compactionSpans, ...decisions].map((s: ReceivedSpan) => s.traceId))).toEqual(new Set([run[0]!.traceId]));

    // Replaying the recorded run (same telemetry) exports nothing.
    const before = receiver.spans.length;
    await Worker.runReplayHistory({ workflowBundle: bundle, plugins: [new FabricHarnessPlugin(), telemetry.plugin], replayName: 'otel-ctx-replay' }, history!, workflowId);
    await telemetry.forceFlush();
    expect(receiver.spans.length).toBe(before);
  }, 180_000);
});

function quiet() {
  const noop = () => undefined;
  return { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: (m: string) => console.error(m) };
}
