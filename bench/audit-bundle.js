/**
 * audit-bundle: what `fh audit export` / `fh audit verify` cost per 1,000 model calls. One grower run
 * (a conversation growing ~2 KB per call: each call a transcript segment and a tool result in the store)
 * of N model calls on a local dev server and file store; then the bundle is exported (every history, its
 * event chain, every store blob), and verified offline twice: the integrity checks alone (signature,
 * hashes, chains, references), and with replay against the agent code (which bundles the code once).
 * Sizes and times are reported as measured and scaled to 1,000 model calls.
 *
 *   BENCH_AUDIT_CALLS=200   N (default 200; the per-1,000 columns scale from it)
 */
'use strict';
const { promises: fs } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Client, Connection } = require('@temporalio/client');
const { NativeConnection } = require('@temporalio/worker');
const { startDevServer } = require('../dist/testing/temporal-cli.js');
const { FakeAnthropicServer } = require('../dist/testing/anthropic/fake-anthropic.js');
const { createWorker, bundleAgents, FileTranscriptStore, FabricHarnessPlugin } = require('../dist/worker/index.js');
const { startAgent } = require('../dist/client/index.js');
const { exportBundle } = require('../dist/audit/bundle/export.js');
const { verifyBundle } = require('../dist/audit/bundle/verify.js');
const { grower, growTool } = require('./fixtures/grower-agents.js');
const { growerRoute } = require('./history-growth.js');

const AGENTS = require.resolve('./fixtures/grower-agents.js');
const API_KEY = 'bench-key';

function quietLogger() {
  const noop = () => undefined;
  return { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: (m) => console.error(m) };
}

module.exports = {
  name: 'audit-bundle',
  description: 'audit bundle size and export / verify / verify+replay time per 1,000 model calls (one grower run of BENCH_AUDIT_CALLS calls)',
  async run(ctx) {
    const calls = Number(process.env.BENCH_AUDIT_CALLS ?? 200);
    if (!Number.isInteger(calls) || calls < 2) throw new Error(`BENCH_AUDIT_CALLS must be an integer of 2 or more, got '${process.env.BENCH_AUDIT_CALLS}'`);
    const cleanups = [];
    try {
      const server = await startDevServer({ namespace: 'default', logLevel: 'error', onProgress: (l) => ctx.log(l) });
      cleanups.push(() => server.stop());
      const fake = await FakeAnthropicServer.start({ route: growerRoute, contextWindow: 10_000_000, apiKey: API_KEY, keepRequests: 0 });
      cleanups.push(() => fake.stop());
      const storeDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-bench-audit-'));
      cleanups.push(() => fs.rm(storeDir, { recursive: true, force: true }));
      const store = new FileTranscriptStore(storeDir);
      const connection = await Connection.connect({ address: server.address });
      cleanups.push(() => connection.close());
      const nativeConnection = await NativeConnection.connect({ address: server.address });
      cleanups.push(() => nativeConnection.close());
      const taskQueue = `bench-audit-${process.pid}`;
      const worker = await createWorker({
        agents: AGENTS,
        tools: [growTool],
        connection: nativeConnection,
        namespace: server.namespace,
        taskQueue,
        model: { apiKey: API_KEY, baseURL: fake.url },
        store,
        workflowBundle: await bundleAgents(AGENTS, { logger: quietLogger() }),
      });
      const running = worker.run();
      cleanups.unshift(async () => {
        worker.shutdown();
        await running;
      });
      const client = new Client({ connection, namespace: server.namespace, plugins: [new FabricHarnessPlugin({ store })] });
      ctx.log(`running ${calls} model calls`);
      const handle = await startAgent(client, grower, { calls }, { workflowId: `bench-audit-${Date.now()}`, taskQueue });
      await handle.result();

      let t = Date.now();
      const { bytes, manifest } = await exportBundle(handle.workflowId, { client, namespace: server.namespace, store });
      const exportMs = Date.now() - t;
      t = Date.now();
      await verifyBundle(bytes);
      const verifyMs = Date.now() - t;
      t = Date.now();
      await verifyBundle(bytes, { agents: [AGENTS] });
      const replayMs = Date.now() - t;
      const per = 1000 / calls;
      return [
        {
          'model calls': calls,
          runs: manifest.runs.length,
          blobs: manifest.blobs.length,
          bundle: ctx.bytes(bytes.length),
          'bundle /1k calls': ctx.bytes(bytes.length * per, { mb: true }),
          export: ctx.seconds(exportMs),
          'export /1k': ctx.seconds(exportMs * per),
          verify: ctx.seconds(verifyMs),
          'verify /1k': ctx.seconds(verifyMs * per),
          'verify+replay': ctx.seconds(replayMs),
        },
      ];
    } finally {
      for (const c of cleanups) await c().catch(() => undefined);
    }
  },
};
