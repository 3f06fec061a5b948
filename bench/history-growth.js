/**
 * history-growth: workflow history bytes after N model calls of a conversation that grows by ~2 KB per
 * call, for
 *
 *   ours   the real agent workflow through the real worker (createWorker): each model activity gets a
 *          transcript reference and the entries added since its previous call;
 *   naive  a minimal workflow (fixtures/naive-workflow.js) that keeps the messages in workflow state and
 *          passes the FULL list to the model activity on every call.
 *
 * Both run in the same process against one Temporal dev server and one scripted fake Anthropic server
 * (same tool text, system prompt, tool spec and first message), side by side: for each N, the two runs
 * go concurrently. History bytes are `temporal.api.history.v1.History.encode(history).finish().length`
 * of the history the client fetches once the run is over. A run that fails (e.g. the naive one at the
 * 50 MB history limit) is reported as "failed at call K: reason" with the bytes it had reached.
 *
 *   BENCH_HISTORY_CALLS=10,100,300   the Ns (default 10,100,300)
 */
'use strict';
const { promises: fs } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Anthropic } = require('@anthropic-ai/sdk');
const { Client, Connection, WorkflowFailedError } = require('@temporalio/client');
const { temporal } = require('@temporalio/proto');
const { DefaultLogger, NativeConnection, Runtime, Worker, bundleWorkflowCode } = require('@temporalio/worker');
const { startDevServer } = require('../dist/testing/temporal-cli.js');
const { FakeAnthropicServer, callTools, say } = require('../dist/testing/anthropic/fake-anthropic.js');
const { createWorker, bundleAgents, FileTranscriptStore, FabricHarnessPlugin } = require('../dist/worker/index.js');
const { startAgent } = require('../dist/client/index.js');
const { toolSpec } = require('../dist/core/tools.js');
const { DEFAULT_MODEL } = require('../dist/core/models.js');
const { grower, growTool, growText, growPrompt, GROW_SYSTEM } = require('./fixtures/grower-agents.js');

const AGENTS = require.resolve('./fixtures/grower-agents.js');
const NAIVE_WORKFLOWS = require.resolve('./fixtures/naive-workflow.js');
const MODEL = DEFAULT_MODEL;
const MAX_TOKENS = 4096; // the harness's default
const API_KEY = 'bench-key';

function callCounts() {
  const raw = process.env.BENCH_HISTORY_CALLS ?? '10,100,300';
  const ns = raw.split(',').map((s) => Number(s.trim()));
  if (ns.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`BENCH_HISTORY_CALLS must be positive integers, got '${raw}'`);
  return ns;
}

/**
 * The fake's answer to both designs: reads `[model calls: N]` from the first message; calls grow with
 * the next step while the request holds fewer than N-1 tool results, then says done (N calls in all).
 */
function growerRoute(req) {
  const messages = (req.body && req.body.messages) || [];
  const marker = /\[model calls: (\d+)\]/.exec(JSON.stringify(messages[0] ? messages[0].content : ''));
  if (!marker) return undefined;
  const calls = Number(marker[1]);
  let results = 0;
  for (const m of messages) {
    if (Array.isArray(m.content)) results += m.content.filter((b) => b && b.type === 'tool_result').length;
  }
  return results < calls - 1 ? callTools({ name: 'grow', input: { step: results + 1 } }) : say('done');
}

/** The naive design's activities: the same fake through the real Anthropic client, the same tool text. */
function naiveActivities(baseURL) {
  const anthropic = new Anthropic({ apiKey: API_KEY, baseURL, maxRetries: 0 });
  return {
    async naiveModel({ model, maxTokens, system, tools, messages }) {
      const res = await anthropic.messages.create({ model, max_tokens: maxTokens, system, tools, messages });
      const content = res.content.map((b) =>
        b.type === 'tool_use' ? { type: 'tool_use', id: b.id, name: b.name, input: b.input } : { type: 'text', text: b.text },
      );
      return { content, stop_reason: res.stop_reason };
    },
    async naiveTool({ step }) {
      return growText(step);
    },
  };
}

const encodedPayloadBytes = (p) => temporal.api.common.v1.Payload.encode(p).finish().length;

/** Size and shape of a finished (or failed) run's history. */
async function measure(handle, modelActivity) {
  const history = await handle.fetchHistory();
  const events = history.events ?? [];
  const model = events
    .map((e) => e.activityTaskScheduledEventAttributes)
    .filter((a) => a && a.activityType && a.activityType.name === modelActivity);
  const inputs = model.map((a) => ((a.input && a.input.payloads) || []).reduce((n, p) => n + encodedPayloadBytes(p), 0));
  return {
    bytes: temporal.api.history.v1.History.encode(history).finish().length,
    events: events.length,
    modelCalls: model.length,
    largestModelInput: inputs.length ? Math.max(...inputs) : 0,
    reason: failureReason(events),
  };
}

/** Why a run ended badly, from its history (termination, failure, time-out, workflow task failures). */
function failureReason(events) {
  for (const e of [...events].reverse()) {
    if (e.workflowExecutionTerminatedEventAttributes) return `terminated: ${e.workflowExecutionTerminatedEventAttributes.reason || '(no reason)'}`;
    if (e.workflowExecutionFailedEventAttributes) return `failed: ${failureMessage(e.workflowExecutionFailedEventAttributes.failure)}`;
    if (e.workflowExecutionTimedOutEventAttributes) return 'timed out';
    if (e.workflowTaskFailedEventAttributes) {
      const a = e.workflowTaskFailedEventAttributes;
      return `workflow task failed (cause ${a.cause}): ${failureMessage(a.failure)}`;
    }
  }
  return undefined;
}

function failureMessage(f) {
  const parts = [];
  for (let x = f; x; x = x.cause) if (x.message) parts.push(x.message);
  return parts.join(': ') || '(no message)';
}

/** Runs one workflow to its end (or a time limit), then measures its history. Never throws for a failed run. */
async function runOnce(ctx, label, calls, start, modelActivity) {
  const started = Date.now();
  const handle = await start();
  const limitMs = 60_000 + calls * 2_000;
  let timer;
  const outcome = await Promise.race([
    handle.result().then(
      (value) => ({ ok: true, value }),
      (err) => ({ ok: false, err }),
    ),
    new Promise((resolve) => {
      timer = setTimeout(() => resolve({ ok: false, stalled: true }), limitMs);
    }),
  ]);
  clearTimeout(timer);
  if (outcome.stalled) await handle.terminate(`bench time limit (${limitMs / 1000} s)`).catch(() => undefined);
  const ms = Date.now() - started;
  let m;
  try {
    m = await measure(handle, modelActivity);
  } catch (err) {
    const result = `${outcome.ok ? 'completed' : 'failed'}, but its history could not be fetched: ${describeError(err)}`;
    ctx.log(`${label} N=${calls}: ${result}`);
    return { bytes: NaN, events: 0, modelCalls: 0, largestModelInput: NaN, ms, ok: false, result };
  }
  let result;
  if (outcome.ok && m.modelCalls === calls) {
    result = 'ok';
  } else if (outcome.ok) {
    result = `completed, but with ${m.modelCalls} model calls instead of ${calls}`;
  } else {
    const why = outcome.stalled
      ? `no result within ${limitMs / 1000} s${m.reason ? ` (${m.reason})` : ''}`
      : m.reason || describeError(outcome.err);
    result = `failed at call ${m.modelCalls}: ${why}`;
  }
  ctx.log(`${label} N=${calls}: ${result}; history ${ctx.bytes(m.bytes)} (${m.events} events) in ${ctx.seconds(ms)}`);
  return { ...m, ms, ok: result === 'ok', result };
}

function describeError(err) {
  if (err instanceof WorkflowFailedError) return failureMessage(err.cause) || err.message;
  return err && err.message ? err.message : String(err);
}

function quietLogger() {
  const noop = () => undefined;
  return { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: (m) => console.error(m) };
}

module.exports = {
  name: 'history-growth',
  // For other benches: the fake's route for the grower agent, and the history measurement.
  growerRoute,
  measure,
  failureReason,

  description: 'history bytes after 10/100/300 model calls (~2 KB added per call): ours (reference + delta) vs naive (full conversation per call)',

  async run(ctx) {
    try {
      Runtime.install({ logger: new DefaultLogger('WARN') });
    } catch {
      // already installed (another bench in this process)
    }
    const ns = callCounts();
    const cleanups = [];
    const rows = [];
    try {
      const server = await startDevServer({ namespace: 'default', logLevel: 'error', onProgress: (l) => ctx.log(l) });
      cleanups.push(() => server.stop());
      // No request kept: thousands of whole conversations would fill this process's heap.
      const fake = await FakeAnthropicServer.start({ route: growerRoute, contextWindow: 10_000_000, apiKey: API_KEY, keepRequests: 0 });
      cleanups.push(() => fake.stop());
      const storeDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-bench-store-'));
      cleanups.push(() => fs.rm(storeDir, { recursive: true, force: true }));
      const store = new FileTranscriptStore(storeDir);

      const nativeConnection = await NativeConnection.connect({ address: server.address });
      cleanups.push(() => nativeConnection.close());
      // The naive design's history pages pass gRPC's default 4 MB message limit: raise it for this client.
      const connection = await Connection.connect({
        address: server.address,
        channelArgs: { 'grpc.max_receive_message_length': 512 * 1024 * 1024 },
      });
      cleanups.push(() => connection.close());
      const namespace = server.namespace;

      let t = Date.now();
      const [oursBundle, naiveBundle] = await Promise.all([
        bundleAgents(AGENTS, { logger: quietLogger() }),
        bundleWorkflowCode({ workflowsPath: NAIVE_WORKFLOWS, logger: quietLogger() }),
      ]);
      ctx.log(`bundled both workflow designs in ${ctx.seconds(Date.now() - t)}`);

      const oursQueue = `bench-ours-${process.pid}`;
      const naiveQueue = `bench-naive-${process.pid}`;
      const oursWorker = await createWorker({
        agents: AGENTS,
        tools: [growTool],
        connection: nativeConnection,
        namespace,
        taskQueue: oursQueue,
        model: { apiKey: API_KEY, baseURL: fake.url, defaultModel: MODEL },
        store,
        workflowBundle: oursBundle,
      });
      const naiveWorker = await Worker.create({
        connection: nativeConnection,
        namespace,
        taskQueue: naiveQueue,
        workflowBundle: naiveBundle,
        activities: naiveActivities(fake.url),
      });
      // Ours needs the harness's data converter (external storage); the naive design has plain payloads.
      const oursClient = new Client({ connection, namespace, plugins: [new FabricHarnessPlugin({ store })] });
      const naiveClient = new Client({ connection, namespace });
      const naiveInput = (calls) => ({
        calls,
        model: MODEL,
        maxTokens: MAX_TOKENS,
        system: GROW_SYSTEM,
        tools: [toolSpec(growTool)],
        prompt: growPrompt(calls),
      });

      const work = async () => {
        for (const calls of ns) {
          const id = `${Date.now()}-${calls}`;
          ctx.log(`N=${calls}: running ours and naive side by side`);
          const [ours, naive] = await Promise.all([
            runOnce(ctx, 'ours', calls, () => startAgent(oursClient, grower, { calls }, { workflowId: `bench-ours-${id}`, taskQueue: oursQueue }), 'fhModel'),
            runOnce(
              ctx,
              'naive',
              calls,
              () => naiveClient.workflow.start('naiveAgent', { taskQueue: naiveQueue, workflowId: `bench-naive-${id}`, args: [naiveInput(calls)] }),
              'naiveModel',
            ),
          ]);
          const ratio = ours.bytes > 0 ? naive.bytes / ours.bytes : NaN;
          rows.push({
            'model calls': calls,
            'ours history': ctx.bytes(ours.bytes),
            'naive history': ctx.bytes(naive.bytes),
            'naive/ours': `${naive.ok ? '' : '>= '}${ratio.toFixed(1)}x`,
            'ours max model input': ctx.bytes(ours.largestModelInput),
            'naive max model input': ctx.bytes(naive.largestModelInput),
            'ours time': ctx.seconds(ours.ms),
            'naive time': ctx.seconds(naive.ms),
            ours: ours.result,
            naive: naive.result,
          });
        }
      };
      t = Date.now();
      await oursWorker.runUntil(() => naiveWorker.runUntil(work));
      ctx.log(`all runs in ${ctx.seconds(Date.now() - t)}`);
      return rows;
    } finally {
      for (const cleanup of cleanups.reverse()) {
        await Promise.resolve()
          .then(cleanup)
          .catch((err) => ctx.log(`cleanup: ${err && err.message ? err.message : err}`));
      }
    }
  },
};
