/**
 * Where a worker connects, resolved the way `fh` and the Temporal CLI resolve it (src/client/connection.ts):
 * explicit settings over TEMPORAL_* environment variables over a profile of the Temporal config file
 * (TEMPORAL_CONFIG_FILE / TEMPORAL_PROFILE, TOML, read by @temporalio/envconfig) over localhost:7233 and
 * the `default` namespace. TLS, mTLS and API keys (Temporal Cloud) come through the same settings.
 */
import * as fs from 'node:fs';
import { NativeConnection, type NativeConnectionOptions } from '@temporalio/worker';
import {
  connectionOptions,
  ConnectionSettingsError,
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
  if (!isResolved(settings)) requireNamedConfigFile(settings.configFile ? ['configFile', settings.configFile] : ['TEMPORAL_CONFIG_FILE', env.TEMPORAL_CONFIG_FILE]);
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

/**
 * envconfig treats a config file it cannot find as empty; for a worker that means a typo in the path
 * connects to localhost. A file named explicitly must exist.
 */
function requireNamedConfigFile([what, file]: [string, string | undefined]): void {
  if (!file) return;
  if (!fs.existsSync(file)) throw new ConnectionSettingsError(`${what}: the Temporal config file ${file} does not exist`);
}

function isResolved(s: ConnectionFlags | ConnectionSettings): s is ConnectionSettings {
  return 'sources' in s && typeof (s as ConnectionSettings).address === 'string';
}
