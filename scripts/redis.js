#!/usr/bin/env node
/**
 * Installs Debian's redis-server, the live-path broker the tests start (src/activities/stream/redis-broker.ts), when it is not
 * there yet. A no-op (and silent) when /usr/bin/redis-server exists; otherwise `apt-get install redis-server`
 * (through sudo when not root). On a machine without apt-get it says what to install and fails.
 *
 *   node scripts/redis.js
 */
'use strict';

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');

const REDIS = "/usr/bin/redis-server";

function run(cmd, args) {
  const res = spawnSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  if (res.error) throw res.error;
  return res.status === 0;
}

function has(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

function main() {
  if (fs.existsSync(REDIS)) return;
  if (process.platform !== 'linux') {
    console.error(`[redis] not on Linux (${process.platform}): the broker tests need a redis-server on PATH (brew install redis).`);
    return;
  }
  if (!has('apt-get')) {
    console.error('[redis] /usr/bin/redis-server is missing and apt-get is not available: install redis with your package manager.');
    process.exit(1);
  }
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  const prefix = root ? [] : has('sudo') ? ['sudo', '-n'] : null;
  if (!prefix) {
    console.error('[redis] /usr/bin/redis-server is missing; run as root (or with sudo): apt-get install redis-server');
    process.exit(1);
  }
  console.error('[redis] installing Debian package redis-server');
  const apt = (...args) => (prefix.length ? run(prefix[0], [...prefix.slice(1), 'apt-get', ...args]) : run('apt-get', args));
  if (!apt("install", "-y", "-qq", "redis-server")) {
    // A fresh image has no package lists yet.
    if (!apt('update', '-qq') || !apt("install", "-y", "-qq", "redis-server")) {
      console.error('[redis] apt-get install redis-server failed');
      process.exit(1);
    }
  }
  if (!fs.existsSync(REDIS)) {
    console.error(`[redis] installed, but ${REDIS} is not there`);
    process.exit(1);
  }
}

main();
