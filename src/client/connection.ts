/**
 * Connection settings for clients and workers, following Temporal's own conventions so one setup
 * serves the `temporal` CLI, the SDKs and `fh`:
 *
 *   TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS,
 *   TEMPORAL_TLS_CLIENT_CERT_PATH / _DATA, TEMPORAL_TLS_CLIENT_KEY_PATH / _DATA,
 *   TEMPORAL_TLS_SERVER_CA_CERT_PATH / _DATA, TEMPORAL_TLS_SERVER_NAME, TEMPORAL_GRPC_META_<NAME>,
 *   and, when `@temporalio/envconfig` is installed, TEMPORAL_CONFIG_FILE / TEMPORAL_PROFILE (the TOML
 *   profiles of `temporal config`).
 *
 * Explicit settings (flags) override the environment, which overrides the config file; the defaults
 * are localhost:7233 and the `default` namespace.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import { Client, Connection, type ClientPlugin } from '@temporalio/client';
import type { TranscriptStore } from '../activities/stores/transcript-store';
import { FabricHarnessClientPlugin } from './plugin';
import { guardClose } from './connection-close';

export const DEFAULT_ADDRESS = 'localhost:7233';
export const DEFAULT_NAMESPACE = 'default';

/** TLS settings as the Temporal SDKs take them (same shape as @temporalio/common's TLSConfig). */
export interface TlsSettings {
  serverNameOverride?: string;
  serverRootCACertificate?: Uint8Array;
  clientCertPair?: { crt: Uint8Array; key: Uint8Array };
}

/** What a caller (a CLI's flags) may set explicitly; every field is optional and wins over the environment. */
export interface ConnectionFlags {
  address?: string;
  namespace?: string;
  apiKey?: string;
  /** Force TLS on (true) or off (false). */
  tls?: boolean;
  tlsCertPath?: string;
  tlsKeyPath?: string;
  tlsCaPath?: string;
  tlsServerName?: string;
  /** A profile of the Temporal config file (needs @temporalio/envconfig). */
  profile?: string;
  /** The Temporal config file (TOML) instead of TEMPORAL_CONFIG_FILE / the default location. */
  configFile?: string;
}

export type SettingSource = 'flag' | 'environment' | 'config file' | 'default';

export interface ConnectionSettings {
  address: string;
  namespace: string;
  apiKey?: string;
  /** undefined/false: plaintext; true: TLS with system roots; an object: TLS with these settings. */
  tls?: TlsSettings | boolean;
  /** gRPC metadata sent with every request. */
  metadata?: Record<string, string>;
  /** Where the address and namespace came from, for error messages. */
  sources: { address: SettingSource; namespace: SettingSource };
  /** Whether @temporalio/envconfig resolved the profile (else the environment was read directly). */
  resolvedWith: 'envconfig' | 'environment';
}

/** A setting that cannot be used (a missing file, a cert without its key, a bad profile). */
export class ConnectionSettingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConnectionSettingsError';
  }
}

/** The server did not answer at the address (refused, unknown host, or no answer before the deadline). */
export class ServerUnreachableError extends Error {
  constructor(
    readonly address: string,
    readonly detail: string,
    readonly source: SettingSource = 'default',
  ) {
    super(
      `cannot reach the Temporal server at ${address}${source === 'default' ? ' (the default address)' : ` (from ${source === 'flag' ? '--address' : source === 'environment' ? 'TEMPORAL_ADDRESS' : 'the config file'})`}: ${detail}`,
    );
    this.name = 'ServerUnreachableError';
  }
}

type Env = Record<string, string | undefined>;

/** The part of @temporalio/envconfig used here (kept structural: the package is optional). */
export interface EnvconfigModule {
  loadClientConnectConfig(options?: {
    profile?: string;
    configSource?: { path: string } | { data: string | Uint8Array };
    disableFile?: boolean;
    disableEnv?: boolean;
    overrideEnvVars?: Record<string, string>;
  }): {
    namespace?: string;
    connectionOptions: { address?: string; apiKey?: string; tls?: TlsSettings | boolean; metadata?: Record<string, string> };
  };
}

let envconfigCache: EnvconfigModule | null | undefined;

/** @temporalio/envconfig when it is installed (it is optional), else null. */
export function loadEnvconfig(): EnvconfigModule | null {
  if (envconfigCache !== undefined) return envconfigCache;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    envconfigCache = require('@temporalio/envconfig') as EnvconfigModule;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw err;
    envconfigCache = null;
  }
  return envconfigCache;
}

/**
 * Resolves connection settings: flags over environment over config-file profile over defaults.
 * `envconfig` is for tests (null: act as if the package were not installed).
 */
export function resolveConnectionSettings(
  flags: ConnectionFlags = {},
  env: Env = process.env,
  envconfig: EnvconfigModule | null = loadEnvconfig(),
): ConnectionSettings {
  const base = envconfig ? fromEnvconfig(envconfig, flags, env) : fromEnvironment(flags, env);

  const address = flags.address ?? base.address;
  const namespace = flags.namespace ?? base.namespace;
  const apiKey = flags.apiKey ?? base.apiKey;
  let tls = base.tls;

  // Flags refine (or replace) the TLS settings from the environment.
  const flagTls: TlsSettings = {};
  if (flags.tlsCertPath || flags.tlsKeyPath) {
    if (!flags.tlsCertPath || !flags.tlsKeyPath) {
      throw new ConnectionSettingsError('mTLS needs both --tls-cert-path and --tls-key-path (the client certificate and its private key)');
    }
    flagTls.clientCertPair = { crt: readFile(flags.tlsCertPath, '--tls-cert-path'), key: readFile(flags.tlsKeyPath, '--tls-key-path') };
  }
  if (flags.tlsCaPath) flagTls.serverRootCACertificate = readFile(flags.tlsCaPath, '--tls-ca-path');
  if (flags.tlsServerName) flagTls.serverNameOverride = flags.tlsServerName;
  if (Object.keys(flagTls).length > 0) tls = { ...(typeof tls === 'object' ? tls : {}), ...flagTls };
  if (flags.tls === false) tls = false;
  else if (flags.tls === true && !tls) tls = true;
  // An API key implies TLS (Temporal Cloud), unless TLS was turned off explicitly.
  if (apiKey && tls === undefined) tls = true;

  return {
    address: address ?? DEFAULT_ADDRESS,
    namespace: namespace ?? DEFAULT_NAMESPACE,
    ...(apiKey ? { apiKey } : {}),
    ...(tls !== undefined ? { tls } : {}),
    ...(base.metadata && Object.keys(base.metadata).length > 0 ? { metadata: base.metadata } : {}),
    sources: {
      address: flags.address ? 'flag' : (base.addressSource ?? 'default'),
      namespace: flags.namespace ? 'flag' : (base.namespaceSource ?? 'default'),
    },
    resolvedWith: envconfig ? 'envconfig' : 'environment',
  };
}

interface BaseSettings {
  address?: string;
  namespace?: string;
  apiKey?: string;
  tls?: TlsSettings | boolean;
  metadata?: Record<string, string>;
  addressSource?: SettingSource;
  namespaceSource?: SettingSource;
}

function fromEnvconfig(envconfig: EnvconfigModule, flags: ConnectionFlags, env: Env): BaseSettings {
  const envVars = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
  let loaded: ReturnType<EnvconfigModule['loadClientConnectConfig']>;
  try {
    loaded = envconfig.loadClientConnectConfig({
      profile: flags.profile,
      configSource: flags.configFile ? { path: flags.configFile } : undefined,
      overrideEnvVars: envVars,
    });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new ConnectionSettingsError(`cannot load the Temporal client configuration: ${message}`);
  }
  const opts = loaded.connectionOptions;
  const fromFile = (v: unknown, envName: string): SettingSource | undefined =>
    v === undefined ? undefined : env[envName] !== undefined ? 'environment' : 'config file';
  return {
    address: opts.address,
    namespace: loaded.namespace,
    apiKey: opts.apiKey,
    tls: opts.tls,
    metadata: opts.metadata,
    addressSource: fromFile(opts.address, 'TEMPORAL_ADDRESS'),
    namespaceSource: fromFile(loaded.namespace, 'TEMPORAL_NAMESPACE'),
  };
}

/** The same environment variables envconfig reads, without its TOML config file support. */
function fromEnvironment(flags: ConnectionFlags, env: Env): BaseSettings {
  if (flags.profile || flags.configFile || env.TEMPORAL_CONFIG_FILE || env.TEMPORAL_PROFILE) {
    const what = flags.profile || env.TEMPORAL_PROFILE ? 'a config profile' : 'a config file';
    throw new ConnectionSettingsError(
      `${what} was requested but @temporalio/envconfig is not installed; install it (npm install @temporalio/envconfig) or use flags / TEMPORAL_* variables instead`,
    );
  }
  const bool = (name: string): boolean | undefined => {
    const v = env[name];
    if (v === undefined || v === '') return undefined;
    if (/^(1|true|yes|on)$/i.test(v)) return true;
    if (/^(0|false|no|off)$/i.test(v)) return false;
    throw new ConnectionSettingsError(`${name} must be true or false, got '${v}'`);
  };
  const data = (pathVar: string, dataVar: string): Uint8Array | undefined => {
    if (env[pathVar] && env[dataVar]) throw new ConnectionSettingsError(`set ${pathVar} or ${dataVar}, not both`);
    if (env[pathVar]) return readFile(env[pathVar]!, pathVar);
    if (env[dataVar]) return Buffer.from(env[dataVar]!, 'utf8');
    return undefined;
  };
  const crt = data('TEMPORAL_TLS_CLIENT_CERT_PATH', 'TEMPORAL_TLS_CLIENT_CERT_DATA');
  const key = data('TEMPORAL_TLS_CLIENT_KEY_PATH', 'TEMPORAL_TLS_CLIENT_KEY_DATA');
  const ca = data('TEMPORAL_TLS_SERVER_CA_CERT_PATH', 'TEMPORAL_TLS_SERVER_CA_CERT_DATA');
  const serverName = env.TEMPORAL_TLS_SERVER_NAME || undefined;
  const tlsOn = bool('TEMPORAL_TLS');

  let tls: TlsSettings | boolean | undefined;
  if (crt || key || ca || serverName) {
    tls = {
      ...(serverName ? { serverNameOverride: serverName } : {}),
      ...(ca ? { serverRootCACertificate: ca } : {}),
      // envconfig, too, uses the pair only when both halves are there.
      ...(crt && key ? { clientCertPair: { crt, key } } : {}),
    };
  }
  if (tlsOn === false) tls = false;
  else if (tlsOn === true && !tls) tls = true;

  const metadata: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    const m = /^TEMPORAL_GRPC_META_(.+)$/.exec(k);
    if (m && v !== undefined) metadata[m[1]!.toLowerCase().replace(/_/g, '-')] = v;
  }
  return {
    address: env.TEMPORAL_ADDRESS || undefined,
    namespace: env.TEMPORAL_NAMESPACE || undefined,
    apiKey: env.TEMPORAL_API_KEY || undefined,
    tls,
    metadata,
    addressSource: env.TEMPORAL_ADDRESS ? 'environment' : undefined,
    namespaceSource: env.TEMPORAL_NAMESPACE ? 'environment' : undefined,
  };
}

function readFile(file: string, what: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (err) {
    throw new ConnectionSettingsError(`cannot read ${what} ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
}

/** Options for the SDK connections (client `Connection` and worker `NativeConnection` take the same fields). */
export function connectionOptions(settings: ConnectionSettings): {
  address: string;
  tls?: TlsSettings | boolean;
  apiKey?: string;
  metadata?: Record<string, string>;
} {
  return {
    address: settings.address,
    ...(settings.tls !== undefined ? { tls: settings.tls } : {}),
    ...(settings.apiKey ? { apiKey: settings.apiKey } : {}),
    ...(settings.metadata ? { metadata: settings.metadata } : {}),
  };
}

export interface ConnectClientOptions {
  /** Resolves offloaded payloads; must be the store the workers use (default: FH_STORE_DIR / OS temp dir). */
  store?: TranscriptStore;
  plugins?: ClientPlugin[];
  /** How long to wait for the server to answer (default 10 s). */
  connectTimeoutMs?: number;
}

/**
 * A Client with the harness plugin (external storage for large payloads) installed. Accepts resolved
 * settings or flags (resolved against the environment). Throws ServerUnreachableError when the server
 * does not answer; close it with `client.connection.close()`.
 */
export async function connectClient(
  settings: ConnectionSettings | ConnectionFlags = {},
  options: ConnectClientOptions = {},
): Promise<Client> {
  const resolved = isResolved(settings) ? settings : resolveConnectionSettings(settings);
  await probeServer(resolved);
  let connection: Connection;
  try {
    connection = await Connection.connect({
      ...connectionOptions(resolved),
      connectTimeout: options.connectTimeoutMs ?? 10_000,
    });
  } catch (err) {
    throw new ServerUnreachableError(resolved.address, err instanceof Error ? err.message : String(err), resolved.sources.address);
  }
  guardClose(connection); // closing it is safe for calls made in the same tick (client/connection-close)
  return new Client({
    connection,
    namespace: resolved.namespace,
    plugins: [new FabricHarnessClientPlugin({ store: options.store }), ...(options.plugins ?? [])],
  });
}

function isResolved(s: ConnectionSettings | ConnectionFlags): s is ConnectionSettings {
  return 'sources' in s && typeof (s as ConnectionSettings).address === 'string';
}

/**
 * A quick TCP check so a refused connection or an unknown host fails at once rather than at the gRPC
 * deadline. Skipped behind a proxy (the direct route may legitimately fail); a slow answer is left to gRPC.
 */
export async function probeServer(settings: Pick<ConnectionSettings, 'address' | 'sources'>, timeoutMs = 2_000): Promise<void> {
  if (process.env.grpc_proxy || process.env.https_proxy || process.env.HTTPS_PROXY || process.env.http_proxy || process.env.HTTP_PROXY) return;
  const target = splitHostPort(settings.address);
  if (!target) return;
  const failure = await new Promise<string | undefined>((resolve) => {
    const socket = net.connect({ host: target.host, port: target.port });
    const done = (detail: string | undefined) => {
      socket.destroy();
      resolve(detail);
    };
    socket.setTimeout(timeoutMs, () => done(undefined));
    socket.once('connect', () => done(undefined));
    socket.once('error', (err: NodeJS.ErrnoException) => {
      const definitive = ['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN'];
      done(definitive.includes(err.code ?? '') ? describeSocketError(err) : undefined);
    });
  });
  if (failure) throw new ServerUnreachableError(settings.address, failure, settings.sources.address);
}

function describeSocketError(err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case 'ECONNREFUSED':
      return 'connection refused (nothing listens there)';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'unknown host';
    default:
      return err.message;
  }
}

function splitHostPort(address: string): { host: string; port: number } | undefined {
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(address) ?? /^([^:]+):(\d+)$/.exec(address);
  if (m) return { host: m[1]!, port: Number(m[2]) };
  if (/^[^:/]+$/.test(address)) return { host: address, port: 7233 };
  return undefined;
}
