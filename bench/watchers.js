/**
 * watchers: many readers of one session's stream, side by side in one run: 1, 10, 50 and 500 readers in
 * this process through the shared reader (one upstream reader per session per process, the default);
 * the same counts with each reader on a transport of its own (how every reader read before 0.7.0); the
 * same counts through the broker (Redis Streams, a redis-server of the bench's own); and 500 readers
 * across 5 processes through the broker. The fake model streams each reply as 100 deltas 20 ms apart;
 * `onDeltaSent` stamps when it "said" each.
 *
 *   lag p50 / p95        the model's delta to the reader's, over every delta of every reader
 *   seen only at end     deltas a reader first saw when the call ended (caught up from message_end),
 *                        not while it streamed
 *   server CPU / turn    the Temporal dev server's CPU time per turn (/proc), what Temporal pays
 *
 * Claims (ratios against one reader in the same run): shared, lag with 50 readers <= 1.5x the lag with
 * one, at most 2% of deltas seen only at the end, and server CPU per turn not growing with the readers.
 * Through the broker, up to 50 readers: lag p50 at most 50 ms per row, and the turn's first delta at most
 * 50 ms after the model's (the median over every reader's measured turns of those rows: one reader gives
 * one sample a turn, too few for a claim of its own); without it (shared, up to 50 readers), the first
 * delta at most 100 ms after the model's, pooled the same way.
 *
 *   FH_BENCH_WATCHERS=1,10,50,500   reader counts      FH_BENCH_WATCHERS_TURNS=2   turns measured per count
 *   FH_BENCH_WATCHERS_MODES=shared,own,broker,processes   the ways measured (default all; processes: the
 *                                                          500 readers in 5 processes, through the broker)
 *   FH_BENCH_WATCHERS_PROCESSES=5   how many processes the `processes` mode spreads its readers over
 *
 * Each count's session first runs one turn that is not measured (its readers, and the other processes,
 * warm: connections made, code compiled), so a row says what following costs, not starting to.
 */
'use strict';
const fs = require('node:fs');
const net = require('node:net');
const { spawn } = require('node:child_process');
const { setMaxListeners } = require('node:events');
const os = require('node:os');
const path = require('node:path');
const { Client, Connection } = require('@temporalio/client');
const { DefaultLogger, NativeConnection, Runtime } = require('@temporalio/worker');
const { startDevServer } = require('../dist/testing/temporal-cli.js');
const { FakeAnthropicServer, say } = require('../dist/testing/anthropic/fake-anthropic.js');
const { createWorker, bundleAgents, FileTranscriptStore, FabricHarnessPlugin } = require('../dist/worker/index.js');
const { startSession, TemporalStreamTransport, liveBroker } = require('../dist/client/index.js');
const { FH_SEARCH_ATTRIBUTES } = require('../dist/wire/search-attributes.js');
const { DEFAULT_MODEL } = require('../dist/core/models.js');
const { benchSession, noteTool } = require('./fixtures/session-agents.js');

const AGENTS = require.resolve('./fixtures/session-agents.js');
const API_KEY = 'bench-key';
const DELTAS = 100;
const CHUNK = 4;
const DELAY_MS = 20;
const LAG_LIMIT = 1.5;
const END_ONLY_LIMIT = 0.02;
const BROKER_LAG_MS = 50;
/** Without the broker (the shared reader polling Temporal), the turn's first delta at most this long after the model's. */
const POLLED_FIRST_DELTA_MS = 100;

const reply = (turn) => `W${String(turn).padStart(3, '0')} ${'abcdefghij'.repeat(40)}`.slice(0, DELTAS * CHUNK);
/**
 * Wall-clock milliseconds with a fraction: through the broker a delta reaches a reader in 1-2 ms, where
 * Date.now()'s whole milliseconds made the lag, and its ratio to one reader's, mostly rounding. Comparable
 * across this machine's processes (fixtures/watcher-process.js stamps the same way).
 */
const now = () => performance.timeOrigin + performance.now();
/** A duration as the table shows it: a tenth of a millisecond under 10 ms, whole milliseconds above. */
const ms = (x) => `${x < 10 ? x.toFixed(1) : Math.round(x)} ms`;
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : NaN;
};

const MODES = ['shared', 'own', 'broker', 'processes'];

/** The ways to read measured (FH_BENCH_WATCHERS_MODES, comma-separated; default all four). */
function modes() {
  const raw = process.env.FH_BENCH_WATCHERS_MODES;
  if (!raw) return MODES;
  const list = raw.split(',').map((x) => x.trim());
  const unknown = list.filter((m) => !MODES.includes(m));
  if (unknown.length) throw new Error(`FH_BENCH_WATCHERS_MODES: unknown '${unknown.join("', '")}' (one of: ${MODES.join(', ')})`);
  return list;
}

function counts() {
  const raw = process.env.FH_BENCH_WATCHERS ?? '1,10,50,500';
  const list = raw.split(',').map((x) => Number(x.trim()));
  if (list.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`FH_BENCH_WATCHERS must list positive integers, got '${raw}'`);
  return list;
}

/** How many processes the `processes` mode spreads its readers over (FH_BENCH_WATCHERS_PROCESSES, default 5). */
function processes() {
  const raw = process.env.FH_BENCH_WATCHERS_PROCESSES ?? '5';
  const n = Number(raw.trim());
  if (!Number.isInteger(n) || n < 1 || n > 50) throw new Error(`FH_BENCH_WATCHERS_PROCESSES must be an integer from 1 to 50, got '${raw}'`);
  return n;
}

/** CPU milliseconds (user + system) the process listening on `port` has used: the dev server. */
function serverCpuMs(pid) {
  if (!pid) return NaN;
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime + stime, in clock ticks (100/s)
}

/** The dev server's pid: the `temporal server start-dev` process whose command line names its port. */
function devServerPid(address) {
  const port = address.split(':').pop();
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (cmd.includes('start-dev') && cmd.includes(port)) return Number(pid);
    } catch {
      // a process that ended meanwhile
    }
  }
  return undefined;
}

/** A redis-server of the bench's own on a free port (Debian's; scripts/redis.js installs it). */
async function startRedis() {
  const port = await new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const p = srv.address().port;
      srv.close(() => resolve(p));
    });
  });
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise((resolve, reject) => {
    let out = '';
    const onData = (d) => {
      out += d;
      if (/Ready to accept connections/.test(out)) resolve();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`redis-server exited (${code}): ${out.slice(-300)}`)));
  });
  return { url: `redis://127.0.0.1:${port}`, stop: async () => child.kill('SIGKILL') };
}

/**
 * `n` readers in `procs` other processes (bench/fixtures/watcher-process.js), started once for a
 * measurement and warm for each of its turns: `turn(from)` resolves `following` when all follow, then
 * `done` with what they saw.
 */
function readersElsewhere(address, namespace, id, n, procs, redisUrl) {
  const each = Math.ceil(n / procs);
  const children = Array.from({ length: procs }, () => {
    const child = spawn(process.execPath, [require.resolve('./fixtures/watcher-process.js'), address, namespace, id, String(each), ...(redisUrl ? [redisUrl] : [])], { stdio: ['pipe', 'pipe', 'inherit'] });
    const lines = [];
    const waiters = [];
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      let i;
      while ((i = out.indexOf('\n')) >= 0) {
        const line = out.slice(0, i);
        out = out.slice(i + 1);
        const w = waiters.shift();
        if (w) w(line);
        else lines.push(line);
      }
    });
    const exited = new Promise((_, reject) => child.once('exit', (code) => code !== 0 && reject(new Error(`watcher process exited ${code}`))));
    exited.catch(() => undefined);
    const next = () => Promise.race([lines.length ? Promise.resolve(lines.shift()) : new Promise((r) => waiters.push(r)), exited]);
    return { child, next };
  });
  return {
    turn(from) {
      for (const c of children) c.child.stdin.write(`${from}\n`);
      const following = Promise.all(children.map((c) => c.next()));
      const done = following.then(() => Promise.all(children.map(async (c) => JSON.parse(await c.next())))).then((all) => all.flat());
      return { following, done };
    },
    stop() {
      for (const c of children) c.child.stdin.end();
    },
  };
}

function quietLogger() {
  const noop = () => undefined;
  return { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: (m) => console.error(m) };
}

module.exports = {
  name: 'watchers',
  description: 'many readers of one session: lag, deltas seen only at the end, server CPU per turn (shared reader vs a transport each)',

  async run(ctx) {
    if (process.platform !== 'linux') throw new Error('watchers reads the server CPU from /proc: run it on Linux');
    // A bad FH_BENCH_WATCHERS or FH_BENCH_WATCHERS_MODES fails here, before a server is started.
    const measuredModes = modes();
    const measuredCounts = counts();
    const processCount = processes();
    try {
      Runtime.install({ logger: new DefaultLogger('WARN') });
    } catch {
      // already installed
    }
    const turns = Number(process.env.FH_BENCH_WATCHERS_TURNS ?? 2);
    const cleanups = [];
    try {
      const server = await startDevServer({ namespace: 'default', logLevel: 'error', searchAttributes: { ...FH_SEARCH_ATTRIBUTES }, onProgress: (l) => ctx.log(l) });
      cleanups.push(() => server.stop());
      const pid = devServerPid(server.address);
      let sentAt = [];
      const titleRoute = (req) => (typeof req.body?.system === 'string' && /title/i.test(req.body.system) ? say('Watchers Bench') : undefined);
      const fake = await FakeAnthropicServer.start({
        route: titleRoute,
        apiKey: API_KEY,
        stream: { chunkChars: CHUNK, delayMs: DELAY_MS, onDeltaSent: (i) => (sentAt[i] = now()) },
      });
      cleanups.push(() => fake.stop());
      const redis = await startRedis();
      cleanups.push(() => redis.stop());
      const storeDir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'fh-bench-watchers-'));
      cleanups.push(() => fs.promises.rm(storeDir, { recursive: true, force: true }));
      const store = new FileTranscriptStore(storeDir);
      const nativeConnection = await NativeConnection.connect({ address: server.address });
      cleanups.push(() => nativeConnection.close());
      const connection = await Connection.connect({ address: server.address });
      cleanups.push(() => connection.close());
      const taskQueue = `bench-watchers-${process.pid}`;
      const worker = await createWorker({
        agents: AGENTS,
        tools: [noteTool],
        connection: nativeConnection,
        namespace: server.namespace,
        taskQueue,
        model: { apiKey: API_KEY, baseURL: fake.url, defaultModel: DEFAULT_MODEL },
        store,
        liveBroker: { url: redis.url },
        workflowBundle: await bundleAgents(AGENTS, { logger: quietLogger() }),
      });
      const broker = liveBroker({ url: redis.url });
      cleanups.push(() => broker.close());
      const client = new Client({ connection, namespace: server.namespace, plugins: [new FabricHarnessPlugin({ store })] });

      /** One session, `n` readers following it for `turns` turns; what they saw. */
      const measure = async (n, mode) => {
        const id = `bench-watchers-${n}-${mode.replace(/[^a-z0-9]+/g, "-")}-${Date.now().toString(36)}`;
        const s = await startSession(client, benchSession, { id, taskQueue, streaming: true });
        const procs = mode === 'processes' ? readersElsewhere(server.address, server.namespace, id, n, processCount, redis.url) : undefined;
        const lags = [];
        const firsts = [];
        let deltas = 0;
        let endOnly = 0;
        let cpu = 0;
        for (let turn = 0; turn <= turns; turn++) {
          const from = (await new TemporalStreamTransport(client, id).snapshot(Number.MAX_SAFE_INTEGER)).page.next - 1;
          const abort = new AbortController();
          setMaxListeners(0, abort.signal); // every reader of the turn listens on it: not a leak
          let following = 0;
          let allFollowing;
          const ready = new Promise((r) => (allFollowing = r));
          const elsewhere = procs?.turn(Math.max(0, from));
          if (elsewhere) void elsewhere.following.then(() => allFollowing());
          const readers = elsewhere ? [] : Array.from({ length: n }, async () => {
            const arrivals = [];
            let first = true;
            const via = mode === 'own' ? { transport: new TemporalStreamTransport(client, id) } : mode === 'broker' ? { broker } : {};
            const options = { from: Math.max(0, from), signal: abort.signal, ...via };
            for await (const env of s.stream(options)) {
              if (first && ++following === n) allFollowing();
              first = false;
              if (env.event.type === 'text_delta') arrivals.push(now());
              if (env.event.type === 'message_end' && env.event.stopReason === 'end_turn') return { arrivals, end: now() };
            }
            return { arrivals, end: now() };
          });
          await ready;
          sentAt = [];
          const cpuBefore = serverCpuMs(pid);
          fake.enqueue(say(reply(turn)));
          const text = await s.prompt(`turn ${turn}`);
          if (text !== reply(turn)) throw new Error(`turn ${turn}: replied '${text}'`);
          const seen = elsewhere ? await elsewhere.done : await Promise.all(readers);
          abort.abort();
          if (turn === 0) continue; // the warm-up turn
          cpu += serverCpuMs(pid) - cpuBefore;
          for (const { arrivals, end } of seen) {
            arrivals.forEach((at, i) => {
              deltas++;
              // Caught up from message_end: yielded in the same moment as the end, not as it streamed.
              if (at >= end - 3) endOnly++;
              else if (sentAt[i] !== undefined) {
                lags.push(at - sentAt[i]);
                if (i === 0) firsts.push(at - sentAt[0]);
              }
            });
          }
        }
        procs?.stop();
        await s.end();
        return { p50: quantile(lags, 0.5), p95: quantile(lags, 0.95), first: quantile(firsts, 0.5), firsts, endOnly: endOnly / deltas, cpuPerTurn: cpu / turns };
      };

      const rows = [];
      const failures = [];
      // The first-delta claim pools the broker rows up to 50 readers: one reader gives one sample a turn.
      const brokerFirsts = [];
      const sharedFirsts = [];
      await worker.runUntil(async () => {
        const LABEL = { shared: 'shared reader (default)', own: 'a transport each (before)', broker: 'shared, through the broker', processes: `broker, ${processCount} processes` };
        for (const mode of measuredModes) {
          let one;
          for (const n of mode === 'processes' ? [Math.max(...measuredCounts)] : measuredCounts) {
            // A transport each for 500 readers is 500 pollers on one workflow: shown up to 50.
            if (mode === 'own' && n > 50) continue;
            const r = await measure(n, mode);
            one ??= mode === 'processes' ? rows.find((x) => x.readers === 1 && x.transport === LABEL.broker)?._r ?? r : r;
            const shared = mode !== 'own';
            ctx.log(`${mode}, ${n} readers: lag p50 ${ms(r.p50)}, first delta ${ms(r.first)}, ${(r.endOnly * 100).toFixed(1)}% only at end, server ${r.cpuPerTurn.toFixed(0)} ms CPU/turn`);
            rows.push({
              readers: n,
              transport: LABEL[mode],
              'lag p50': ms(r.p50),
              'lag p95': ms(r.p95),
              'first delta p50': ms(r.first),
              // A ratio only where the claim is one: through the broker the lag is a Redis round trip of a
              // millisecond or two, and its claim a bound in milliseconds (BROKER_LAG_MS).
              'lag vs 1 reader': mode === 'broker' || mode === 'processes' ? '' : `${(r.p50 / one.p50).toFixed(2)}x`,
              'seen only at end': `${(r.endOnly * 100).toFixed(1)}%`,
              'server CPU/turn': `${r.cpuPerTurn.toFixed(0)} ms`,
              'CPU vs 1 reader': `${(r.cpuPerTurn / one.cpuPerTurn).toFixed(2)}x`,
            });
            Object.defineProperty(rows[rows.length - 1], '_r', { value: r, enumerable: false });
            if (mode === 'broker' && n <= 50) brokerFirsts.push(...r.firsts);
            if (mode === 'shared' && n <= 50) sharedFirsts.push(...r.firsts);
            if (mode === 'broker' && n <= 50 && r.p50 > BROKER_LAG_MS) failures.push(`broker, ${n} readers: lag p50 ${ms(r.p50)} (the claim: at most ${BROKER_LAG_MS} ms after the model's delta)`);
            if (mode === 'shared' && n <= 50 && r.p50 / one.p50 > LAG_LIMIT) failures.push(`shared, ${n} readers: lag ${(r.p50 / one.p50).toFixed(2)}x one reader's (limit ${LAG_LIMIT}x)`);
            if (mode === 'shared' && n <= 50 && r.endOnly > END_ONLY_LIMIT) failures.push(`shared, ${n} readers: ${(r.endOnly * 100).toFixed(1)}% of deltas seen only at the end (limit 2%)`);
          }
        }
      });
      const pooled = quantile(brokerFirsts, 0.5);
      if (brokerFirsts.length && pooled > BROKER_LAG_MS) failures.push(`broker, up to 50 readers: first delta p50 ${ms(pooled)} after the model's (the claim: at most ${BROKER_LAG_MS} ms)`);
      if (brokerFirsts.length) ctx.log(`broker, up to 50 readers: first delta p50 ${ms(pooled)} over ${brokerFirsts.length} readers' turns (claim: at most ${BROKER_LAG_MS} ms)`);
      const polled = quantile(sharedFirsts, 0.5);
      if (sharedFirsts.length && polled > POLLED_FIRST_DELTA_MS) failures.push(`shared, up to 50 readers: first delta p50 ${ms(polled)} after the model's (the claim: at most ${POLLED_FIRST_DELTA_MS} ms without the broker)`);
      if (sharedFirsts.length) ctx.log(`shared (no broker), up to 50 readers: first delta p50 ${ms(polled)} over ${sharedFirsts.length} readers' turns (claim: at most ${POLLED_FIRST_DELTA_MS} ms)`);
      if (failures.length) throw new Error(`${failures.join('; ')}\n${JSON.stringify(rows, null, 1)}`);
      return rows;
    } finally {
      for (const c of cleanups.reverse()) await c().catch(() => undefined);
    }
  },
};
