/**
 * workflow-modules: what loading the workflow code costs each workflow run, before it does anything.
 * Temporal evaluates a bundle's modules afresh for every run (so no state leaks between runs) and each
 * cached run keeps them: every session start, continue-as-new and rebuild of an evicted session pays
 * this, and every cached session holds it.
 *
 * Measured the way Temporal does it (a fresh module cache in a V8 context per run): FH_BENCH_RUNS
 * contexts with the bundle evaluated, then the workflows module imported in each. Per run: the heap
 * still held after a full GC, and the CPU of the import. Side by side in one run:
 *   - ours: the bundle of the bench's session agents (what a session's run imports);
 *   - zod alone: a workflow module that only imports zod (the floor for any zod-validating workflow code);
 *   - nothing: a workflow module that imports nothing.
 *
 *   FH_BENCH_RUNS=20     contexts per design
 */
'use strict';
const path = require('node:path');
const vm = require('node:vm');
const os = require('node:os');
const { promises: fs } = require('node:fs');
const { bundleWorkflowCode } = require('@temporalio/worker');
const { bundleAgents } = require('../dist/worker/index.js');

const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: (m) => console.error(m) };

const { positiveInt } = require('./env-int.js');

/** A full garbage collection, with or without --expose-gc. */
function collector() {
  if (typeof global.gc === 'function') return global.gc;
  require('node:v8').setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc');
}

/** Bytes held and CPU ms per import of the bundle's workflows module, over `runs` fresh contexts. */
function perRun(code, runs) {
  const gc = collector();
  const script = new vm.Script(code, { filename: 'workflow-bundle.js' });
  const held = () => {
    gc();
    gc();
    return process.memoryUsage().heapUsed;
  };
  const contexts = [];
  for (let i = 0; i < runs; i++) {
    const ctx = vm.createContext({ TextEncoder, TextDecoder, URL, setTimeout, clearTimeout, queueMicrotask, structuredClone, AbortController, console });
    vm.runInContext('globalThis.__webpack_module_cache__ = {}', ctx);
    script.runInContext(ctx);
    contexts.push(ctx);
  }
  const before = held();
  const cpu0 = process.cpuUsage();
  for (const ctx of contexts) vm.runInContext('__TEMPORAL__.importWorkflows()', ctx);
  const cpu = process.cpuUsage(cpu0);
  const bytes = (held() - before) / runs;
  contexts.length = 0;
  return { bytes, cpuMs: (cpu.user + cpu.system) / 1000 / runs };
}

module.exports = {
  name: 'workflow-modules',
  description: "what loading the workflow code costs each run (heap held, CPU), ours vs zod alone vs nothing",
  async run(ctx) {
    const runs = positiveInt('FH_BENCH_RUNS', 20);
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-bench-modules-'));
    try {
      await fs.writeFile(path.join(dir, 'zod-only.js'), "const { z } = require('zod');\nexports.probe = async () => typeof z;\n");
      await fs.writeFile(path.join(dir, 'nothing.js'), "exports.probe = async () => 'nothing';\n");
      // The floors' files live in a temp dir: zod and Temporal resolve from this package, as the SDK's do.
      const resolveModules = (config) => ({ ...config, resolve: { ...config.resolve, modules: [...(config.resolve?.modules ?? ['node_modules']), path.resolve(__dirname, '..', 'node_modules')] } });
      const designs = [
        ['ours (session agents)', () => bundleAgents(require.resolve('./fixtures/session-agents.js'), { logger: quiet })],
        ['zod alone', () => bundleWorkflowCode({ workflowsPath: path.join(dir, 'zod-only.js'), logger: quiet, webpackConfigHook: resolveModules })],
        ['nothing', () => bundleWorkflowCode({ workflowsPath: path.join(dir, 'nothing.js'), logger: quiet, webpackConfigHook: resolveModules })],
      ];
      const rows = [];
      for (const [design, bundle] of designs) {
        ctx.log(design);
        const { code } = await bundle();
        const m = perRun(code, runs);
        rows.push({ design, runs, 'bundle': ctx.bytes(code.length), 'heap held per run': ctx.bytes(Math.max(0, m.bytes)), 'CPU per run': `${m.cpuMs.toFixed(1)} ms` });
      }
      return rows;
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  },
};
