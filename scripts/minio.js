#!/usr/bin/env node
/**
 * MinIO (S3-compatible server) for this repository's S3 tests (plain Node; runs the compiled SDK, so `npm run build` first).
 *
 *   node scripts/minio.js install   find or build MinIO (.minio/bin/minio), print where it is
 *   node scripts/minio.js serve     run it on 127.0.0.1 with generated root credentials until Ctrl+C
 *
 * serve options: --port <n> (default: a free port), --data <dir> (default: a temporary directory, removed on exit)
 */
'use strict';

const path = require('node:path');

const projectDir = path.resolve(__dirname, '..');

function loadLib() {
  try {
    // The provisioning is TypeScript in test/support (not shipped): loaded through the tests' swc hook.
    require('../test/support/swc-register.js');
    return require('../test/support/provision/minio.ts');
  } catch (err) {
    if (err && err.code === 'MODULE_NOT_FOUND') {
      console.error('test/support/provision/minio.ts cannot be loaded: run `npm ci` first (it needs the dev dependencies).');
      process.exit(1);
    }
    throw err;
  }
}

const progress = (line) => console.error(`[minio] ${line}`);

function parseArgs(argv) {
  const opts = {};
  for (let i = 0; i < argv.length; i++) {
    const m = /^--(port|data)(?:=(.*))?$/.exec(argv[i]);
    if (!m) throw new Error(`unexpected argument: ${argv[i]} (options: --port <n>, --data <dir>)`);
    const value = m[2] !== undefined ? m[2] : argv[++i];
    if (value === undefined) throw new Error(`--${m[1]} needs a value`);
    opts[m[1]] = value;
  }
  if (opts.port !== undefined) {
    const n = Number(opts.port);
    if (!Number.isInteger(n) || n < 1 || n > 65535) throw new Error(`--port must be a port number, got ${opts.port}`);
    opts.port = n;
  }
  return opts;
}

async function install() {
  const started = Date.now();
  const exe = await loadLib().ensureMinio({ projectDir, onProgress: progress });
  console.log(`MinIO: ${exe}\n  (ready in ${((Date.now() - started) / 1000).toFixed(1)} s)`);
}

async function serve(argv) {
  const args = parseArgs(argv);
  const server = await loadLib().startMinio({ projectDir, port: args.port, dataDir: args.data, onProgress: progress });
  console.log(
    [
      '',
      'MinIO is running',
      `  AWS_ENDPOINT_URL_S3=${server.endpoint}`,
      `  AWS_ACCESS_KEY_ID=${server.accessKeyId}`,
      `  AWS_SECRET_ACCESS_KEY=${server.secretAccessKey}`,
      `  AWS_REGION=${server.region}`,
      `  data: ${server.dataDir}`,
      'Press Ctrl+C to stop.',
      '',
    ].join('\n'),
  );
  const keepAlive = setInterval(() => undefined, 1 << 30);
  const shutdown = (signal) => {
    console.error(`[minio] ${signal}: stopping…`);
    server.stop().then(
      () => {
        clearInterval(keepAlive);
        process.exit(0);
      },
      (err) => {
        console.error('[minio] error while stopping:', err);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
}

async function main() {
  const [command, ...rest] = process.argv.slice(2);
  if (command === 'install') return install();
  if (command === 'serve') return serve(rest);
  console.error('usage: node scripts/minio.js install | serve [--port <n>] [--data <dir>]');
  process.exit(command ? 2 : 0);
}

main().catch((err) => {
  if (err && err.code) console.error(`error [${err.code}]: ${err.message}`);
  else console.error(err && err.message ? `error: ${err.message}` : err);
  process.exit(1);
});
