/**
 * @fabric-harness/sdk/testing — a scripted, protocol-faithful fake of the Anthropic Messages API (it
 * is not a model: it plays the responses you script), of Claude on Bedrock and on Vertex (the same
 * scripts, behind each platform's transport), and a real Temporal dev server to run it against.
 * (The repository's own cluster provisioning — the Temporal server on PostgreSQL, MinIO — lives in
 * test/support/provision/ since 0.5.0: it is this project's test harness, not a public API.)
 */
export * from './anthropic/fake-anthropic';
export * from './bedrock';
export * from './vertex';
export * from './temporal-cli';
export * from './prose';
export * from './reachable-types';
