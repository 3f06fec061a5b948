/**
 * @fabric-harness/sdk/testing — a scripted, protocol-faithful fake of the Anthropic Messages API (it
 * is not a model: it plays the responses you script), and helpers that provision a real Temporal dev
 * server, a production-like cluster (the Temporal server on PostgreSQL), and MinIO (an S3-compatible
 * server) for the S3 store.
 */
export * from './fake-anthropic';
export * from './temporal-cli';
export * from './prose';
export * from './minio';
export { findPostgresBinDir, ensurePostgres, startPostgres, PostgresError, type PostgresServer, type StartPostgresOptions } from './postgres';
export * from './temporal-server';
export * from './reachable-types';
