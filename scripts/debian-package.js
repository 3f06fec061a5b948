/**
 * Installs one Debian package when the file it provides is missing: a no-op (and silent) when the file
 * exists; otherwise `apt-get install` (through sudo when not root), with an `apt-get update` first when the
 * package lists are missing (a fresh image). Off Linux it prints the hint and returns; without apt-get it
 * says what to install and exits 1. Used by scripts/bubblewrap.js and scripts/redis.js.
 */
'use strict';

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');

function run(cmd, args) {
  const res = spawnSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  if (res.error) throw res.error;
  return res.status === 0;
}

function has(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

/** `{ pkg, file, label, offLinux }`: the package, the file it provides, the log label, what to say off Linux. */
function ensureDebianPackage({ pkg, file, label, offLinux }) {
  if (fs.existsSync(file)) return;
  if (process.platform !== 'linux') {
    console.error(`[${label}] not on Linux (${process.platform}): ${offLinux}`);
    return;
  }
  if (!has('apt-get')) {
    console.error(`[${label}] ${file} is missing and apt-get is not available: install ${pkg} with your package manager.`);
    process.exit(1);
  }
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  const prefix = root ? [] : has('sudo') ? ['sudo', '-n'] : null;
  if (!prefix) {
    console.error(`[${label}] ${file} is missing; run as root (or with sudo): apt-get install ${pkg}`);
    process.exit(1);
  }
  console.error(`[${label}] installing Debian package ${pkg}`);
  const apt = (...args) => (prefix.length ? run(prefix[0], [...prefix.slice(1), 'apt-get', ...args]) : run('apt-get', args));
  if (!apt('install', '-y', '-qq', pkg)) {
    // A fresh image has no package lists yet.
    if (!apt('update', '-qq') || !apt('install', '-y', '-qq', pkg)) {
      console.error(`[${label}] apt-get install ${pkg} failed`);
      process.exit(1);
    }
  }
  if (!fs.existsSync(file)) {
    console.error(`[${label}] installed, but ${file} is not there`);
    process.exit(1);
  }
}

module.exports = { ensureDebianPackage };
