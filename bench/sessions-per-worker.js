/**
 * sessions-per-worker: how many sessions one worker holds, and what eviction costs. Two parts, one run:
 *
 * 1. Sessions on one worker with the DEFAULT memory budget (sessionCacheMemory unset: 0.2 of the
 *    container's or machine's memory, src/worker/session-cache.ts): FH_BENCH_SESSIONS sessions (default
 *    2,000), FH_BENCH_SESSIONS_AT_ONCE at a time, each started and answering one short turn against the
 *    fake Anthropic server, then left idle. The worker runs in a child process of its own (started with
 *    --expose-gc; bench/side-by-side/session-worker.js), so its RSS holds nothing of the fake's or the
 *    clients'. At checkpoints: the worker's RSS and heap after a full GC, the sessions it holds in its
 *    workflow cache (Worker.getStatus().numCachedWorkflows) and those evicted (the rest), and the turns'
 *    latency. Then "bytes per cached session": (RSS now - RSS after a 10-session warm-up) / (cached now -
 *    cached after the warm-up), the figure BYTES_PER_CACHED_SESSION in session-cache.ts comes from, and
 *    the maxCachedWorkflows the budget chose.
 *
 * 2. Eviction's cost against history length: a second worker whose cache holds 10 runs (the floor).
 *    For each length in FH_BENCH_EVICT_TURNS (turns before measuring; default 1,50,200) one session is
 *    driven to that length; then FH_BENCH_EVICT_REPS times (default 5) a turn while it is cached (just
 *    after a turn of its own) and a turn after 12 other sessions each took a turn (so the worker evicted
 *    it: its next turn replays its whole history). Per length: medians of the answer latency (prompt to
 *    reply, in this process) and of the worker's CPU (user + system of its process) over the turn, and
 *    evicted / cached as ratios, side by side.
 *
 *   FH_BENCH_SESSIONS=2000            sessions in part 1 (e.g. 300 for a quick run)
 *   FH_BENCH_SESSIONS_AT_ONCE=20      sessions started at a time
 *   FH_BENCH_SESSION_CACHE_MEMORY=n   part 1's worker sessionCacheMemory (bytes or a share); default unset
 *   FH_BENCH_EVICT_TURNS=1,50,200     history lengths (turns) in part 2
 *   FH_BENCH_EVICT_REPS=5             cached and evicted turns measured per length
 */
'use strict';
const { promises: fs } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Client, Connection } = require('@temporalio/client');
const { startDevServer } = require('../dist/testing/temporal-cli.js');
const { FakeAnthropicServer, say } = require('../dist/testing/anthropic/fake-anthropic.js');
const { FileTranscriptStore, FabricHarnessPlugin } = require('../dist/worker/index.js');
const { startSession } = require('../dist/client/index.js');
const { FH_SEARCH_ATTRIBUTES } = require('../dist/wire/search-attributes.js');
const { benchSession } = require('./fixtures/session-agents.js');
const { ChildWorker } = require('./side-by-side.js');

const API_KEY = 'bench-key';
const WARM_UP = 10;
const EVICTING_CACHE = 10;
const FILLERS = 12;
const REPLY = 'Noted.';

const { positiveInt } = require('./env-int.js');

function intList(name, fallback) {
  const raw = process.env[name] ?? fallback;
  const list = raw.split(',').map((x) => Number(x.trim()));
  if (list.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`${name} must list positive integers, got '${raw}'`);
  return list;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : NaN;
};
const mb = (n) => `${(n / 1e6).toFixed(0)} MB`;
const ms = (n) => `${n.toFixed(0)} ms`;

/** An error and its causes, one line. */
const causes = (err) => {
  const parts = [];
  for (let e = err, i = 0; e && i < 6; e = e.cause, i++) parts.push(`${e.name ?? 'Error'}: ${e.details ?? e.message}${e.code !== undefined ? ` (code ${e.code})` : ''}`);
  return parts.join(' <- ');
};

/** Every request gets a short reply (the title model gets a title). */
function route(req) {
  if (req.path !== '/v1/messages') return undefined;
  const system = typeof req.body.system === 'string' ? req.body.system : JSON.stringify(req.body.system ?? '');
  return /title/i.test(system) ? say('Sessions Bench') : say(REPLY);
}

/** One turn of session `s`: its answer latency (ms) and the worker's CPU (ms) over it. */
async function timedTurn(s, worker, text) {
  const cpu0 = await worker.cpuMs();
  const t0 = performance.now();
  const reply = await s.prompt(text);
  const latency = performance.now() - t0;
  const cpu = (await worker.cpuMs()) - cpu0;
  if (reply !== REPLY) throw new Error(`session ${s.id}: replied '${reply}'`);
  return { latency, cpu };
}

module.exports = {
  name: 'sessions-per-worker',
  description: 'N sessions (default 2,000) on one worker with the default memory budget: RSS, cached vs evicted, bytes per session; eviction cost vs history length',

  async run(ctx) {
    const total = positiveInt('FH_BENCH_SESSIONS', 2000);
    const atOnce = positiveInt('FH_BENCH_SESSIONS_AT_ONCE', 20);
    const budgetRaw = process.env.FH_BENCH_SESSION_CACHE_MEMORY;
    const sessionCacheMemory = budgetRaw ? Number(budgetRaw) : undefined;
    const lengths = intList('FH_BENCH_EVICT_TURNS', '1,50,200');
    const reps = positiveInt('FH_BENCH_EVICT_REPS', 5);
    const cleanups = [];
    const rows = [];
    try {
      const server = await startDevServer({ namespace: 'default', logLevel: 'error', searchAttributes: { ...FH_SEARCH_ATTRIBUTES }, onProgress: (l) => ctx.log(l) });
      cleanups.push(() => server.stop());
      const fake = await FakeAnthropicServer.start({ route, apiKey: API_KEY, keepRequests: 0 });
      cleanups.push(() => fake.stop());
      const storeDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-bench-sessions-'));
      cleanups.push(() => fs.rm(storeDir, { recursive: true, force: true }));
      const connection = await Connection.connect({ address: server.address });
      cleanups.push(() => connection.close());
      const client = new Client({ connection, namespace: server.namespace, plugins: [new FabricHarnessPlugin({ store: new FileTranscriptStore(storeDir) })] });
      const base = { address: server.address, namespace: server.namespace, fakeUrl: fake.url, apiKey: API_KEY, storeDir };
      const design = { key: 'sessions', label: 'sessions', script: 'side-by-side/session-worker.js' };

      // Part 1: many sessions, one turn each, on a worker with the default budget.
      const taskQueue = `bench-sessions-${process.pid}`;
      const worker = await ChildWorker.start(design, { ...base, taskQueue, sessionCacheMemory }, ctx, ['--expose-gc']);
      let stopWorker = () => worker.stop();
      cleanups.push(() => stopWorker());
      const status = () => worker.request({ type: 'status' });
      const { maxCachedWorkflows } = await status();
      ctx.log(`worker ready: maxCachedWorkflows ${maxCachedWorkflows} (sessionCacheMemory ${budgetRaw ?? 'default'}); ${total} sessions, ${atOnce} at a time`);
      let started = 0;
      const batch = async (n) => {
        const latencies = [];
        const t0 = Date.now();
        for (let done = 0; done < n; ) {
          const k = Math.min(atOnce, n - done);
          await Promise.all(
            Array.from({ length: k }, async () => {
              const s = await startSession(client, benchSession, { id: `spw-${process.pid}-${started++}`, taskQueue });
              const t = performance.now();
              const reply = await s.prompt('Say noted.').catch((err) => {
                // The client's error says only "Workflow Update failed": name what the server said.
                throw new Error(`session ${s.id} (after ${started} sessions started): ${causes(err)}`);
              });
              latencies.push(performance.now() - t);
              if (reply !== REPLY) throw new Error(`session ${s.id}: replied '${reply}'`);
            }),
          );
          done += k;
        }
        const [m, st] = [await worker.memory(), await status()];
        return { m, cached: st.numCachedWorkflows, latencies, wall: Date.now() - t0 };
      };
      const before = await worker.memory();
      rows.push({ part: 'sessions', sessions: 0, cached: 0, evicted: 0, 'worker RSS': mb(before.rss), 'heap used': mb(before.heapUsed), 'turn p50': '', 'turn p99': '', wall: '' });
      const warm = await batch(WARM_UP);
      const row = (r) => ({
        part: 'sessions',
        sessions: started,
        cached: r.cached,
        evicted: started - r.cached,
        'worker RSS': mb(r.m.rss),
        'heap used': mb(r.m.heapUsed),
        'turn p50': ms(quantile(r.latencies, 0.5)),
        'turn p99': ms(quantile(r.latencies, 0.99)),
        wall: ctx.seconds(r.wall),
      });
      rows.push(row(warm));
      const step = Math.max(atOnce, Math.ceil((total - WARM_UP) / 5 / atOnce) * atOnce);
      let last = warm;
      while (started < total) {
        last = await batch(Math.min(step, total - started));
        rows.push(row(last));
        ctx.log(`${started} sessions: ${last.cached} cached, RSS ${mb(last.m.rss)}, heap ${mb(last.m.heapUsed)}, p50 ${ms(quantile(last.latencies, 0.5))}, ${ctx.seconds(last.wall)}`);
      }
      const perSession = last.cached > warm.cached ? (last.m.rss - warm.m.rss) / (last.cached - warm.cached) : NaN;
      rows.push({ part: 'bytes per cached session', sessions: '', cached: '', evicted: '', 'worker RSS': `${(perSession / 1e6).toFixed(2)} MB`, 'heap used': `${((last.m.heapUsed - warm.m.heapUsed) / Math.max(1, last.cached - warm.cached) / 1e3).toFixed(0)} kB` });
      rows.push({ part: 'maxCachedWorkflows chosen', sessions: '', cached: maxCachedWorkflows, evicted: '', 'worker RSS': `budget ${budgetRaw ?? 'default (0.2 of memory)'}` });
      ctx.log(`bytes per cached session: ${(perSession / 1e6).toFixed(2)} MB (RSS ${mb(warm.m.rss)} -> ${mb(last.m.rss)}, cached ${warm.cached} -> ${last.cached})`);
      await worker.stop();
      stopWorker = () => undefined;

      // Part 2: a cached vs an evicted session's turn, at each history length.
      const evictQueue = `bench-evict-${process.pid}`;
      const small = await ChildWorker.start(design, { ...base, taskQueue: evictQueue, maxCachedWorkflows: EVICTING_CACHE }, ctx);
      cleanups.push(() => small.stop());
      const fillers = await Promise.all(Array.from({ length: FILLERS }, (_, i) => startSession(client, benchSession, { id: `spw-fill-${process.pid}-${i}`, taskQueue: evictQueue })));
      let turn = 0;
      for (const length of lengths) {
        const s = await startSession(client, benchSession, { id: `spw-len-${process.pid}-${length}`, taskQueue: evictQueue });
        for (let i = 0; i < length; i++) await s.prompt(`turn ${++turn}`);
        const cached = [];
        const evicted = [];
        for (let r = 0; r < reps; r++) {
          await s.prompt(`turn ${++turn}`); // now it is the worker's newest run
          cached.push(await timedTurn(s, small, `turn ${++turn}`));
          for (const f of fillers) await f.prompt(`turn ${++turn}`); // 12 runs through a cache of 10: it is evicted
          evicted.push(await timedTurn(s, small, `turn ${++turn}`));
        }
        const events = (await client.workflow.getHandle(s.id).describe()).historyLength;
        const c = { latency: median(cached.map((x) => x.latency)), cpu: median(cached.map((x) => x.cpu)) };
        const e = { latency: median(evicted.map((x) => x.latency)), cpu: median(evicted.map((x) => x.cpu)) };
        ctx.log(`${length} turns (${events} events): latency ${ms(c.latency)} cached / ${ms(e.latency)} evicted, worker CPU ${ms(c.cpu)} / ${ms(e.cpu)}`);
        rows.push({
          part: 'eviction cost',
          'history turns': length + 3 * reps,
          'history events': events,
          'latency cached': ms(c.latency),
          'latency evicted': ms(e.latency),
          'latency evicted/cached': `${(e.latency / c.latency).toFixed(2)}x`,
          'worker CPU cached': ms(c.cpu),
          'worker CPU evicted': ms(e.cpu),
          'CPU evicted/cached': `${(e.cpu / c.cpu).toFixed(2)}x`,
        });
      }
    } finally {
      for (const cleanup of cleanups.reverse()) {
        await Promise.resolve()
          .then(cleanup)
          .catch((err) => ctx.log(`cleanup: ${err && err.message ? err.message : err}`));
      }
    }
    return rows;
  },
};
