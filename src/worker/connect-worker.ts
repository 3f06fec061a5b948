/**
 * Where a worker connects, resolved the way `fh` and the Temporal CLI resolve it (src/client/connection.ts):
 * explicit settings over TEMPORAL_* environment variables over a profile of the Temporal config file
 * (TEMPORAL_CONFIG_FILE / TEMPORAL_PROFILE, TOML, read by @temporalio/envconfig) over localhost:7233 and
 * the `default` namespace. TLS, mTLS and API keys (Temporal Cloud) come through the same settings.
 */
import { NativeConnection, type NativeConnectionOptions } from '@temporalio/worker';
import {
  connectionOptions,
  probeServer,
  resolveConnectionSettings,
  ServerUnreachableError,
  type ConnectionFlags,
  type ConnectionSettings,
} from '../client/connection';

/** Shaped like @temporalio/envconfig's `loadClientConnectConfig()` result, with the resolved settings. */
export interface WorkerConnectConfig {
  connectionOptions: NativeConnectionOptions;
  namespace: string;
  settings: ConnectionSettings;
}

/** The NativeConnection options and namespace for these settings (flags over environment over config file). */
export function workerConnectionOptions(settings: ConnectionFlags | ConnectionSettings = {}, env: NodeJS.ProcessEnv = process.env): WorkerConnectConfig {
  const resolved = isResolved(settings) ? settings : resolveConnectionSettings(settings, env);
  return { connectionOptions: connectionOptions(resolved) as NativeConnectionOptions, namespace: resolved.namespace, settings: resolved };
}

export interface WorkerConnection {
  connection: NativeConnection;
  namespace: string;
  settings: ConnectionSettings;
}

/**
 * Connects a worker: a server that does not answer fails at once with ServerUnreachableError (naming the
 * address and where it came from) rather than after the gRPC deadline. Close it with `connection.close()`.
 */
export async function connectWorker(settings: ConnectionFlags | ConnectionSettings = {}, env: NodeJS.ProcessEnv = process.env): Promise<WorkerConnection> {
  const config = workerConnectionOptions(settings, env);
  await probeServer(config.settings);
  try {
    const connection = await NativeConnection.connect(config.connectionOptions);
    return { connection, namespace: config.namespace, settings: config.settings };
  } catch (err) {
    throw new ServerUnreachableError(config.settings.address, err instanceof Error ? err.message : String(err), config.settings.sources.address);
  }
}

function isResolved(s: ConnectionFlags | ConnectionSettings): s is ConnectionSettings {
  return 'sources' in s && typeof (s as ConnectionSettings).address === 'string';
}
