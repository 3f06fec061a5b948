#!/usr/bin/env node
/**
 * Temporal CLI / dev server for this repository (plain Node; runs the compiled SDK, so `npm run build` first).
 *
 *   node scripts/temporal.js install   find or build the Temporal CLI (.temporal/bin/temporal), print where it is
 *   node scripts/temporal.js serve     run a dev server with the Web UI on 127.0.0.1, state kept in .fh/temporal.db,
 *                                      with the SDK's custom search attributes registered (FhAgent, FhKind, ...)
 *
 * serve options: --port <n> (default 7233), --ui-port <n> (default 8233), --namespace <ns> (default "default"),
 *                --db <file> (default .fh/temporal.db), --log-level <level> (default warn)
 * Workers and clients then use TEMPORAL_ADDRESS=127.0.0.1:7233.
 */
'use strict';

const { execFileSync } = require('node:child_process');
const path = require('node:path');

const projectDir = path.resolve(__dirname, '..');

function loadLib() {
  try {
    return { ...require('../dist/testing/temporal-cli.js'), ...require('../dist/wire/search-attributes.js') };
  } catch (err) {
    if (err && err.code === 'MODULE_NOT_FOUND') {
      console.error('dist/testing/temporal-cli.js is missing: run `npm run build` first (npm run server does).');
      process.exit(1);
    }
    throw err;
  }
}

function progress(line) {
  console.error(`[temporal] ${line}`);
}

function parseArgs(argv) {
  const opts = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const m = /^--([\w-]+)(?:=(.*))?$/.exec(arg);
    if (!m) throw new Error(`unexpected argument: ${arg}`);
    const value = m[2] !== undefined ? m[2] : argv[++i];
    if (value === undefined) throw new Error(`--${m[1]} needs a value`);
    opts[m[1]] = value;
  }
  return opts;
}

function toPort(value, name) {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new Error(`--${name} must be a port number, got ${value}`);
  return n;
}

async function install() {
  const lib = loadLib();
  const started = Date.now();
  const exe = await lib.ensureTemporalCli({ projectDir, onProgress: progress });
  if (!exe) {
    console.log(
      'No Temporal CLI installed: neither TEMPORAL_CLI_PATH, `temporal` on PATH, .temporal/bin/temporal nor Go was found.\n' +
        'The dev server will let @temporalio/testing download the CLI on first start (needs internet access).\n' +
        'To build it locally instead, install Go >= 1.25 and rerun `npm run temporal:install`.',
    );
    return;
  }
  let version = '';
  try {
    version = execFileSync(exe, ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    // the path is still useful without the version
  }
  console.log(`Temporal CLI: ${exe}${version ? `\n  ${version}` : ''}\n  (ready in ${((Date.now() - started) / 1000).toFixed(1)} s)`);
}

async function serve(argv) {
  const args = parseArgs(argv);
  const known = new Set(['port', 'ui-port', 'namespace', 'db', 'log-level']);
  for (const k of Object.keys(args)) if (!known.has(k)) throw new Error(`unknown option --${k}`);
  const lib = loadLib();
  const dbFilename = path.resolve(projectDir, args.db || path.join('.fh', 'temporal.db'));
  const server = await lib.startDevServer({
    projectDir,
    ui: true,
    port: toPort(args.port || '7233', 'port'),
    uiPort: toPort(args['ui-port'] || '8233', 'ui-port'),
    namespace: args.namespace || 'default',
    dbFilename,
    searchAttributes: { ...lib.FH_SEARCH_ATTRIBUTES },
    logLevel: args['log-level'] || 'warn',
    onProgress: progress,
  });

  console.log(
    [
      '',
      'Temporal dev server is running',
      `  address:    ${server.address}    (workers: TEMPORAL_ADDRESS=${server.address})`,
      `  namespace:  ${server.namespace}`,
      `  web UI:     ${server.uiUrl}`,
      `  database:   ${path.relative(process.cwd(), dbFilename) || dbFilename}`,
      `  attributes: ${Object.keys(lib.FH_SEARCH_ATTRIBUTES).join(', ')}`,
      `  executable: ${server.executable}`,
      'Press Ctrl+C to stop.',
      '',
    ].join('\n'),
  );

  // Keep the process alive; the server runs as a child of the native runtime.
  const keepAlive = setInterval(() => undefined, 1 << 30);
  let stopping = false;
  const shutdown = (signal) => {
    if (stopping) {
      console.error(`[temporal] ${signal} again: exiting without waiting`);
      process.exit(130);
    }
    stopping = true;
    console.error(`[temporal] ${signal}: stopping the dev server…`);
    server.stop().then(
      () => {
        clearInterval(keepAlive);
        console.error('[temporal] stopped');
        process.exit(0);
      },
      (err) => {
        console.error('[temporal] error while stopping:', err);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

async function main() {
  const [command, ...rest] = process.argv.slice(2);
  switch (command) {
    case 'install':
      return install();
    case 'serve':
      return serve(rest);
    default:
      console.error('usage: node scripts/temporal.js install | serve [--port 7233] [--ui-port 8233] [--namespace default] [--db .fh/temporal.db]');
      process.exit(command ? 2 : 0);
  }
}

main().catch((err) => {
  if (err && err.code) console.error(`error [${err.code}]: ${err.message}`);
  else console.error(err && err.message ? `error: ${err.message}` : err);
  process.exit(1);
});
