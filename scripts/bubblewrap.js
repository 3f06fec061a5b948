#!/usr/bin/env node
/**
 * Installs Debian's bubblewrap, which confines the bash tool (src/activities/tools/sandbox/sandbox.ts), when it is not
 * there yet. A no-op (and silent) when /usr/bin/bwrap exists; otherwise `apt-get install bubblewrap`
 * (through sudo when not root). On a machine without apt-get it says what to install and fails.
 *
 *   node scripts/bubblewrap.js
 */
'use strict';

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');

const BWRAP = '/usr/bin/bwrap';

function run(cmd, args) {
  const res = spawnSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  if (res.error) throw res.error;
  return res.status === 0;
}

function has(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

function main() {
  if (fs.existsSync(BWRAP)) return;
  if (process.platform !== 'linux') {
    console.error(`[bubblewrap] not on Linux (${process.platform}): bubblewrap does not exist here; bash tools need toolSandbox: { wrapper: 'none' } (see docs/security.md).`);
    return;
  }
  if (!has('apt-get')) {
    console.error('[bubblewrap] /usr/bin/bwrap is missing and apt-get is not available: install bubblewrap with your package manager (e.g. dnf install bubblewrap).');
    process.exit(1);
  }
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  const prefix = root ? [] : has('sudo') ? ['sudo', '-n'] : null;
  if (!prefix) {
    console.error('[bubblewrap] /usr/bin/bwrap is missing; run as root (or with sudo): apt-get install bubblewrap');
    process.exit(1);
  }
  console.error('[bubblewrap] installing Debian package bubblewrap');
  const apt = (...args) => (prefix.length ? run(prefix[0], [...prefix.slice(1), 'apt-get', ...args]) : run('apt-get', args));
  if (!apt('install', '-y', '-qq', 'bubblewrap')) {
    // A fresh image has no package lists yet.
    if (!apt('update', '-qq') || !apt('install', '-y', '-qq', 'bubblewrap')) {
      console.error('[bubblewrap] apt-get install bubblewrap failed');
      process.exit(1);
    }
  }
  if (!fs.existsSync(BWRAP)) {
    console.error(`[bubblewrap] installed, but ${BWRAP} is not there`);
    process.exit(1);
  }
}

main();
