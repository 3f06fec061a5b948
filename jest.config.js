/**
 * Two projects: `unit` (pure code, the fake Anthropic server) and `integration` (a real Temporal dev
 * server, started once for the whole run by the global setup). Tests are transformed by @swc/jest,
 * because TypeScript 7's native compiler has no transform API.
 */
const swc = ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }];
const moduleNameMapper = {
  '^@fabric-harness/sdk$': '<rootDir>/src/index.ts',
  '^@fabric-harness/sdk/(.*)$': '<rootDir>/src/$1',
};
const common = { transform: { '^.+\\.ts$': swc }, moduleNameMapper, testEnvironment: 'node' };

module.exports = {
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      setupFiles: ['<rootDir>/test/support/quiet-runtime.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
  testTimeout: 120000,
  // Run the files in a worker process that jest replaces once its heap passes this size after a file. In band, the
  // heap of one process grew to ~4 GB over the run (every file's module registry, the SDK's native clients), and
  // the late files spent most of their time in the garbage collector: payloads.test.ts took 21 s alone and 171-206 s
  // at the end of a full run. Setting a limit also makes jest use a worker on a 2-core machine, where it would
  // otherwise run everything in its own process.
  workerIdleMemoryLimit: '1GB',
};
