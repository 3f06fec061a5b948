/**
 * streaming: a session through the real worker on a dev server, the fake model streaming each reply
 * as 100 small deltas (4 characters) 20 ms apart, with streaming off and on, side by side in one run.
 *
 *   history bytes per model call   the session's history (`History.encode(...).length`) divided by its
 *                                  model calls: streaming on (deltas in heartbeat details) against off
 *   time to first delta            prompt sent (promptStream) to the first text_delta at the client,
 *                                  median over the turns; against the time to the whole reply
 *
 * With streaming on a subscriber follows the session's stream the whole time (s.stream()), so the
 * history is measured with someone watching. The claim: on/off history <= 1.5, and the first delta
 * arrives long before the reply is complete (a ratio, machines differ).
 *
 *   FH_BENCH_STREAM_TURNS=10   turns per mode
 */
'use strict';
const { promises: fs } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Client, Connection } = require('@temporalio/client');
const { temporal } = require('@temporalio/proto');
const { DefaultLogger, NativeConnection, Runtime } = require('@temporalio/worker');
const { startDevServer } = require('../dist/testing/temporal-cli.js');
const { FakeAnthropicServer, say } = require('../dist/testing/anthropic/fake-anthropic.js');
const { createWorker, bundleAgents, FileTranscriptStore, FabricHarnessPlugin } = require('../dist/worker/index.js');
const { startSession } = require('../dist/client/index.js');
const { FH_SEARCH_ATTRIBUTES } = require('../dist/wire/search-attributes.js');
const { DEFAULT_MODEL } = require('../dist/core/models.js');
const { benchSession, noteTool } = require('./fixtures/session-agents.js');

const AGENTS = require.resolve('./fixtures/session-agents.js');
const API_KEY = 'bench-key';
const DELTAS = 100;
const CHUNK = 4;
const DELAY_MS = 20;
const ON_OFF_LIMIT = 1.5;

const reply = (turn) => `T${String(turn).padStart(3, '0')} ${'abcdefghij'.repeat(40)}`.slice(0, DELTAS * CHUNK);

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const { positiveInt } = require('./env-int.js');

function quietLogger() {
  const noop = () => undefined;
  return { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: (m) => console.error(m) };
}

module.exports = {
  name: 'streaming',
  description: 'streaming off vs on: history bytes per model call, time to first delta at the client (fake model: 100 deltas 20 ms apart)',

  async run(ctx) {
    try {
      Runtime.install({ logger: new DefaultLogger('WARN') });
    } catch {
      // already installed (another bench in this process)
    }
    const turns = positiveInt('FH_BENCH_STREAM_TURNS', 10);
    const cleanups = [];
    try {
      const server = await startDevServer({ namespace: 'default', logLevel: 'error', searchAttributes: { ...FH_SEARCH_ATTRIBUTES }, onProgress: (l) => ctx.log(l) });
      cleanups.push(() => server.stop());
      const titleRoute = (req) => (typeof req.body?.system === 'string' && /title/i.test(req.body.system) ? say('Streaming Bench') : undefined);
      const fake = await FakeAnthropicServer.start({ route: titleRoute, apiKey: API_KEY, stream: { chunkChars: CHUNK, delayMs: DELAY_MS } });
      cleanups.push(() => fake.stop());
      const storeDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-bench-stream-store-'));
      cleanups.push(() => fs.rm(storeDir, { recursive: true, force: true }));
      const store = new FileTranscriptStore(storeDir);
      const nativeConnection = await NativeConnection.connect({ address: server.address });
      cleanups.push(() => nativeConnection.close());
      const connection = await Connection.connect({ address: server.address });
      cleanups.push(() => connection.close());
      const namespace = server.namespace;
      const bundle = await bundleAgents(AGENTS, { logger: quietLogger() });
      const taskQueue = `bench-stream-${process.pid}`;
      const worker = await createWorker({
        agents: AGENTS,
        tools: [noteTool],
        connection: nativeConnection,
        namespace,
        taskQueue,
        model: { apiKey: API_KEY, baseURL: fake.url, defaultModel: DEFAULT_MODEL },
        store,
        workflowBundle: bundle,
      });
      const client = new Client({ connection, namespace, plugins: [new FabricHarnessPlugin({ store })] });

      const rows = [];
      await worker.runUntil(async () => {
        const results = {};
        for (const streaming of [false, true]) {
          const id = `bench-stream-${streaming ? 'on' : 'off'}-${Date.now().toString(36)}`;
          const s = await startSession(client, benchSession, { id, taskQueue, streaming });
          // Someone watches the whole time (streaming on): the history is measured with a subscriber.
          const abort = new AbortController();
          const watching = streaming
            ? (async () => {
                for await (const _ of s.stream({ signal: abort.signal })) void _;
              })()
            : Promise.resolve();
          const firstDelta = [];
          const whole = [];
          for (let turn = 1; turn <= turns; turn++) {
            fake.enqueue(say(reply(turn)));
            const sent = Date.now();
            if (streaming) {
              const p = await s.promptStream(`turn ${turn}`);
              let first;
              for await (const e of p) if (first === undefined && e.event.type === 'text_delta') first = Date.now() - sent;
              const text = await p.reply;
              if (text !== reply(turn) || p.text() !== text) throw new Error(`turn ${turn}: streamed '${p.text()}', replied '${text}'`);
              firstDelta.push(first ?? NaN);
            } else {
              const text = await s.prompt(`turn ${turn}`);
              if (text !== reply(turn)) throw new Error(`turn ${turn}: replied '${text}'`);
            }
            whole.push(Date.now() - sent);
          }
          abort.abort();
          await watching;
          const history = await s.workflow.fetchHistory();
          const bytes = temporal.api.history.v1.History.encode(history).finish().length;
          const modelCalls = (history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'fhModel').length;
          results[streaming] = { bytes, modelCalls, perCall: bytes / modelCalls, firstDelta: median(firstDelta), whole: median(whole) };
          await s.end();
          ctx.log(`streaming ${streaming ? 'on' : 'off'}: ${turns} turns, ${modelCalls} model calls, ${bytes} history bytes`);
        }
        const off = results[false];
        const on = results[true];
        rows.push({
          streaming: 'off',
          transport: '-',
          'history/model call': ctx.bytes(off.perCall),
          'vs off': '1.00x',
          'first delta (median)': '-',
          'whole reply (median)': `${off.whole} ms`,
          'first/whole': '-',
        });
        const ratio = on.perCall / off.perCall;
        rows.push({
          streaming: 'on',
          transport: 'heartbeat details (Temporal only)',
          'history/model call': ctx.bytes(on.perCall),
          'vs off': `${ratio.toFixed(2)}x`,
          'first delta (median)': `${on.firstDelta} ms`,
          'whole reply (median)': `${on.whole} ms`,
          'first/whole': `${(on.firstDelta / on.whole).toFixed(2)}x`,
        });
        if (ratio > ON_OFF_LIMIT) throw new Error(`history per model call with streaming on is ${ratio.toFixed(2)}x off (limit ${ON_OFF_LIMIT}x)`);
      });
      return rows;
    } finally {
      for (const c of cleanups.reverse()) await c().catch(() => undefined);
    }
  },
};
