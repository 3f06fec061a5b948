/**
 * The cluster tier (`npm run test:cluster`, not part of `npm test`): tests on a production-like
 * Temporal cluster, the Temporal server on PostgreSQL, that each test file starts itself
 * (src/testing/temporal-server.ts). Same transform and module mapping as the integration project.
 */
const { projects } = require('./jest.config');

const integration = projects.find((p) => p.displayName === 'integration');

module.exports = {
  projects: [
    {
      ...integration,
      displayName: 'cluster',
      testMatch: ['<rootDir>/test/cluster/**/*.test.ts'],
      globalSetup: '<rootDir>/test/cluster/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts', // only its exit watchdog: no dev server here
    },
  ],
  testTimeout: 300000,
};
