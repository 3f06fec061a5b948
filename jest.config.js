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
};
