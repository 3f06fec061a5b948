#!/usr/bin/env node
/**
 * A production-like Temporal cluster on this machine: the Temporal server v1.29.1 (all services in one
 * process) on PostgreSQL, built and set up by the project's own code (plain Node; runs the compiled SDK,
 * so `npm run build` first).
 *
 *   node scripts/temporal-cluster.js install   find/install PostgreSQL, build temporal-server + temporal-sql-tool
 *   node scripts/temporal-cluster.js start     start PostgreSQL and the server in the background (state in --dir)
 *   node scripts/temporal-cluster.js stop      stop them
 *
 * options: --dir <dir> (default .temporal/cluster: database, config, logs; kept between start/stop),
 *          --port <n> (frontend port, default 7233), --namespace <ns> (default "default")
 */
'use strict';

const fs = require('node:fs');
const path = require('node:path');

const projectDir = path.resolve(__dirname, '..');
const progress = (line) => console.error(`[cluster] ${line}`);

function loadLib() {
  try {
    // The provisioning is TypeScript in test/support (not shipped): loaded through the tests' swc hook.
    require('../test/support/swc-register.js');
    return {
      ...require('../test/support/provision/temporal-server.ts'),
      ...require('../test/support/provision/postgres.ts'),
    };
  } catch (err) {
    if (err && err.code === 'MODULE_NOT_FOUND') {
      console.error('test/support/provision/temporal-server.ts cannot be loaded: run `npm ci` first (it needs the dev dependencies).');
      process.exit(1);
    }
    throw err;
  }
}

function parseArgs(argv) {
  const opts = {};
  for (let i = 0; i < argv.length; i++) {
    const m = /^--(dir|port|namespace)(?:=(.*))?$/.exec(argv[i]);
    if (!m) throw new Error(`unexpected argument: ${argv[i]} (options: --dir <dir>, --port <n>, --namespace <ns>)`);
    const value = m[2] !== undefined ? m[2] : argv[++i];
    if (value === undefined) throw new Error(`--${m[1]} needs a value`);
    opts[m[1]] = value;
  }
  if (opts.port !== undefined) {
    const n = Number(opts.port);
    if (!Number.isInteger(n) || n < 1 || n > 65535) throw new Error(`--port must be a port number, got ${opts.port}`);
    opts.port = n;
  }
  opts.dir = path.resolve(projectDir, opts.dir || path.join('.temporal', 'cluster'));
  return opts;
}

async function install() {
  const lib = loadLib();
  const started = Date.now();
  const pg = await lib.ensurePostgres(progress);
  const bins = await lib.ensureTemporalServer({ projectDir, onProgress: progress });
  const schema = lib.postgresSchemaDir();
  console.log(
    [`PostgreSQL:        ${pg}`, `temporal-server:   ${bins.server}`, `temporal-sql-tool: ${bins.sqlTool}`, `schema:            ${schema}`, `(ready in ${((Date.now() - started) / 1000).toFixed(1)} s)`].join('\n'),
  );
}

async function start(argv) {
  const args = parseArgs(argv);
  const lib = loadLib();
  const state = path.join(args.dir, 'cluster.json');
  if (fs.existsSync(state)) {
    const s = JSON.parse(fs.readFileSync(state, 'utf8'));
    const alive = (pid) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    if (alive(s.serverPid) && alive(s.postgresPid)) {
      console.log(`Already running: TEMPORAL_ADDRESS=${s.address} (namespace ${s.namespace}); stop it with \`node scripts/temporal-cluster.js stop\`.`);
      return;
    }
    await lib.stopDetachedCluster(args.dir, progress); // half-dead leftovers
  }
  const cluster = await lib.startTemporalCluster({ projectDir, dir: args.dir, port: args.port ?? 7233, namespace: args.namespace, detached: true, onProgress: progress });
  console.log(
    [
      '',
      'Temporal cluster is running (Temporal server on PostgreSQL)',
      `  TEMPORAL_ADDRESS=${cluster.address}`,
      `  namespace:   ${cluster.namespace}`,
      `  server log:  ${cluster.serverLog}`,
      `  PostgreSQL:  127.0.0.1:${cluster.postgres.port} (data ${cluster.postgres.dataDir})`,
      'Stop it with `node scripts/temporal-cluster.js stop`.',
      '',
    ].join('\n'),
  );
  process.exit(0); // the children are detached; nothing here should keep them
}

async function stop(argv) {
  const args = parseArgs(argv);
  const stopped = await loadLib().stopDetachedCluster(args.dir, progress);
  console.log(stopped ? 'Temporal cluster stopped.' : `No cluster recorded in ${args.dir}.`);
}

async function main() {
  const [command, ...rest] = process.argv.slice(2);
  if (command === 'install') return install();
  if (command === 'start') return start(rest);
  if (command === 'stop') return stop(rest);
  console.error('usage: node scripts/temporal-cluster.js install | start [--port 7233] [--dir .temporal/cluster] | stop [--dir …]');
  process.exit(command ? 2 : 0);
}

main().catch((err) => {
  if (err && err.code) console.error(`error [${err.code}]: ${err.message}`);
  else console.error(err && err.message ? `error: ${err.message}` : err);
  process.exit(1);
});
