/**
 * A Redis connection for the live path, through the `redis` package (an optional peer, loaded only
 * when a broker is named). Raw commands only, so nothing outside this file names the package's types.
 */
import { ProviderPackageMissingError } from '../../core/errors';

/** How long a connect may take before the broker counts as down. */
const CONNECT_MS = 2_000;

export interface RedisConnection {
  sendCommand(args: string[]): Promise<unknown>;
  /** A second connection for a blocking read (XREAD BLOCK holds its connection while it waits). */
  duplicate(): Promise<RedisConnection>;
  close(): Promise<void>;
}

interface RawClient {
  connect(): Promise<unknown>;
  sendCommand(args: string[]): Promise<unknown>;
  duplicate(): RawClient;
  close?(): Promise<unknown>;
  quit?(): Promise<unknown>;
  destroy?(): void;
  on(event: 'error', fn: (err: unknown) => void): unknown;
}

interface RedisModule {
  createClient(options: { url: string; disableOfflineQueue?: boolean; socket?: { connectTimeout?: number; reconnectStrategy?: (retries: number) => number | false } }): RawClient;
}

/**
 * The `redis` package, or PROVIDER_PACKAGE_MISSING. Called where a broker is named (a worker's publisher,
 * a reader's client), not only at the first connect: a broker down is a fallback, but a broker named
 * without the package to reach it could never work, so it fails at once instead of falling back silently.
 */
export function redisModule(): RedisModule {
  try {
    return require('redis') as RedisModule; // eslint-disable-line @typescript-eslint/no-require-imports
  } catch {
    throw new ProviderPackageMissingError('redis', 'redis', 'The live broker (liveBroker: { url })');
  }
}

export async function loadRedis(url: string): Promise<RedisConnection> {
  const redis = redisModule();
  // Reconnects with a short backoff; errors are the caller's to report (an unhandled 'error' event would crash).
  const wrap = async (raw: RawClient): Promise<RedisConnection> => {
    raw.on('error', () => undefined);
    // A broker that is not there fails the connect within CONNECT_MS (node-redis would retry forever),
    // so the caller falls back instead of waiting on it.
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      await Promise.race([
        raw.connect(),
        new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer from ${url} within ${CONNECT_MS} ms`)), CONNECT_MS))),
      ]);
    } catch (err) {
      raw.destroy?.();
      throw err;
    } finally {
      clearTimeout(timer);
    }
    return {
      sendCommand: (args) => raw.sendCommand(args),
      duplicate: () => wrap(raw.duplicate()),
      // Destroyed, not closed gracefully: what is pending is best effort, and a graceful close waits
      // for a broker that may be gone (a worker's shutdown must not hang on it).
      close: async () => {
        if (raw.destroy) raw.destroy();
        else await (raw.close ?? raw.quit)?.call(raw).catch(() => undefined);
      },
    };
  };
  // No offline queue: while the broker is away a command fails at once rather than piling up in memory.
  return wrap(redis.createClient({ url, disableOfflineQueue: true, socket: { connectTimeout: CONNECT_MS, reconnectStrategy: (retries) => Math.min(retries * 100, 2_000) } }));
}
