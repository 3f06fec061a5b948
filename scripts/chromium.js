#!/usr/bin/env node
/**
 * Debian's Chromium for the board's browser tests (driven by playwright-core; no browser is downloaded).
 *
 *   node scripts/chromium.js install   nothing when /usr/bin/chromium exists; else apt-get install chromium
 *
 * Idempotent and quiet when present. Needs root or passwordless sudo to install; says so otherwise.
 */
'use strict';

const fs = require('node:fs');
const { spawnSync } = require('node:child_process');

const CHROMIUM = '/usr/bin/chromium';

function run(cmd, args) {
  const r = spawnSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}`);
}

function install() {
  if (fs.existsSync(CHROMIUM)) return;
  if (!fs.existsSync('/usr/bin/apt-get')) {
    console.error(`[chromium] ${CHROMIUM} is missing and this is not a Debian/Ubuntu machine: install Chromium so that ${CHROMIUM} exists`);
    process.exit(1);
  }
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  const sudo = root ? [] : ['sudo', '-n'];
  const apt = (args) => (sudo.length ? run(sudo[0], [...sudo.slice(1), 'apt-get', ...args]) : run('apt-get', args));
  console.error('[chromium] installing Debian chromium (apt-get) for the board browser tests');
  try {
    apt(['update', '-qq']);
    apt(['install', '-y', '-qq', '--no-install-recommends', 'chromium']);
  } catch (err) {
    console.error(`[chromium] could not install: ${err.message} (run as root or with passwordless sudo, or: apt-get install chromium)`);
    process.exit(1);
  }
  if (!fs.existsSync(CHROMIUM)) {
    console.error(`[chromium] apt-get finished but ${CHROMIUM} is still missing`);
    process.exit(1);
  }
}

const [cmd] = process.argv.slice(2);
if (cmd === 'install') install();
else {
  console.error('usage: node scripts/chromium.js install');
  process.exit(2);
}
