#!/usr/bin/env node
/**
 * ripgrep for the prompt enhancer and its tests (plain Node, no build needed).
 *
 *   node scripts/ripgrep.js install   quiet when `rg` is on PATH; else installs Debian's `ripgrep` package
 *                                     (apt-get, as root or through sudo -n) and says what it did
 *
 * The enhancer itself works without ripgrep (it attaches no files then); the tests check both cases.
 */
'use strict';

const { execFileSync, spawnSync } = require('node:child_process');

const has = (cmd, args = ['--version']) => spawnSync(cmd, args, { stdio: 'ignore' }).status === 0;

function install() {
  if (has('rg')) return 0;
  if (!has('apt-get', ['--version'])) {
    console.error('[ripgrep] rg is not on PATH and this is not a Debian-like system: install ripgrep (https://github.com/BurntSushi/ripgrep) yourself');
    return 1;
  }
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  const sudo = root ? [] : ['sudo', '-n'];
  if (!root && !has('sudo', ['-n', 'true'])) {
    console.error('[ripgrep] rg is missing; run `sudo apt-get install -y ripgrep` (no password-less sudo here)');
    return 1;
  }
  console.error('[ripgrep] installing the Debian package ripgrep');
  const run = (args) => execFileSync(sudo[0] ?? args[0], sudo.length ? [...sudo.slice(1), ...args] : args.slice(1), { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  run(['apt-get', 'update', '-qq']);
  run(['apt-get', 'install', '-y', '-qq', 'ripgrep']);
  if (!has('rg')) {
    console.error('[ripgrep] apt-get finished but rg is still not on PATH');
    return 1;
  }
  return 0;
}

const command = process.argv[2];
if (command !== 'install') {
  console.error('usage: node scripts/ripgrep.js install');
  process.exit(2);
}
process.exit(install());
