/**
 * worker-memory: does a long-running worker's memory stay flat? One worker (our grower agent,
 * compaction on, streaming on, default cache sizes unless FH_BENCH_CACHES says otherwise) in a child
 * process of its own (side-by-side/ours-worker.js, started with --expose-gc), the fake model and the
 * clients in this process: so the worker's figures hold nothing of the fake's (which keeps every
 * request it served).
 *
 * It runs FH_BENCH_MEMORY_RUNS conversations (agent runs) of FH_BENCH_MEMORY_CALLS model calls each,
 * FH_BENCH_MEMORY_AT_ONCE at a time, and after each batch reads the worker's `process.memoryUsage()`
 * after a full GC. Rows: one per batch (RSS, main-thread heap, external + array buffers), then the
 * growth after warm-up: the last batch's RSS against the mean of batches 2-3.
 *
 *   FH_BENCH_MEMORY_RUNS=30        conversations (default 30)
 *   FH_BENCH_MEMORY_CALLS=100      model calls each (default 100: 3,000 calls in all)
 *   FH_BENCH_MEMORY_AT_ONCE=3      conversations at a time (default 3)
 *   FH_BENCH_CACHES='{"transcripts":64,"requestPrefixes":64}'   the worker's `caches` (createWorker)
 *   FH_BENCH_MAX_CACHED_WORKFLOWS=n                             the worker's maxCachedWorkflows
 */
'use strict';
const { promises: fs } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Client, Connection } = require('@temporalio/client');
const { startDevServer } = require('../dist/testing/temporal-cli.js');
const { FakeAnthropicServer } = require('../dist/testing/anthropic/fake-anthropic.js');
const { FileTranscriptStore, FabricHarnessPlugin } = require('../dist/worker/index.js');
const { startAgent } = require('../dist/client/index.js');
const { growerRoute } = require('./history-growth.js');
const { GROW_TEXT_CHARS } = require('./fixtures/grower-agents.js');
const { growerCompacting } = require('./side-by-side/agents.js');
const { ChildWorker } = require('./side-by-side.js');

const API_KEY = 'bench-key';
const BIG_MESSAGES = { 'grpc.max_receive_message_length': 512 * 1024 * 1024 };

const { positiveInt } = require('./env-int.js');

const mb = (n) => `${(n / 1e6).toFixed(0)} MB`;

module.exports = {
  name: 'worker-memory',
  description: 'one worker over many conversations (default 30 x 100 model calls): RSS and heap after each batch, after a GC',

  async run(ctx) {
    const runs = positiveInt('FH_BENCH_MEMORY_RUNS', 30);
    const calls = positiveInt('FH_BENCH_MEMORY_CALLS', 100);
    const atOnce = positiveInt('FH_BENCH_MEMORY_AT_ONCE', 3);
    const caches = process.env.FH_BENCH_CACHES ? JSON.parse(process.env.FH_BENCH_CACHES) : undefined;
    const maxCached = process.env.FH_BENCH_MAX_CACHED_WORKFLOWS ? positiveInt('FH_BENCH_MAX_CACHED_WORKFLOWS') : undefined;
    const cleanups = [];
    const rows = [];
    try {
      const server = await startDevServer({ namespace: 'default', logLevel: 'error', onProgress: (l) => ctx.log(l) });
      cleanups.push(() => server.stop());
      // No request kept: thousands of whole conversations would fill this process's heap.
      const fake = await FakeAnthropicServer.start({ route: growerRoute, contextWindow: 10_000_000, apiKey: API_KEY, keepRequests: 0 });
      cleanups.push(() => fake.stop());
      const storeDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-bench-mem-'));
      cleanups.push(() => fs.rm(storeDir, { recursive: true, force: true }));
      const taskQueue = `bench-mem-${process.pid}`;
      const design = { key: 'ours-memory', label: 'ours', script: 'side-by-side/ours-worker.js', model: 'fhModel' };
      const config = { address: server.address, namespace: server.namespace, taskQueue, fakeUrl: fake.url, apiKey: API_KEY, storeDir, growTextChars: GROW_TEXT_CHARS, caches, maxCachedWorkflows: maxCached };
      const worker = await ChildWorker.start(design, config, ctx, ['--expose-gc']);
      cleanups.push(() => worker.stop());
      const connection = await Connection.connect({ address: server.address, channelArgs: BIG_MESSAGES });
      cleanups.push(() => connection.close());
      const client = new Client({ connection, namespace: server.namespace, plugins: [new FabricHarnessPlugin({ store: new FileTranscriptStore(storeDir) })] });

      const first = await worker.memory();
      rows.push({ batch: 0, conversations: 0, 'model calls': 0, RSS: mb(first.rss), 'main-thread heap used': mb(first.heapUsed), 'external + array buffers': mb(first.external + first.arrayBuffers), 'wall': '' });
      ctx.log(`worker ready: RSS ${mb(first.rss)}; ${runs} conversations of ${calls} calls, ${atOnce} at a time`);
      let done = 0;
      for (let batch = 1; done < runs; batch++) {
        const t0 = Date.now();
        const n = Math.min(atOnce, runs - done);
        const handles = await Promise.all(
          Array.from({ length: n }, (_, i) => startAgent(client, growerCompacting, { calls }, { workflowId: `mem-${process.pid}-${done + i}`, taskQueue })),
        );
        await Promise.all(handles.map((h) => h.result()));
        done += n;
        const m = await worker.memory();
        rows.push({
          batch,
          conversations: done,
          'model calls': done * calls,
          RSS: mb(m.rss),
          'main-thread heap used': mb(m.heapUsed),
          'external + array buffers': mb(m.external + m.arrayBuffers),
          wall: ctx.seconds(Date.now() - t0),
          rss: m.rss,
        });
        ctx.log(`batch ${batch}: ${done} conversations, RSS ${mb(m.rss)}, heap ${mb(m.heapUsed)}, ${ctx.seconds(Date.now() - t0)}`);
      }
    } finally {
      for (const cleanup of cleanups.reverse()) {
        await Promise.resolve()
          .then(cleanup)
          .catch((err) => ctx.log(`cleanup: ${err && err.message ? err.message : err}`));
      }
    }
    const batches = rows.filter((r) => r.batch > 0);
    if (batches.length >= 4) {
      const warm = (batches[1].rss + batches[2].rss) / 2;
      const last = batches[batches.length - 1].rss;
      rows.push({ batch: 'growth', conversations: '', 'model calls': '', RSS: `${(last / warm).toFixed(2)}x (last batch vs batches 2-3)` });
    }
    return rows.map(({ rss, ...r }) => r);
  },
};
