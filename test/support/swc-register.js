// Lets a plain `node` child process (a worker the tests kill) load TypeScript, as jest does through @swc/jest.
const { transformSync } = require('@swc/core');
const fs = require('node:fs');
const Module = require('node:module');
const path = require('node:path');

const root = path.resolve(__dirname, '../..');
const originalResolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  // The same mapping as jest's moduleNameMapper: the package name means this checkout's src/.
  if (request === '@fabric-harness/sdk') request = path.join(root, 'src/index.ts');
  else if (request.startsWith('@fabric-harness/sdk/')) request = path.join(root, 'src', request.slice('@fabric-harness/sdk/'.length));
  return originalResolve.call(this, request, ...rest);
};
Module._extensions['.ts'] = function (module, filename) {
  const { code } = transformSync(fs.readFileSync(filename, 'utf8'), {
    filename,
    jsc: { target: 'es2022', parser: { syntax: 'typescript' } },
    module: { type: 'commonjs' },
    sourceMaps: 'inline',
  });
  module._compile(code, filename);
};
