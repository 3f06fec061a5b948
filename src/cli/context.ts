/**
 * What the commands share: connecting (with errors that say what to do), the store, the Temporal
 * runtime's log level, and turning SDK errors into one-line `fh` errors with exit codes.
 */
import * as path from 'node:path';
import type { Client } from '@temporalio/client';
import type { LiveBrokerClient } from '../client/stream/broker-transport';
import {
  connectClient,
  ConnectionSettingsError,
  resolveConnectionSettings,
  ServerUnreachableError,
  type ConnectionSettings,
} from '../client/connection';
import { HistoryFormatError } from '../audit/history-file';
import { FileTranscriptStore, defaultStoreDir } from '../activities/stores/transcript-store';
import { redisModule } from '../activities/stream/redis-client';
import type { Options, Parsed } from './args';
import { connectionFlags, str } from './args';
import { FabricError } from '../core/errors';
import { CliError, EXIT, failure, fabricErrorExit, GRPC, grpcCode, notFound, oneLine, serverReason, usage } from './errors';

export interface Io {
  out(text: string): void;
  err(text: string): void;
}

export const stdio: Io = {
  out: (t) => void process.stdout.write(t.endsWith('\n') ? t : `${t}\n`),
  err: (t) => void process.stderr.write(t.endsWith('\n') ? t : `${t}\n`),
};

export interface Command {
  name: string;
  /** One line for `fh --help`. */
  summary: string;
  /** Usage lines, without the leading `fh `. */
  usage: string[];
  description?: string;
  options: Options;
  /** Whether the connection options apply (and are listed in its help). */
  connects: boolean;
  examples: string[];
  /** `fh <name> <sub> …`: each subcommand declares its own options, usage and help (e.g. `fh session new`). */
  subcommands?: Record<string, Command>;
  run(p: Parsed, io: Io): Promise<number>;
}

/** The live path's broker (Redis Streams), for the commands that run a worker or read streams: docs/streaming.md. */
export const LIVE_BROKER_OPTION: Options = {
  'live-broker': { type: 'string', value: '<redis-url>', help: 'Redis for the live path (redis://host:port): workers add live events, readers block on it', env: 'FH_LIVE_BROKER' },
};

/**
 * A reader's client on the broker at `url` (from {@link liveBrokerUrl}), or undefined without one. It connects
 * at the first read; the module is loaded only when a broker is named, so other commands start without it.
 */
export function liveBrokerClient(url: string | undefined): LiveBrokerClient | undefined {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return url ? (require('../client/stream/broker-transport') as typeof import('../client/stream/broker-transport')).liveBroker({ url }) : undefined;
}

/**
 * Settles once the broker has answered or failed its first connect, having said so on stderr if it failed.
 * A reader falls back to asking Temporal while its broker is down, by design; without this line a mistyped
 * URL or a stopped Redis would only make the command slower, with nothing to say why.
 */
export async function warnIfBrokerDown(broker: LiveBrokerClient | undefined, io: Io): Promise<void> {
  await broker?.connection().then(
    () => undefined,
    (err: unknown) => {
      if ((err as { code?: unknown }).code === 'BROKER_CLOSED') return; // closed by the command itself on its way out
      io.err(`fh: warning: the live broker at ${broker.settings.url} did not answer (${err instanceof Error ? err.message : String(err)}); live text comes from Temporal until it does`);
    },
  );
}

/** The --live-broker URL (or FH_LIVE_BROKER), if any. */
export function liveBrokerUrl(p: Parsed): string | undefined {
  const url = str(p, 'live-broker') ?? (process.env.FH_LIVE_BROKER || undefined);
  if (url === undefined) return undefined;
  if (!/^rediss?:\/\/./.test(url)) throw usage(`--live-broker must be a redis:// or rediss:// URL, got '${url}'`);
  try {
    redisModule();
  } catch {
    throw usage('--live-broker needs the redis package, an optional dependency: install it with `npm install redis` where fh runs');
  }
  return url;
}

export const STORE_OPTION: Options = {
  'store-dir': {
    type: 'string',
    value: '<dir>',
    help: 'transcript store of the workers: where offloaded large payloads live',
    env: 'FH_STORE_DIR',
    default: '~/.local/share/fabric-harness/store',
  },
};

export function storeFrom(p: Parsed): FileTranscriptStore {
  const dir = str(p, 'store-dir');
  return new FileTranscriptStore(dir ? path.resolve(dir) : defaultStoreDir());
}

export function settingsFrom(p: Parsed): ConnectionSettings {
  try {
    return resolveConnectionSettings(connectionFlags(p));
  } catch (err) {
    if (err instanceof ConnectionSettingsError) throw usage(err.message);
    throw err;
  }
}

export interface Connected {
  client: Client;
  settings: ConnectionSettings;
  close(): Promise<void>;
}

/** Connects with the harness plugin; a server that does not answer is exit 4 with what to do. */
export async function connect(p: Parsed): Promise<Connected> {
  const settings = settingsFrom(p);
  let client: Client;
  try {
    client = await connectClient(settings, { store: storeFrom(p), connectTimeoutMs: 10_000 });
  } catch (err) {
    throw asCliError(err, { settings });
  }
  // Fail now, with a clear message, when the namespace does not exist (every later call would).
  try {
    await client.workflowService.describeNamespace({ namespace: settings.namespace });
  } catch (err) {
    await client.connection.close().catch(() => undefined);
    if (grpcCode(err) === GRPC.NOT_FOUND) {
      throw notFound(`namespace '${settings.namespace}' does not exist on ${settings.address}; pick one with --namespace / TEMPORAL_NAMESPACE`);
    }
    // Permission to describe namespaces is not universal (API keys scoped to a namespace): go on.
    if (grpcCode(err) !== GRPC.PERMISSION_DENIED) throw asCliError(err, { settings });
  }
  return { client, settings, close: () => client.connection.close() };
}

export interface ErrorContext {
  settings?: ConnectionSettings;
  workflowId?: string;
}

/** Maps any error to a CliError (exit code + one line saying what to do). */
export function asCliError(err: unknown, ctx: ErrorContext = {}): CliError {
  if (err instanceof CliError) return err;
  const e = err as Error & { code?: unknown; name?: string };
  const where = ctx.settings ? ` in namespace '${ctx.settings.namespace}' at ${ctx.settings.address}` : '';
  if (err instanceof ServerUnreachableError) {
    return new CliError(
      EXIT.UNREACHABLE,
      `${err.message}; start a local server with \`fh server\`, or point --address / TEMPORAL_ADDRESS at yours`,
    );
  }
  if (err instanceof ConnectionSettingsError) return usage(err.message);
  // Typed SDK errors (INVALID_STATUS, SESSION_NOT_FOUND, …): their code picks the exit status and ends the line.
  if (err instanceof FabricError) {
    const { exitCode, hint } = fabricErrorExit(err.code);
    return new CliError(exitCode, `${oneLine(err.message).replace(/\.$/, '')} [${err.code}]${hint ? `; ${hint}` : ''}`);
  }
  if (err instanceof HistoryFormatError) {
    return usage(`${err.message}; export one with \`fh history export <workflow-id> <file>\` (or \`temporal workflow show -w <id> --output json\`)`);
  }
  if (e?.name === 'WorkflowNotFoundError' || (grpcCode(err) === GRPC.NOT_FOUND && ctx.workflowId)) {
    const id = ctx.workflowId ?? (err as { workflowId?: string }).workflowId ?? '?';
    return notFound(`no workflow '${id}'${where}; list runs with \`fh list\``);
  }
  if (e?.name === 'NamespaceNotFoundError') {
    return notFound(`namespace '${ctx.settings?.namespace ?? '?'}' does not exist${ctx.settings ? ` on ${ctx.settings.address}` : ''}; pick one with --namespace / TEMPORAL_NAMESPACE`);
  }
  const code = grpcCode(err);
  if (code === GRPC.UNAVAILABLE) {
    return new CliError(
      EXIT.UNREACHABLE,
      `the Temporal server${ctx.settings ? ` at ${ctx.settings.address}` : ''} is unavailable (${oneLine(e.message)}); check that it is running, or start one with \`fh server\``,
    );
  }
  if (code === GRPC.UNAUTHENTICATED || code === GRPC.PERMISSION_DENIED) {
    return failure(`the server refused the request (${oneLine(e.message)}); check --api-key / TEMPORAL_API_KEY and the TLS settings`);
  }
  if ((e as NodeJS.ErrnoException)?.code === 'ENOENT') return notFound(oneLine(e.message));
  const reason = serverReason(err);
  return failure(`${oneLine(e?.message ?? String(err))}${reason ? `: ${oneLine(reason)}` : ''}`);
}

let runtimeInstalled = false;

/**
 * Installs the Temporal runtime with quiet logging (the worker's and core's INFO lines drown what
 * `fh` prints). Call before creating any worker; `level` from --log-level.
 */
export function installRuntime(level: 'TRACE' | 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' = 'WARN'): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Runtime, DefaultLogger, makeTelemetryFilterString } = require('@temporalio/worker') as typeof import('@temporalio/worker');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { oneLine } = require('../worker/runtime-logging') as typeof import('../worker/runtime-logging');
  try {
    Runtime.install({
      logger: new DefaultLogger(level, oneLine), // one line per entry, as createWorker's
      telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: level, other: level }) } },
    });
  } catch {
    // already installed (a library user's own runtime): keep theirs
  }
}

export function logLevel(p: Parsed, def: 'WARN' | 'ERROR' = 'WARN'): 'TRACE' | 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' {
  const v = (str(p, 'log-level') ?? def).toUpperCase();
  if (!['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'].includes(v)) throw usage(`--log-level must be one of trace, debug, info, warn, error; got '${str(p, 'log-level')}'`);
  return v as 'WARN';
}

export function printJson(io: Io, value: unknown): void {
  io.out(JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? v.toString() : v), 2));
}
