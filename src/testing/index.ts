/**
 * @fabric-harness/sdk/testing — a scripted, protocol-faithful fake of the Anthropic Messages API (it
 * is not a model: it plays the responses you script), and a real Temporal dev server to run it against.
 * (The repository's own cluster provisioning — the Temporal server on PostgreSQL, MinIO — lives in
 * test/support/provision/ since 0.5.0: it is this project's test harness, not a public API.)
 */
export * from './anthropic/fake-anthropic';
export * from './temporal-cli';
export * from './prose';
export * from './reachable-types';
export * from './gemini/fake-gemini';
