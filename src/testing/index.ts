/**
 * @fabric-harness/sdk/testing — scripted, protocol-faithful fakes of the model APIs, one folder per
 * protocol (the Anthropic Messages API, Google's Gemini API; they are not models: they play the
 * responses you script), and a real Temporal dev server to run them against.
 * (The repository's own cluster provisioning — the Temporal server on PostgreSQL, MinIO — lives in
 * test/support/provision/ since 0.5.0: it is this project's test harness, not a public API.)
 */
export * from './anthropic/fake-anthropic';
export * from './temporal-cli';
export * from './prose';
export * from './reachable-types';
export * from './gemini/fake-gemini';
