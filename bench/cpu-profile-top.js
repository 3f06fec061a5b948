#!/usr/bin/env node
/**
 * The top functions by self time of a V8 CPU profile (`node --cpu-prof`, e.g. the side-by-side bench
 * with FH_BENCH_CPU_PROF=dir): `node bench/cpu-profile-top.js file.cpuprofile [count]`.
 * Not a bench (no `run` export): bench/run.js skips it.
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');

function topSelf(profile, count = 25) {
  const { nodes, samples, timeDeltas } = profile;
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const self = new Map();
  samples.forEach((id, i) => self.set(id, (self.get(id) || 0) + (timeDeltas[i] || 0)));
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const byFn = new Map();
  for (const [id, us] of self) {
    const { functionName, url, lineNumber } = byId.get(id).callFrame;
    const key = `${functionName || '(anonymous)'} ${url ? `${path.basename(url)}:${lineNumber + 1}` : ''}`.trim();
    byFn.set(key, (byFn.get(key) || 0) + us);
  }
  return { totalMs: total / 1000, top: [...byFn].sort((a, b) => b[1] - a[1]).slice(0, count).map(([fn, us]) => ({ fn, ms: us / 1000, pct: (100 * us) / total })) };
}

if (require.main === module) {
  const [file, n] = process.argv.slice(2);
  if (!file) throw new Error('usage: node bench/cpu-profile-top.js file.cpuprofile [count]');
  const { totalMs, top } = topSelf(JSON.parse(fs.readFileSync(file, 'utf8')), Number(n) || 25);
  console.log(`${path.basename(file)}: ${totalMs.toFixed(0)} ms sampled`);
  for (const t of top) console.log(`${t.ms.toFixed(0).padStart(7)} ms ${t.pct.toFixed(1).padStart(5)}%  ${t.fn}`);
}

module.exports = { topSelf };
