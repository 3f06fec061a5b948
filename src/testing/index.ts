/**
 * @fabric-harness/sdk/testing — a scripted, protocol-faithful fake of the Anthropic Messages API (it
 * is not a model: it plays the responses you script), and helpers that provision a real Temporal dev
 * server, and MinIO (an S3-compatible server) for the S3 store.
 */
export * from './fake-anthropic';
export * from './temporal-cli';
export * from './prose';
export * from './minio';
