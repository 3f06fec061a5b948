/**
 * side-by-side: the floor, ours (compaction off / on) and the peer (@temporalio/ai-sdk) on the same
 * growing conversation, against one Temporal dev server and one fake Anthropic server, in one run.
 *
 *   floor        a bare workflow of N sequential no-op activities (side-by-side/floor-workflow.js):
 *                the least a Temporal workflow pays per step; `floor-tool` the same with two per call
 *   floor-model  the same two activities per call doing the least an agent must: the model call
 *                through the Anthropic SDK, streamed, the conversation kept serialised in the worker's
 *                memory, and the tool's text (side-by-side/floor-model-activities.js)
 *   ours off     the grower agent through createWorker, compaction off (fixtures/grower-agents.js)
 *   ours on      the same with compaction on; the window is far above the conversation, so every call
 *                pays the recorded decision and none compacts (side-by-side/agents.js)
 *   ours on, streaming off   the same started with `streaming: false` (the others stream: an agent
 *                run's model calls stream by default, as SSE from the fake)
 *   peer         Temporal's own AI SDK integration: generateText + temporalProvider, the grow tool an
 *                activity (peer/workflows.js); installed in bench/peer/ with its own Temporal release
 *
 * Each design's worker runs in a child process of its own (side-by-side/*-worker.js, peer/worker.js),
 * so the worker CPU of a design is that process's `process.cpuUsage()` over its run, minus what the
 * idle worker burns over the same wall time (its long polls: the quietest of several one-second
 * samples taken before the first run; a busier second is the warm-up's garbage collection or
 * compilation, which is the work's own cost, not polling). For each N the four runs
 * go concurrently (same server, same moment); then each recorded history is replayed, one at a time,
 * with its design's `Worker.runReplayHistory` (the history fetch is not timed), in a fresh process per
 * design started after every run has ended: a worker that has just run thousands of activities replays
 * with its own garbage and heap state, which once made two designs replaying the very same workflow
 * differ by 1.3x within one run. Each fresh process replays its design's warm-up run once first (module
 * loading and JIT, not timed), and then every history in rounds.
 *
 * Measured per run: history bytes (`History.encode(history).finish().length` of the fetched history),
 * events (total, per model call), largest activity input (encoded payloads of any ActivityTaskScheduled
 * event), worker CPU per model call (on Linux also by thread: the main thread, Temporal core's, the workflow
 * threads, and V8's compiler and garbage-collection helpers; side-by-side/child.js), replay time. For the
 * floor a "model call" is one no-op activity.
 *
 *   FH_BENCH_CALLS=100,1000       the Ns (default 100,1000)
 *   FH_BENCH_RUN_LIMIT_S=420      a run with no result by then is terminated and reported (default 420)
 *   FH_BENCH_REPLAYS=5            each history is replayed this many times (in rounds); the median is kept
 *   FH_BENCH_RESULTS=path.json    where the JSON results go (default bench/results/side-by-side.json)
 *   FH_BENCH_DESIGNS=ours-on      only these designs besides the floors (comma-separated keys; default all)
 *   FH_BENCH_CPU_PROF=dir         run our workers and floor-model's under `node --cpu-prof`, profiles written to
 *                                 dir/<design>/, one per thread (the main thread's and the workflow
 *                                 thread's; the warm-up is in them too, the replays are not; read them with
 *                                 `node bench/cpu-profile-top.js dir/<design>/<file>.cpuprofile`)
 *   FH_BENCH_LAZY_EXTSTORE=1      an experiment: our workers and replayers run with Temporal's external-storage
 *                                 runner made lazy (side-by-side/lazy-external-storage.js), to measure what
 *                                 that change in Temporal would save per call
 *   FH_BENCH_NODE=/path/to/node   every design's worker and replayer runs under this Node binary (the
 *                                 dev server, the fake model and the clients stay on the bench's own):
 *                                 the per-call ratio moves with the Node release (docs/benchmarks.md)
 *
 * The peer is installed (`npm ci --prefix bench/peer`) when bench/peer/node_modules is missing.
 */
'use strict';
const { spawnSync, fork } = require('node:child_process');
const { promises: fs, existsSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Client, Connection } = require('@temporalio/client');
const { temporal } = require('@temporalio/proto');
const { startDevServer } = require('../dist/testing/temporal-cli.js');
const { FakeAnthropicServer } = require('../dist/testing/anthropic/fake-anthropic.js');
const { FileTranscriptStore, FabricHarnessPlugin } = require('../dist/worker/index.js');
const { startAgent } = require('../dist/client/index.js');
const { DEFAULT_MODEL } = require('../dist/core/models.js');
const { growerRoute, failureReason } = require('./history-growth.js');
const { grower, growTool, growPrompt, GROW_SYSTEM, GROW_TEXT_CHARS } = require('./fixtures/grower-agents.js');
const { growerCompacting } = require('./side-by-side/agents.js');

const API_KEY = 'bench-key';
const MAX_TOKENS = 4096; // the harness's default
const PEER_DIR = path.join(__dirname, 'peer');
const RESULTS_FILE = process.env.FH_BENCH_RESULTS || path.join(__dirname, 'results', 'side-by-side.json');
const WARM_UP_CALLS = 3;
const IDLE_SAMPLES = 8;
const BIG_MESSAGES = { 'grpc.max_receive_message_length': 512 * 1024 * 1024 };

/** The designs, in table order. `model` is the activity type that counts as one model call. */
const ALL_DESIGNS = [
  { key: 'floor', label: 'floor (no-op activities)', script: 'side-by-side/floor-worker.js', model: 'noop' },
  // The same activity count per model call as ours (model + tool): N model-like and N-1 tool-like no-ops.
  { key: 'floor-tool', label: 'floor, 2 activities per call (as ours)', script: 'side-by-side/floor-worker.js', model: 'noop' },
  // The same two activities doing the least an agent must: the model call through the Anthropic SDK
  // (the whole conversation sent, streamed) and the tool's text (side-by-side/floor-model-activities.js).
  { key: 'floor-model', label: 'floor, 2 activities, with the model call', script: 'side-by-side/floor-worker.js', model: 'floorModel' },
  { key: 'ours-off', label: 'ours, compaction off', script: 'side-by-side/ours-worker.js', model: 'fhModel' },
  { key: 'ours-on', label: 'ours, compaction on', script: 'side-by-side/ours-worker.js', model: 'fhModel' },
  // The same with the model calls not streaming (startAgent's `streaming: false`): what streaming costs.
  { key: 'ours-on-nostream', label: 'ours, compaction on, streaming off', script: 'side-by-side/ours-worker.js', model: 'fhModel' },
  { key: 'peer', label: 'peer @temporalio/ai-sdk', script: 'peer/worker.js', model: 'invokeModel' },
];

/** FH_BENCH_DESIGNS narrows the run (the floors every ratio is against always run); default: all. */
const DESIGNS = (() => {
  const raw = process.env.FH_BENCH_DESIGNS;
  if (!raw) return ALL_DESIGNS;
  const keys = raw.split(',').map((k) => k.trim());
  const unknown = keys.filter((k) => !ALL_DESIGNS.some((d) => d.key === k));
  if (unknown.length) throw new Error(`FH_BENCH_DESIGNS: no design ${unknown.join(', ')} (there are ${ALL_DESIGNS.map((d) => d.key).join(', ')})`);
  return ALL_DESIGNS.filter((d) => d.key === 'floor' || d.key === 'floor-tool' || d.key === 'floor-model' || keys.includes(d.key));
})();

function callCounts() {
  const raw = process.env.FH_BENCH_CALLS ?? '100,1000';
  const ns = raw.split(',').map((s) => Number(s.trim()));
  if (ns.length === 0 || ns.some((n) => !Number.isInteger(n) || n < 1)) {
    throw new Error(`FH_BENCH_CALLS must be a comma-separated list of positive integers, got '${raw}'`);
  }
  return ns;
}

function replayRounds() {
  const raw = process.env.FH_BENCH_REPLAYS ?? '5';
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`FH_BENCH_REPLAYS must be a positive integer, got '${raw}'`);
  return n;
}

function runLimitMs() {
  const raw = process.env.FH_BENCH_RUN_LIMIT_S ?? '420';
  const s = Number(raw);
  if (!(s > 0)) throw new Error(`FH_BENCH_RUN_LIMIT_S must be a positive number of seconds, got '${raw}'`);
  return s * 1000;
}

/** Installs the peer from its lock file when its node_modules is missing. */
function ensurePeerInstalled(ctx) {
  if (existsSync(path.join(PEER_DIR, 'node_modules', '@temporalio', 'ai-sdk'))) return;
  ctx.log('installing the peer: npm ci --prefix bench/peer');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const r = spawnSync(npm, ['ci', '--prefix', PEER_DIR, '--no-audit', '--no-fund'], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) throw new Error(`npm ci --prefix bench/peer failed (exit ${r.status ?? r.signal})`);
}

/** A design's worker in its own process, answering the requests of side-by-side/child.js. */
/** The Node binary the designs' workers run under (FH_BENCH_NODE), and its version. */
const workerNode = process.env.FH_BENCH_NODE || process.execPath;
const workerNodeVersion = workerNode === process.execPath ? process.version : spawnSync(workerNode, ['--version'], { encoding: 'utf8' }).stdout.trim();

class ChildWorker {
  static async start(design, config, ctx, extraExecArgv = [], { profile: profiled = true } = {}) {
    const profDir = profiled && process.env.FH_BENCH_CPU_PROF;
    // One directory per design and no fixed file name: every thread (workflows run in worker threads)
    // writes a profile of its own, where one name would have each overwrite the other.
    const profile = profDir && (design.key.startsWith('ours') || design.key === 'floor-model') ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(profDir, design.key)] : [];
    const lazy = process.env.FH_BENCH_LAZY_EXTSTORE === '1' && design.key.startsWith('ours') ? ['--require', path.join(__dirname, 'side-by-side/lazy-external-storage.js')] : [];
    const child = fork(path.join(__dirname, design.script), [], {
      execPath: workerNode,
      execArgv: [...process.execArgv, ...profile, ...lazy, ...extraExecArgv],
      env: { ...process.env, FH_BENCH_CHILD_CONFIG: JSON.stringify(config) },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    const w = new ChildWorker(design, child);
    w.taskQueue = config.taskQueue;
    await new Promise((resolve, reject) => {
      child.on('message', (m) => {
        if (m.type === 'ready') resolve();
        else if (m.type === 'fatal') {
          ctx.log(`${design.key} worker: ${m.error}`);
          reject(new Error(`${design.key} worker failed: ${m.error.split('\n')[0]}`));
        }
      });
      child.on('exit', (code) => reject(new Error(`${design.key} worker exited (code ${code}) before it was ready`)));
    });
    return w;
  }

  constructor(design, child) {
    this.design = design;
    this.child = child;
    this.nextId = 1;
    this.pending = new Map();
    child.on('message', (m) => {
      const p = m.id !== undefined && this.pending.get(m.id);
      if (p) {
        this.pending.delete(m.id);
        p(m);
      }
    });
  }

  request(msg) {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.child.send({ ...msg, id });
    });
  }

  /** CPU time (user + system) of the child so far, in ms. */
  async cpuMs() {
    return (await this.cpu()).ms;
  }

  /** CPU time of the child so far (ms) and by thread kind (child.js threadCpuMs). */
  async cpu() {
    const m = await this.request({ type: 'cpu' });
    return { ms: (m.user + m.system) / 1000, threads: m.threads || {} };
  }

  /** The child's process.memoryUsage() after a full GC (with --expose-gc). */
  memory() {
    return this.request({ type: 'mem' });
  }

  replay(workflowId) {
    return this.request({ type: 'replay', workflowId });
  }

  async stop() {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.send({ type: 'exit' });
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  }
}

const encodedPayloadBytes = (p) => temporal.api.common.v1.Payload.encode(p).finish().length;

/** What the history of a finished (or terminated) run says. */
function historyMetrics(history, modelActivity) {
  const events = history.events ?? [];
  const scheduled = events.map((e) => e.activityTaskScheduledEventAttributes).filter(Boolean);
  const inputBytes = scheduled.map((a) => ((a.input && a.input.payloads) || []).reduce((n, p) => n + encodedPayloadBytes(p), 0));
  return {
    bytes: temporal.api.history.v1.History.encode(history).finish().length,
    events: events.length,
    modelCalls: scheduled.filter((a) => a.activityType && a.activityType.name === modelActivity).length,
    activities: scheduled.length,
    localActivities: events.filter((e) => e.markerRecordedEventAttributes).length,
    largestActivityInput: inputBytes.length ? Math.max(...inputBytes) : 0,
    reason: failureReason(events),
  };
}

/** Runs one workflow on its design's worker: wall time, worker CPU over the run, then its history. */
async function runOnce(ctx, { worker, idleCpuPerMs, start, calls, limitMs }) {
  const cpu0 = await worker.cpu();
  const t0 = Date.now();
  const handle = await start();
  let timer;
  const outcome = await Promise.race([
    handle.result().then(
      () => ({ ok: true }),
      (err) => ({ ok: false, err }),
    ),
    new Promise((resolve) => {
      timer = setTimeout(() => resolve({ ok: false, stalled: true }), limitMs);
    }),
  ]);
  clearTimeout(timer);
  const wallMs = Date.now() - t0;
  const cpu1 = await worker.cpu();
  // Ours start through startAgent (an AgentHandle, its WorkflowHandle in `workflow`), the others through the client.
  const workflowHandle = typeof handle.terminate === 'function' ? handle : handle.workflow;
  if (outcome.stalled) await workflowHandle.terminate(`bench time limit (${limitMs / 1000} s)`).catch(() => undefined);
  const m = historyMetrics(await handle.fetchHistory(), worker.design.model);
  const cpuMs = Math.max(0, cpu1.ms - cpu0.ms - idleCpuPerMs * wallMs);
  // Per thread kind, not corrected for idle (an idle worker's polling is a fraction of a ms a second).
  const threadsMs = Object.fromEntries(Object.keys(cpu1.threads).map((k) => [k, cpu1.threads[k] - (cpu0.threads[k] || 0)]));
  let result;
  if (outcome.ok && m.modelCalls === calls) result = 'ok';
  else if (outcome.ok) result = `completed with ${m.modelCalls} model calls, not ${calls}`;
  else if (outcome.stalled) result = `no result in ${limitMs / 1000} s at call ${m.modelCalls}`;
  else result = `ended at call ${m.modelCalls}: ${m.reason || (outcome.err && outcome.err.message) || 'failed'}`;
  ctx.log(`${worker.design.key} N=${calls}: ${result}; ${ctx.bytes(m.bytes)}, ${m.events} events, worker CPU ${cpuMs.toFixed(0)} ms, wall ${ctx.seconds(wallMs)}`);
  const threadsPerCallMs = m.modelCalls ? Object.fromEntries(Object.entries(threadsMs).map(([k, v]) => [k, v / m.modelCalls])) : {};
  return { workflowId: handle.workflowId, result, ok: result === 'ok', wallMs, cpuMs, cpuPerCallMs: m.modelCalls ? cpuMs / m.modelCalls : NaN, threadsPerCallMs, ...m };
}

/** Replay time each call past the smallest N's run adds (same design), or undefined. */
const marginal = (r, smallest) =>
  r && smallest && !r.replayError && !smallest.replayError && r.modelCalls > smallest.modelCalls && r.result === 'ok'
    ? (r.replayMs - smallest.replayMs) / (r.modelCalls - smallest.modelCalls)
    : undefined;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const quiet = (ctx) => ({ ...ctx, log: () => undefined });
const ms = (x, digits = 1) => (Number.isFinite(x) ? `${x.toFixed(digits)} ms` : '');
const times = (x) => (Number.isFinite(x) ? `${x.toFixed(2)}x` : '');

module.exports = {
  ChildWorker,
  name: 'side-by-side',
  description: 'floor (no-op activities) vs ours (compaction off/on) vs peer @temporalio/ai-sdk: history, events, worker CPU and replay per model call',

  async run(ctx) {
    const ns = callCounts();
    const limitMs = runLimitMs();
    ensurePeerInstalled(ctx);
    const cleanups = [];
    const runs = [];
    let idle = {};
    try {
      const server = await startDevServer({ namespace: 'default', logLevel: 'error', onProgress: (l) => ctx.log(l) });
      cleanups.push(() => server.stop());
      // No request kept: thousands of whole conversations would fill this process's heap.
      const fake = await FakeAnthropicServer.start({ route: growerRoute, contextWindow: 10_000_000, apiKey: API_KEY, keepRequests: 0 });
      cleanups.push(() => fake.stop());
      const storeDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-bench-sbs-'));
      cleanups.push(() => fs.rm(storeDir, { recursive: true, force: true }));
      const namespace = server.namespace;

      // What every design's child is started with (the live workers and, later, the replayers).
      const childConfig = (taskQueue) => ({ address: server.address, namespace, taskQueue, fakeUrl: fake.url, apiKey: API_KEY, storeDir, growTextChars: GROW_TEXT_CHARS });

      let t = Date.now();
      const workers = {};
      cleanups.push(() => Promise.all(Object.values(workers).map((w) => w.stop())));
      // One at a time: each bundles its workflow code, and two cores are shared.
      ctx.log(`workers run under Node ${workerNodeVersion}${workerNode === process.execPath ? '' : ` (${workerNode}; the bench itself under ${process.version})`}`);
      if (process.env.FH_BENCH_LAZY_EXTSTORE === '1') ctx.log("experiment: our workers run with Temporal's external-storage runner made lazy");
      for (const d of DESIGNS) workers[d.key] = await ChildWorker.start(d, childConfig(`bench-sbs-${d.key}-${process.pid}`), ctx);
      ctx.log(`started ${DESIGNS.length} workers (one process each) in ${ctx.seconds(Date.now() - t)}`);

      const connection = await Connection.connect({ address: server.address, channelArgs: BIG_MESSAGES });
      cleanups.push(() => connection.close());
      const store = new FileTranscriptStore(storeDir);
      const oursClient = new Client({ connection, namespace, plugins: [new FabricHarnessPlugin({ store })] });
      const plainClient = new Client({ connection, namespace });
      const starters = (calls, id) => ({
        floor: () =>
          plainClient.workflow.start('floorWorkflow', { taskQueue: workers.floor.taskQueue, workflowId: `sbs-floor-${id}`, args: [{ calls }] }),
        'floor-tool': () =>
          plainClient.workflow.start('floorWorkflow', {
            taskQueue: workers['floor-tool'].taskQueue,
            workflowId: `sbs-floor-tool-${id}`,
            args: [{ calls, withTool: true }],
          }),
        'floor-model': () =>
          plainClient.workflow.start('floorWorkflow', {
            taskQueue: workers['floor-model'].taskQueue,
            workflowId: `sbs-floor-model-${id}`,
            args: [{ calls, withTool: true, withModel: true }],
          }),
        'ours-off': () => startAgent(oursClient, grower, { calls }, { workflowId: `sbs-ours-off-${id}`, taskQueue: workers['ours-off'].taskQueue }),
        'ours-on': () =>
          startAgent(oursClient, growerCompacting, { calls }, { workflowId: `sbs-ours-on-${id}`, taskQueue: workers['ours-on'].taskQueue }),
        'ours-on-nostream': () =>
          startAgent(oursClient, growerCompacting, { calls }, { workflowId: `sbs-ours-on-nostream-${id}`, taskQueue: workers['ours-on-nostream'].taskQueue, streaming: false }),
        peer: () =>
          plainClient.workflow.start('peerAgent', {
            taskQueue: workers.peer.taskQueue,
            workflowId: `sbs-peer-${id}`,
            args: [{ calls, model: DEFAULT_MODEL, maxTokens: MAX_TOKENS, system: GROW_SYSTEM, prompt: growPrompt(calls), toolDescription: growTool.description }],
          }),
      });

      // A short warm-up run each (module loading, JIT, first workflow context), not measured.
      t = Date.now();
      const warm = starters(WARM_UP_CALLS, `warm-up-${Date.now()}`);
      const warmUps = await Promise.all(
        DESIGNS.map((d) => runOnce(quiet(ctx), { worker: workers[d.key], idleCpuPerMs: 0, start: warm[d.key], calls: WARM_UP_CALLS, limitMs })),
      );
      const broken = DESIGNS.map((d, i) => [d, warmUps[i]]).filter(([, w]) => !w.ok).map(([d, w]) => `${d.key}: ${w.result}`);
      if (broken.length) throw new Error(`warm-up run failed: ${broken.join('; ')}`);
      ctx.log(`warm-up runs (${WARM_UP_CALLS} calls each) in ${ctx.seconds(Date.now() - t)}`);

      // What an idle worker burns (polling), per ms of wall time: subtracted from each run. The quietest
      // of several 1-second samples: right after the warm-up a worker has bursts (garbage collection,
      // optimising compilation: up to ~250 ms in a second) that are the work's, not polling's. Their
      // median once took 50-60 ms/s for polling, more than a whole floor run cost per call.
      const samples = Object.fromEntries(DESIGNS.map((d) => [d.key, []]));
      let last = Object.fromEntries(await Promise.all(DESIGNS.map(async (d) => [d.key, await workers[d.key].cpuMs()])));
      let lastAt = Date.now();
      for (let i = 0; i < IDLE_SAMPLES; i++) {
        await new Promise((r) => setTimeout(r, 1000));
        const now = Object.fromEntries(await Promise.all(DESIGNS.map(async (d) => [d.key, await workers[d.key].cpuMs()])));
        const at = Date.now();
        for (const d of DESIGNS) samples[d.key].push((now[d.key] - last[d.key]) / (at - lastAt));
        last = now;
        lastAt = at;
      }
      idle = Object.fromEntries(DESIGNS.map((d) => [d.key, Math.min(...samples[d.key])]));
      ctx.log(`idle worker CPU (quietest of ${IDLE_SAMPLES} s): ${DESIGNS.map((d) => `${d.key} ${(idle[d.key] * 1000).toFixed(1)} ms/s`).join(', ')}`);

      for (const calls of ns) {
        ctx.log(`N=${calls}: ${DESIGNS.map((d) => d.key).join(', ')} side by side`);
        const start = starters(calls, `${Date.now()}-${calls}`);
        const measured = await Promise.all(
          DESIGNS.map((d) => runOnce(ctx, { worker: workers[d.key], idleCpuPerMs: idle[d.key], start: start[d.key], calls, limitMs })),
        );
        DESIGNS.forEach((d, i) => runs.push({ calls, design: d.key, label: d.label, ...measured[i] }));
      }

      // Replays one at a time (wall time is the figure), each in a fresh process of its design (its
      // release, its bundle) started once the live workers are gone, warmed by one replay of its
      // warm-up run; every run replayed `replays` times, in rounds (so a burst of load on the machine
      // hits one round of every design, not one design), and the median kept.
      await Promise.all(Object.values(workers).map((w) => w.stop()));
      t = Date.now();
      const replayers = {};
      cleanups.push(() => Promise.all(Object.values(replayers).map((w) => w.stop())));
      for (const [i, d] of DESIGNS.entries()) {
        replayers[d.key] = await ChildWorker.start(d, childConfig(`bench-sbs-replay-${d.key}-${process.pid}`), ctx, [], { profile: false });
        const warmUp = await replayers[d.key].replay(warmUps[i].workflowId);
        if (warmUp.error) throw new Error(`${d.key}: the warm-up run's replay failed: ${warmUp.error.split('\n')[0]}`);
      }
      ctx.log(`started ${DESIGNS.length} fresh replay processes, each warmed by one replay, in ${ctx.seconds(Date.now() - t)}`);
      const replays = replayRounds();
      for (let round = 0; round < replays; round++) {
        for (const r of runs) {
          const out = await replayers[r.design].replay(r.workflowId);
          (r.replayTimes ??= []).push(out.ms);
          r.replayMs = median(r.replayTimes);
          r.replayCpuMs = out.cpuMs;
          r.replayError ??= out.error;
          ctx.log(`${r.design} N=${r.calls}: replay ${round + 1}/${replays} of ${out.events} events in ${ms(out.ms)}${out.error ? ` FAILED: ${out.error.split('\n')[0]}` : ''}`);
        }
      }
    } finally {
      for (const cleanup of cleanups.reverse()) {
        await Promise.resolve()
          .then(cleanup)
          .catch((err) => ctx.log(`cleanup: ${err && err.message ? err.message : err}`));
      }
    }

    const rows = runs.map((r) => {
      const floor = runs.find((f) => f.calls === r.calls && f.design === 'floor');
      const floorTool = runs.find((f) => f.calls === r.calls && f.design === 'floor-tool');
      const floorModel = runs.find((f) => f.calls === r.calls && f.design === 'floor-model');
      const oursOff = runs.find((f) => f.calls === r.calls && f.design === 'ours-off');
      const smallest = runs.find((f) => f.calls === ns[0] && f.design === r.design);
      return {
        calls: r.calls,
        design: r.label,
        streaming: r.design.startsWith('ours') ? (r.design.endsWith('nostream') ? 'off' : 'on') : '',
        'model calls': r.modelCalls,
        history: ctx.bytes(r.bytes),
        events: r.events,
        'events/call': (r.events / Math.max(1, r.modelCalls)).toFixed(1),
        'history/call': ctx.bytes(r.bytes / Math.max(1, r.modelCalls)),
        // The goal: compaction on costs history per call within 10% of compaction off.
        'history/call vs ours off': r.design === 'ours-on' && oursOff ? times(r.bytes / r.modelCalls / (oursOff.bytes / oursOff.modelCalls)) : '',
        'largest activity input': ctx.bytes(r.largestActivityInput),
        'worker CPU/call': ms(r.cpuPerCallMs),
        // Where it went (Linux): the main thread, Temporal core's runtime, the rest (workflow thread, V8's GC and compiler helpers).
        'main / core / workflow / V8': r.threadsPerCallMs && r.threadsPerCallMs.main !== undefined ? ['main', 'core', 'workflow', 'v8'].map((k) => (r.threadsPerCallMs[k] ?? 0).toFixed(1)).join(' / ') : '',
        'CPU/call vs floor': times(r.cpuPerCallMs / floor.cpuPerCallMs),
        'CPU/call vs floor (2 activities)': floorTool ? times(r.cpuPerCallMs / floorTool.cpuPerCallMs) : '',
        // What the harness adds to the model call itself (the SDK, the HTTP request, the reply's events).
        'CPU/call vs floor with the model call': floorModel ? times(r.cpuPerCallMs / floorModel.cpuPerCallMs) : '',
        // The goal: the same cost per call at any conversation length (this N against the smallest).
        [`CPU/call vs N=${ns[0]}`]: smallest && r.calls !== ns[0] ? times(r.cpuPerCallMs / smallest.cpuPerCallMs) : '',
        replay: r.replayError ? 'failed' : ms(r.replayMs, 0),
        'replay/call': r.replayError ? '' : ms(r.replayMs / r.modelCalls, 2),
        // Per call, so a run the server cut short compares with the floor on what it did run.
        'replay vs floor': r.replayError ? '' : times(r.replayMs / r.modelCalls / (floor.replayMs / floor.modelCalls)),
        'replay vs floor (2 activities)':
          r.replayError || !floorTool ? '' : times(r.replayMs / r.modelCalls / (floorTool.replayMs / floorTool.modelCalls)),
        // The same, round by round: each round replays the two one after the other, so a burst of load on the
        // machine falls on both; the median of the rounds' ratios (the medians above may come from different rounds).
        'replay vs floor (2 activities), paired': r.replayError || !floorTool || floorTool.replayError ? '' : times(pairedRatio(r, floorTool)),
        'replay/event': r.replayError ? '' : ms(r.replayMs / r.events, 3),
        // Per call beyond the smallest N: what each further call adds to a replay, without the fixed cost
        // of a replay (creating the replay worker, loading the workflow bundle), which differs by design.
        'replay/added call': marginal(r, smallest) === undefined ? '' : ms(marginal(r, smallest), 2),
        'replay/added call vs floor (2 activities)':
          marginal(r, smallest) === undefined || !floorTool ? '' : times(marginal(r, smallest) / marginal(floorTool, runs.find((f) => f.calls === ns[0] && f.design === 'floor-tool'))),
        result: r.result,
      };
    });
    await fs.mkdir(path.dirname(RESULTS_FILE), { recursive: true });
    await fs.writeFile(
      RESULTS_FILE,
      `${JSON.stringify(
        {
          bench: 'side-by-side',
          at: new Date().toISOString(),
          machine: { cpus: os.cpus().length, cpu: os.cpus()[0] && os.cpus()[0].model, node: process.version, workerNode: workerNodeVersion },
          peer: peerVersions(),
          ...(process.env.FH_BENCH_LAZY_EXTSTORE === '1' ? { experiment: 'our workers ran with Temporal\'s external-storage runner made lazy (FH_BENCH_LAZY_EXTSTORE)' } : {}),
          calls: ns,
          idleWorkerCpuMsPerS: Object.fromEntries(Object.entries(idle).map(([k, v]) => [k, v * 1000])),
          runs: runs.map(({ reason, ...r }) => ({ ...r, reason })),
        },
        null,
        2,
      )}\n`,
    );
    ctx.log(`results: ${path.relative(process.cwd(), RESULTS_FILE)}`);
    return rows;
  },
};

/** The median over replay rounds of r's replay time per model call against base's in the same round. */
function pairedRatio(r, base) {
  const n = Math.min(r.replayTimes.length, base.replayTimes.length);
  const ratios = Array.from({ length: n }, (_, i) => r.replayTimes[i] / r.modelCalls / (base.replayTimes[i] / base.modelCalls));
  return median(ratios);
}

/** The versions the peer ran with (from its installed packages). */
function peerVersions() {
  const version = (name) => {
    try {
      return JSON.parse(require('node:fs').readFileSync(path.join(PEER_DIR, 'node_modules', name, 'package.json'), 'utf8')).version;
    } catch {
      return undefined;
    }
  };
  return Object.fromEntries(['@temporalio/ai-sdk', '@temporalio/worker', 'ai', '@ai-sdk/anthropic'].map((n) => [n, version(n)]));
}
