/**
 * connections: the same session workload on every connection, each against its protocol's fake, side
 * by side in one run on one worker (issue 30: "history per model call and worker CPU per call for each
 * connection side by side in one run, within 10% of the Anthropic path for history").
 *
 * The workload, per connection: one session (bench/fixtures/session-agents.js: a system prompt, the
 * read_note tool, compaction on), N turns, each a tool call (read_note, a ~1 KB result) and then a
 * streamed reply (400 characters in 8-character deltas, 5 ms apart), read live through promptStream.
 * The Anthropic session names no connection (the default path as it was before connections); the others
 * name theirs and a model of their provider.
 *
 *   history bytes per model call   `History.encode(history).finish().length` of the session's history,
 *                                  divided by its fhModel activities; and its ratio to Anthropic's.
 *                                  The claim: <= 1.10x on every connection (the bench fails otherwise)
 *   worker CPU per model call      the worker runs alone in a child process (bench/connections/worker.js);
 *                                  its `process.cpuUsage()` around each connection's session (they run one
 *                                  after another, so the CPU is that connection's), minus what the idle
 *                                  worker burns over the same wall time, divided by the fhModel activities
 *   fhModel input / result         the mean encoded payload bytes of a model call's activity input and
 *                                  result: where a difference in history per call would come from
 *   fhSummarize, failed activities the session's title (and any compaction summary) and activities that
 *                                  failed: a failed one leaves its failure, stack and all, in history
 *
 * Each connection first runs a one-turn warm-up session (not measured): the first call loads its SDK.
 *
 *   FH_BENCH_CONN_TURNS=10         turns per connection (each two model calls)
 *   FH_BENCH_CONN_ONLY=a,b         only these connections (anthropic is always run: it is the baseline)
 *   FH_BENCH_CONN_DUMP=dir         write each connection's last fhModel input and result, decoded, to
 *                                  dir/<connection>.json: to see where their bytes differ
 */
'use strict';
const { fork } = require('node:child_process');
const { promises: fs } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Client, Connection } = require('@temporalio/client');
const { temporal } = require('@temporalio/proto');
const { startDevServer } = require('../dist/testing/temporal-cli.js');
const testing = require('../dist/testing/index.js');
const { sideRequestRoute } = require('../dist/cli/fake-script.js');
const { FileTranscriptStore, FabricHarnessPlugin } = require('../dist/worker/index.js');
const { startSession } = require('../dist/client/index.js');
const { FH_SEARCH_ATTRIBUTES } = require('../dist/wire/search-attributes.js');
const { DEFAULT_MODEL } = require('../dist/core/models.js');
const { benchSession } = require('./fixtures/session-agents.js');
const { BIG_MESSAGES } = require('./side-by-side/child.js');

const { FakeAnthropicServer, FakeOpenAIResponsesServer, FakeOpenAIChatServer, FakeGeminiServer, FakeBedrockServer, FakeVertexServer, callTools, say } = testing;

const KEY = 'bench-key';
const HISTORY_LIMIT = 1.1;
const STREAM = { chunkChars: 8, delayMs: 5 };
const REPLY_CHARS = 400;
const IDLE_SAMPLES = 3;

/**
 * Each connection: its fake, the worker's settings for it (credentials the fake checks), and the model
 * a session names. `connection: undefined` is the default path (the session names none).
 */
const CONNECTIONS = [
  {
    name: 'anthropic',
    start: () => FakeAnthropicServer.start({ apiKey: KEY }),
    settings: (fake) => ({ provider: 'anthropic', baseURL: fake.url, apiKey: KEY }),
    session: {},
  },
  {
    name: 'openai',
    start: () => FakeOpenAIResponsesServer.start({ apiKey: KEY }),
    settings: (fake) => ({ provider: 'openai', baseURL: fake.url, apiKey: KEY }),
    session: { connection: 'openai', model: 'gpt-5.1' },
  },
  {
    name: 'openai-chat',
    start: () => FakeOpenAIChatServer.start({ apiKey: KEY }),
    settings: (fake) => ({ provider: 'openai-chat', baseURL: fake.url, apiKey: KEY }),
    session: { connection: 'openai-chat', model: 'gpt-5.1' },
  },
  {
    name: 'google',
    start: () => FakeGeminiServer.start({ apiKey: KEY }),
    settings: (fake) => ({ provider: 'google', baseURL: fake.url, apiKey: KEY }),
    session: { connection: 'google', model: 'gemini-2.5-flash' },
  },
  {
    name: 'bedrock',
    start: () => FakeBedrockServer.start({ awsAccessKey: 'AKIDBENCH', region: 'us-east-1' }),
    settings: (fake) => ({ provider: 'bedrock', baseURL: fake.url, region: 'us-east-1', awsAccessKey: 'AKIDBENCH', awsSecretKey: 'bench-secret' }),
    session: { connection: 'bedrock', model: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0' },
  },
  {
    name: 'vertex',
    start: () => FakeVertexServer.start({ accessToken: 'ya29.bench', projectId: 'bench', region: 'us-east5' }),
    settings: (fake) => ({ provider: 'vertex', baseURL: fake.url, region: 'us-east5', projectId: 'bench', accessToken: 'ya29.bench' }),
    session: { connection: 'vertex', model: 'claude-sonnet-4-5@20250929' },
  },
];

const reply = (turn) => `R${String(turn).padStart(3, '0')} ${'the note says to water the plants on tuesdays. '.repeat(10)}`.slice(0, REPLY_CHARS);

const { positiveInt } = require('./env-int.js');

function selected() {
  const raw = process.env.FH_BENCH_CONN_ONLY;
  if (!raw) return CONNECTIONS;
  const names = raw.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = names.filter((n) => !CONNECTIONS.some((c) => c.name === n));
  if (unknown.length) throw new Error(`FH_BENCH_CONN_ONLY: no connection ${unknown.join(', ')}; there are ${CONNECTIONS.map((c) => c.name).join(', ')}`);
  return CONNECTIONS.filter((c) => c.name === 'anthropic' || names.includes(c.name));
}

/** The worker's child process (its CPU is the worker's alone); `cpuMs()` asks it for its process.cpuUsage(). */
async function startWorkerChild(config, ctx) {
  const child = fork(path.join(__dirname, 'connections', 'worker.js'), [], {
    env: { ...process.env, FH_BENCH_CHILD_CONFIG: JSON.stringify(config) },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  let nextId = 1;
  const pending = new Map();
  await new Promise((resolve, reject) => {
    child.on('message', (m) => {
      if (m.type === 'ready') resolve();
      else if (m.type === 'fatal') {
        ctx.log(`worker: ${m.error}`);
        reject(new Error(`the worker failed: ${m.error.split('\n')[0]}`));
      } else if (m.id !== undefined && pending.has(m.id)) {
        pending.get(m.id)(m);
        pending.delete(m.id);
      }
    });
    child.on('exit', (code) => reject(new Error(`the worker exited (code ${code}) before it was ready`)));
  });
  return {
    cpuMs: () =>
      new Promise((resolve) => {
        const id = nextId++;
        pending.set(id, (m) => resolve((m.user + m.system) / 1000));
        child.send({ type: 'cpu', id });
      }),
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.send({ type: 'exit' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** One session of `turns` turns, each a tool call and a streamed reply; its workflow handle. */
async function runSession(client, taskQueue, conn, turns, label) {
  const id = `bench-conn-${conn.name}-${label}-${Date.now().toString(36)}`;
  const s = await startSession(client, benchSession, { id, taskQueue, ...conn.session });
  for (let turn = 1; turn <= turns; turn++) {
    conn.fake.enqueue(callTools({ name: 'read_note', input: { n: turn } }), say(reply(turn), { stream: STREAM }));
    const p = await s.promptStream(`turn ${turn}: read note ${turn} and tell me what it says`);
    let streamed = '';
    // How many deltas arrive depends on the machine (the worker batches those of one heartbeat); their text must be the reply.
    for await (const e of p) if (e.event.type === 'text_delta') streamed += e.event.text;
    const text = await p.reply;
    if (text !== reply(turn)) throw new Error(`${conn.name}, turn ${turn}: replied '${text.slice(0, 80)}…', expected '${reply(turn).slice(0, 40)}…'`);
    if (streamed !== text) throw new Error(`${conn.name}, turn ${turn}: the stream's text deltas say '${streamed.slice(0, 80)}…', not the reply`);
  }
  return s;
}

const payloadBytes = (payloads) => (payloads?.payloads ?? []).reduce((n, p) => n + temporal.api.common.v1.Payload.encode(p).finish().length, 0);

/** What the session's history says: bytes, model calls, summaries, mean model-call input and result. */
function measure(history) {
  const events = history.events ?? [];
  const modelScheduled = new Set();
  let inputBytes = 0;
  let resultBytes = 0;
  let summaries = 0;
  let failed = 0;
  for (const e of events) {
    if (e.activityTaskFailedEventAttributes) failed++;
    const s = e.activityTaskScheduledEventAttributes;
    if (s?.activityType?.name === 'fhModel') {
      modelScheduled.add(String(e.eventId));
      inputBytes += payloadBytes(s.input);
    }
    if (s?.activityType?.name === 'fhSummarize') summaries++;
    const c = e.activityTaskCompletedEventAttributes;
    if (c && modelScheduled.has(String(c.scheduledEventId))) resultBytes += payloadBytes(c.result);
  }
  const calls = modelScheduled.size;
  return {
    bytes: temporal.api.history.v1.History.encode(history).finish().length,
    events: events.length,
    calls,
    summaries,
    failed,
    meanInput: calls ? inputBytes / calls : NaN,
    meanResult: calls ? resultBytes / calls : NaN,
  };
}

/** The last fhModel activity's input and result, decoded, to dir/<name>.json. */
async function dumpModelCall(dir, name, history) {
  const { defaultPayloadConverter } = require('@temporalio/common');
  const events = history.events ?? [];
  const scheduled = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'fhModel').at(-1);
  const completed = events.find((e) => String(e.activityTaskCompletedEventAttributes?.scheduledEventId) === String(scheduled?.eventId));
  const decode = (payloads) => (payloads?.payloads ?? []).map((p) => defaultPayloadConverter.fromPayload(p));
  await fs.mkdir(dir, { recursive: true });
  const out = { input: decode(scheduled?.activityTaskScheduledEventAttributes?.input), result: decode(completed?.activityTaskCompletedEventAttributes?.result) };
  await fs.writeFile(path.join(dir, `${name}.json`), `${JSON.stringify(out, null, 2)}\n`);
}

module.exports = {
  name: 'connections',
  description: 'every connection against its fake, one worker: history bytes and worker CPU per model call, as ratios to Anthropic',

  async run(ctx) {
    const turns = positiveInt('FH_BENCH_CONN_TURNS', 10);
    const conns = selected().map((c) => ({ ...c }));
    const cleanups = [];
    try {
      const server = await startDevServer({ namespace: 'default', logLevel: 'error', searchAttributes: { ...FH_SEARCH_ATTRIBUTES }, onProgress: (l) => ctx.log(l) });
      cleanups.push(() => server.stop());
      for (const conn of conns) {
        conn.fake = await conn.start();
        cleanups.push(() => conn.fake.stop());
        // Titles and summaries are answered aside, so the queue holds the conversation's replies only.
        conn.fake.setRoute(sideRequestRoute(() => conn.fake.remaining()));
      }
      const storeDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-bench-conn-store-'));
      cleanups.push(() => fs.rm(storeDir, { recursive: true, force: true }));
      const taskQueue = `bench-conn-${process.pid}`;
      const worker = await startWorkerChild(
        {
          address: server.address,
          namespace: server.namespace,
          taskQueue,
          storeDir,
          defaultModel: DEFAULT_MODEL,
          connections: Object.fromEntries(conns.map((c) => [c.name, c.settings(c.fake)])),
        },
        ctx,
      );
      cleanups.push(() => worker.stop());
      const connection = await Connection.connect({ address: server.address, channelArgs: BIG_MESSAGES });
      cleanups.push(() => connection.close());
      const client = new Client({ connection, namespace: server.namespace, plugins: [new FabricHarnessPlugin({ store: new FileTranscriptStore(storeDir) })] });

      for (const conn of conns) {
        const s = await runSession(client, taskQueue, conn, 1, 'warm');
        await s.end();
      }
      // What the idle worker burns per ms of wall time (its long polls): the quietest of a few samples.
      const idle = [];
      for (let i = 0; i < IDLE_SAMPLES; i++) {
        const c0 = await worker.cpuMs();
        const t0 = Date.now();
        await new Promise((r) => setTimeout(r, 1000));
        idle.push(((await worker.cpuMs()) - c0) / (Date.now() - t0));
      }
      const idlePerMs = Math.min(...idle);
      ctx.log(`idle worker: ${(idlePerMs * 1000).toFixed(1)} ms CPU per s`);

      const results = {};
      for (const conn of conns) {
        const c0 = await worker.cpuMs();
        const t0 = Date.now();
        const s = await runSession(client, taskQueue, conn, turns, 'run');
        const wallMs = Date.now() - t0;
        const cpuMs = Math.max(0, (await worker.cpuMs()) - c0 - idlePerMs * wallMs);
        const history = await s.workflow.fetchHistory();
        const m = measure(history);
        if (process.env.FH_BENCH_CONN_DUMP) await dumpModelCall(process.env.FH_BENCH_CONN_DUMP, conn.name, history);
        await s.end();
        results[conn.name] = { ...m, cpuMs, wallMs };
        ctx.log(`${conn.name}: ${m.calls} model calls, ${m.bytes} history bytes, ${m.summaries} fhSummarize, ${m.failed} failed activities, worker CPU ${cpuMs.toFixed(0)} ms over ${wallMs} ms`);
      }

      const base = results.anthropic;
      const basePerCall = base.bytes / base.calls;
      const baseCpu = base.cpuMs / base.calls;
      const rows = [];
      const over = [];
      for (const conn of conns) {
        const r = results[conn.name];
        const perCall = r.bytes / r.calls;
        const ratio = perCall / basePerCall;
        if (ratio > HISTORY_LIMIT) over.push(`${conn.name} ${ratio.toFixed(3)}x (${Math.round(perCall)} B against ${Math.round(basePerCall)} B)`);
        rows.push({
          connection: conn.name,
          'model calls': r.calls,
          'history/model call': ctx.bytes(perCall),
          'vs anthropic': `${ratio.toFixed(3)}x`,
          'fhModel input': ctx.bytes(r.meanInput),
          'fhModel result': ctx.bytes(r.meanResult),
          'worker CPU/model call': `${(r.cpuMs / r.calls).toFixed(1)} ms`,
          'CPU vs anthropic': `${(r.cpuMs / r.calls / baseCpu).toFixed(2)}x`,
          'fhSummarize (title, summaries)': r.summaries,
          'failed activities': r.failed,
        });
      }
      if (over.length) {
        ctx.log(`\n${require('./run.js').formatTable(rows)}\n`);
        throw new Error(`history per model call over ${HISTORY_LIMIT.toFixed(2)}x the Anthropic path's: ${over.join('; ')}`);
      }
      return rows;
    } finally {
      for (const c of cleanups.reverse()) await c().catch(() => undefined);
    }
  },
};
