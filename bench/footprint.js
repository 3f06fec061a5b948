/**
 * What installing and loading the package costs a user: `npm pack` of this checkout installed into a
 * fresh project (its dependencies from the registry; `--prefer-offline` lets the local cache serve what
 * it has), the size of the resulting node_modules and of each top-level package in it, and the time to
 * `require` each entry in a fresh Node process (median of runs), with which heavy modules that loads.
 *
 *   node bench/run.js footprint        (after `npm run build`; ~1 min, most of it the install)
 */
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const RUNS = Number(process.env.FH_BENCH_FOOTPRINT_RUNS ?? 7);

function du(dir) {
  let total = 0;
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) total += fs.statSync(p).size;
    }
  };
  walk(dir);
  return total;
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** ms to require `spec` in a fresh process, and whether it loaded the worker, the AWS SDK, @temporalio/testing. */
function importCost(cwd, spec) {
  const script = `const t = process.hrtime.bigint(); require(${JSON.stringify(spec)}); const ms = Number(process.hrtime.bigint() - t) / 1e6;
const loaded = (m) => Object.keys(require.cache).some((k) => k.includes('/node_modules/' + m + '/'));
process.stdout.write(JSON.stringify({ ms, worker: loaded('@temporalio/worker'), aws: loaded('@aws-sdk/client-s3'), testing: loaded('@temporalio/testing') }));`;
  const runs = [];
  for (let i = 0; i < RUNS; i++) runs.push(JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd, encoding: 'utf8' })));
  return { ms: median(runs.map((r) => r.ms)), ...runs[0], ms_all: runs.map((r) => Math.round(r.ms)) };
}

module.exports = {
  name: 'footprint',
  description: 'install size of the packed package in a fresh project, and the time to require each entry',
  async run(ctx) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fh-footprint-'));
    try {
      const packed = execFileSync('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: ROOT, encoding: 'utf8' }).trim().split('\n').at(-1);
      fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'fh-footprint', private: true }));
      ctx.log(`installing ${packed} into ${dir}`);
      execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', path.join(dir, packed)], { cwd: dir, stdio: 'ignore', timeout: 600_000 });
      const nm = path.join(dir, 'node_modules');
      const rows = [{ what: 'node_modules (total)', size: ctx.bytes(du(nm), { mb: true }) }];
      const tops = [];
      for (const e of fs.readdirSync(nm)) {
        if (e.startsWith('.')) continue;
        const names = e.startsWith('@') ? fs.readdirSync(path.join(nm, e)).map((n) => `${e}/${n}`) : [e];
        for (const n of names) tops.push({ n, size: du(path.join(nm, n)) });
      }
      // The biggest top-level packages, and the groups that matter for the question of weight.
      const group = (prefix) => tops.filter((t) => t.n.startsWith(prefix)).reduce((a, t) => a + t.size, 0);
      rows.push({ what: '@temporalio/* (all)', size: ctx.bytes(group('@temporalio/'), { mb: true }) });
      rows.push({ what: '@aws-sdk/* + @smithy/* + @aws-crypto/*', size: ctx.bytes(group('@aws-sdk/') + group('@smithy/') + group('@aws-crypto/'), { mb: true }) });
      rows.push({ what: '@swc/* (the bundler, via @temporalio/worker)', size: ctx.bytes(group('@swc/'), { mb: true }) });
      for (const t of tops.sort((a, b) => b.size - a.size).slice(0, 8)) rows.push({ what: t.n, size: ctx.bytes(t.size, { mb: true }) });
      for (const spec of ['@fabric-harness/sdk', '@fabric-harness/sdk/client', '@fabric-harness/sdk/worker', '@fabric-harness/sdk/testing']) {
        const c = importCost(dir, spec);
        rows.push({
          what: `require('${spec}')`,
          size: `${c.ms.toFixed(0)} ms`,
          loads: [c.worker && '@temporalio/worker', c.aws && '@aws-sdk/client-s3', c.testing && '@temporalio/testing'].filter(Boolean).join(', ') || '-',
        });
      }
      return rows;
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
};
