#!/usr/bin/env node
/**
 * Bench driver. `npm run bench` builds, then runs every bench; `node bench/run.js [name...]` runs the
 * named ones (after `npm run build`: benches require the SDK from dist/).
 *
 *   node bench/run.js                    all benches, in file-name order
 *   node bench/run.js history-growth     only that one
 *   node bench/run.js --list             names and descriptions
 *   node bench/run.js --json out.json    also write every bench's rows as JSON
 *
 * A bench is any bench/*.js file (other than this one) that exports
 *
 *   module.exports = {
 *     name: 'my-bench',                         // what you type on the command line
 *     description: 'one line for --list',       // optional
 *     async run(ctx) { return rows; },          // rows: array of flat objects, one table row each
 *   };
 *
 * Adding a bench is dropping such a file in bench/: nothing here to edit. The columns of the printed
 * table are the keys of the rows, in first-seen order; values are printed as they are (format numbers
 * yourself, e.g. with `ctx.bytes`). `ctx.log(line)` prints progress to stderr. A bench that throws is
 * reported as failed and the others still run; the exit code is 1 if any failed.
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');

/** Every bench in bench/, by name, in file-name order. */
function discoverBenches(dir = __dirname) {
  const benches = new Map();
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.js') && f !== path.basename(__filename)).sort()) {
    const mod = require(path.join(dir, file));
    if (!mod || typeof mod.name !== 'string' || typeof mod.run !== 'function') continue;
    if (benches.has(mod.name)) throw new Error(`two benches are named '${mod.name}' (${benches.get(mod.name).file} and ${file})`);
    benches.set(mod.name, { ...mod, file });
  }
  return benches;
}

/** A plain-text table: columns are the rows' keys in first-seen order. */
function formatTable(rows) {
  if (!rows || rows.length === 0) return '(no rows)';
  const columns = [];
  for (const row of rows) for (const key of Object.keys(row)) if (!columns.includes(key)) columns.push(key);
  const cell = (v) => (v === undefined || v === null ? '' : String(v));
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (values) => values.map((v, i) => (isNumeric(v) ? v.padStart(widths[i]) : v.padEnd(widths[i]))).join('  ').trimEnd();
  return [line(columns), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map((r) => line(columns.map((c) => cell(r[c]))))].join('\n');
}

function isNumeric(s) {
  return /^(>=? |<=? |~)?[\d,.\s]+(x|%| ?[kKMG]?B| s)?$/.test(s) && /\d/.test(s);
}

/** 1234567 -> "1,234,567 B"; with `mb`, "1.23 MB". */
function bytes(n, { mb = false } = {}) {
  if (n === undefined || n === null || Number.isNaN(n)) return '';
  return mb ? `${(n / 1e6).toFixed(2)} MB` : `${Math.round(n).toLocaleString('en-US')} B`;
}

function seconds(ms) {
  return `${(ms / 1000).toFixed(1)} s`;
}

function context(name) {
  return {
    log: (line) => process.stderr.write(`[${name}] ${line}\n`),
    bytes,
    seconds,
  };
}

async function main(argv) {
  const args = [...argv];
  let jsonOut;
  const jsonAt = args.indexOf('--json');
  if (jsonAt >= 0) {
    jsonOut = args[jsonAt + 1];
    if (!jsonOut) throw new Error('--json needs a file name');
    args.splice(jsonAt, 2);
  }
  const benches = discoverBenches();
  if (args.includes('--list') || args.includes('-h') || args.includes('--help')) {
    console.log('usage: node bench/run.js [--list] [--json out.json] [name...]\n');
    for (const b of benches.values()) console.log(`  ${b.name.padEnd(24)} ${b.description ?? ''}`);
    return 0;
  }
  const unknown = args.filter((a) => !benches.has(a));
  if (unknown.length) {
    throw new Error(`unknown bench: ${unknown.join(', ')}; there are: ${[...benches.keys()].join(', ') || '(none)'}`);
  }
  const selected = args.length ? args.map((a) => benches.get(a)) : [...benches.values()];

  const results = [];
  for (const bench of selected) {
    const started = Date.now();
    process.stderr.write(`\n== ${bench.name}${bench.description ? `: ${bench.description}` : ''}\n`);
    try {
      const rows = await bench.run(context(bench.name));
      const ms = Date.now() - started;
      console.log(`\n${bench.name} (${seconds(ms)})\n${formatTable(rows)}\n`);
      results.push({ name: bench.name, ok: true, ms, rows });
    } catch (err) {
      const ms = Date.now() - started;
      console.log(`\n${bench.name} FAILED after ${seconds(ms)}: ${err && err.stack ? err.stack : err}\n`);
      results.push({ name: bench.name, ok: false, ms, error: String(err && err.message ? err.message : err) });
    }
  }
  if (jsonOut) fs.writeFileSync(jsonOut, `${JSON.stringify(results, null, 2)}\n`);
  return results.every((r) => r.ok) ? 0 : 1;
}

module.exports = { discoverBenches, formatTable, bytes, seconds };

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => {
      console.error(err && err.message ? err.message : err);
      process.exit(2);
    },
  );
}
