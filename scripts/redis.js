#!/usr/bin/env node
/**
 * Installs Debian's redis-server, the live-path broker the tests start (src/activities/stream/redis-broker.ts),
 * when it is not there yet. A no-op (and silent) when /usr/bin/redis-server exists; otherwise
 * `apt-get install redis-server` (through sudo when not root). The tests start their own server on a free
 * port (test/support/redis.ts); nothing here starts one.
 *
 *   node scripts/redis.js
 */
'use strict';

const { ensureDebianPackage } = require('./debian-package');

ensureDebianPackage({
  pkg: 'redis-server',
  file: '/usr/bin/redis-server',
  label: 'redis',
  offLinux: 'the broker tests need a redis-server on PATH (e.g. brew install redis).',
});
