#!/usr/bin/env node
/**
 * Installs Debian's bubblewrap, which confines the bash tool (src/activities/tools/sandbox/sandbox.ts), when it is not
 * there yet. A no-op (and silent) when /usr/bin/bwrap exists; otherwise `apt-get install bubblewrap`
 * (through sudo when not root). On a machine without apt-get it says what to install and fails.
 *
 *   node scripts/bubblewrap.js
 */
'use strict';

const { ensureDebianPackage } = require('./debian-package');

ensureDebianPackage({
  pkg: 'bubblewrap',
  file: '/usr/bin/bwrap',
  label: 'bubblewrap',
  offLinux: "bubblewrap does not exist here; bash tools need toolSandbox: { wrapper: 'none' } (see docs/security.md).",
});
