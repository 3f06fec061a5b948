/**
 * A production-like Temporal cluster for tests: the Temporal server itself (not the CLI's dev server),
 * all services in one process, on PostgreSQL (see postgres.ts), with its schema applied by Temporal's
 * own SQL tool. The same server and schema as temporal-docker/, built here from the Go module proxy:
 *
 *   go install go.temporal.io/server/cmd/server@v1.29.1 go.temporal.io/server/cmd/tools/sql@v1.29.1
 *
 * into `<projectDir>/.temporal/cluster-bin` (as `temporal-server` and `temporal-sql-tool`), unless
 * TEMPORAL_SERVER_PATH / TEMPORAL_SQL_TOOL_PATH name existing binaries. The schema files come from the
 * server module's source in the Go module cache (`go mod download`).
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { acquireBuildLock, exeName, findOnPath, goInstall, isExecutableFile, waitUntil, watchProcess } from '../../../src/testing/go-build';
import { POSTGRES_USER, logTail, startPostgres, type PostgresServer } from './postgres';
import { findProjectDir, type SearchAttributeTypeName } from '../../../src/testing/temporal-cli';
import { isPortFree } from '../../../src/testing/loopback-ports';
import { FH_SEARCH_ATTRIBUTES } from '../../../src/wire/search-attributes';

/** The server release, the one the pinned CLI (temporal-cli.ts) bundles. */
export const TEMPORAL_SERVER_VERSION = 'v1.29.1';
export const TEMPORAL_SERVER_MODULE = 'go.temporal.io/server';
export const TEMPORAL_SERVER_PACKAGE = `${TEMPORAL_SERVER_MODULE}/cmd/server`;
/** Builds the tool the Makefile calls `temporal-sql-tool` (`go install` names it `sql`). */
export const TEMPORAL_SQL_TOOL_PACKAGE = `${TEMPORAL_SERVER_MODULE}/cmd/tools/sql`;

export type TemporalServerErrorCode =
  | 'TemporalServerPathInvalid'
  | 'TemporalServerBuildFailed'
  /** No Go to build the server, or to find its schema files. */
  | 'TemporalServerGoMissing'
  | 'TemporalSchemaFailed'
  | 'TemporalServerStartFailed'
  | 'TemporalNamespaceSetupFailed';

export class TemporalServerError extends Error {
  readonly code: TemporalServerErrorCode;

  constructor(code: TemporalServerErrorCode, message: string, options?: { cause?: unknown }) {
    super(message);
    this.name = 'TemporalServerError';
    this.code = code;
    if (options && 'cause' in options) (this as { cause?: unknown }).cause = options.cause;
  }
}

export interface TemporalServerBinaries {
  server: string;
  sqlTool: string;
}

export interface ClusterOptions {
  /** Where `.temporal/cluster-bin` lives; the nearest directory upward with a package.json by default. */
  projectDir?: string;
  onProgress?: (line: string) => void;
}

/** Where {@link ensureTemporalServer} installs the binaries. */
export function clusterBinDir(projectDir: string = findProjectDir()): string {
  return path.join(projectDir, '.temporal', 'cluster-bin');
}

function fromEnv(variable: string): string | undefined {
  const value = process.env[variable];
  if (!value) return undefined;
  if (isExecutableFile(path.resolve(value))) return path.resolve(value);
  throw new TemporalServerError('TemporalServerPathInvalid', `${variable} is set to ${value}, which is not an executable file; unset it to let ensureTemporalServer() build one with Go into .temporal/cluster-bin.`);
}

/** The server and SQL tool: TEMPORAL_SERVER_PATH / TEMPORAL_SQL_TOOL_PATH, or `.temporal/cluster-bin`, built when missing. */
export async function ensureTemporalServer(opts: ClusterOptions = {}): Promise<TemporalServerBinaries> {
  const projectDir = opts.projectDir ?? findProjectDir();
  const onProgress = opts.onProgress ?? (() => undefined);
  const binDir = clusterBinDir(projectDir);
  const target = { server: path.join(binDir, exeName('temporal-server')), sqlTool: path.join(binDir, exeName('temporal-sql-tool')) };
  const found = { server: fromEnv('TEMPORAL_SERVER_PATH') ?? target.server, sqlTool: fromEnv('TEMPORAL_SQL_TOOL_PATH') ?? target.sqlTool };
  if (isExecutableFile(found.server) && isExecutableFile(found.sqlTool)) return found;

  const go = requireGo('build the Temporal server');
  const release = await acquireBuildLock(binDir, 'the Temporal server', onProgress, (m) => new TemporalServerError('TemporalServerBuildFailed', m));
  try {
    if (!isExecutableFile(target.server) || !isExecutableFile(target.sqlTool)) {
      await goInstall({
        go,
        spec: [`${TEMPORAL_SERVER_PACKAGE}@${TEMPORAL_SERVER_VERSION}`, `${TEMPORAL_SQL_TOOL_PACKAGE}@${TEMPORAL_SERVER_VERSION}`],
        binDir,
        what: `the Temporal server ${TEMPORAL_SERVER_VERSION} and its SQL tool`,
        flags: ['-ldflags=-s -w'],
        onProgress,
        fail: (detail, cause) => new TemporalServerError('TemporalServerBuildFailed', detail, { cause }),
      });
      // `go install` names a binary after its package directory: server and sql.
      for (const [built, name] of [['server', target.server], ['sql', target.sqlTool]] as const) {
        const file = path.join(binDir, exeName(built));
        if (!isExecutableFile(file)) throw new TemporalServerError('TemporalServerBuildFailed', `go install reported success but ${file} does not exist (GOOS/GOARCH/GOFLAGS in the environment?).`);
        fs.renameSync(file, name);
      }
      onProgress(`Temporal server and temporal-sql-tool installed in ${binDir}`);
    }
  } finally {
    release();
  }
  return { server: fromEnv('TEMPORAL_SERVER_PATH') ?? target.server, sqlTool: fromEnv('TEMPORAL_SQL_TOOL_PATH') ?? target.sqlTool };
}

function requireGo(why: string): string {
  const go = findOnPath('go');
  if (!go) {
    throw new TemporalServerError(
      'TemporalServerGoMissing',
      `Go is not on PATH, and it is needed to ${why}. Install Go >= 1.24 (https://go.dev/dl/), or use the documented Docker deployment in temporal-docker/.`,
    );
  }
  return go;
}

/** `<module source>/schema/postgresql/v12` of the server release, fetched into the Go module cache when missing. */
export function postgresSchemaDir(): string {
  const go = requireGo('find the Temporal SQL schema');
  let dir: string;
  try {
    const out = execFileSync(go, ['mod', 'download', '-json', `${TEMPORAL_SERVER_MODULE}@${TEMPORAL_SERVER_VERSION}`], { encoding: 'utf8', cwd: os.tmpdir() });
    dir = (JSON.parse(out) as { Dir?: string }).Dir ?? '';
  } catch (err) {
    throw new TemporalServerError('TemporalSchemaFailed', `go mod download ${TEMPORAL_SERVER_MODULE}@${TEMPORAL_SERVER_VERSION} failed: ${(err as Error).message}`, { cause: err });
  }
  const schema = path.join(dir, 'schema', 'postgresql', 'v12');
  if (!fs.existsSync(path.join(schema, 'temporal', 'versioned'))) throw new TemporalServerError('TemporalSchemaFailed', `no PostgreSQL schema in ${schema}`);
  return schema;
}

/**
 * Creates the `temporal` and `temporal_visibility` databases (unless they exist) and brings both
 * schemas up to this release's version, as temporal-docker's auto-setup does.
 */
export function applyTemporalSchema(sqlTool: string, pgPort: number, onProgress: (line: string) => void = () => undefined): void {
  const schemaDir = postgresSchemaDir();
  const base = ['--plugin', 'postgres12', '--ep', '127.0.0.1', '-p', String(pgPort), '-u', POSTGRES_USER, '--pw', 'temporal'];
  const run = (args: string[]): { ok: boolean; output: string } => {
    const res = spawnSync(sqlTool, [...base, ...args], { encoding: 'utf8', timeout: 5 * 60_000 });
    return { ok: res.status === 0, output: `${res.stdout}${res.stderr}` };
  };
  for (const [db, dir] of [
    ['temporal', 'temporal'],
    ['temporal_visibility', 'visibility'],
  ] as const) {
    // All three are idempotent (temporal-docker's auto-setup runs them on every start): an existing
    // database is kept, and update-schema applies only the versions it lacks.
    for (const args of [['create-database'], ['setup-schema', '-v', '0.0']]) {
      const res = run(['--db', db, ...args]);
      if (!res.ok) throw new TemporalServerError('TemporalSchemaFailed', `temporal-sql-tool --db ${db} ${args.join(' ')} failed:\n${res.output}`);
    }
    const versioned = path.join(schemaDir, dir, 'versioned');
    const update = run(['--db', db, 'update-schema', '-d', versioned]);
    if (!update.ok) throw new TemporalServerError('TemporalSchemaFailed', `temporal-sql-tool update-schema (${db}, ${versioned}) failed:\n${update.output}`);
    onProgress(`temporal-sql-tool: ${db} schema up to date (${versioned})`);
  }
}

export interface ServicePorts {
  frontend: number;
  frontendHttp: number;
  frontendMembership: number;
  history: number;
  historyMembership: number;
  matching: number;
  matchingMembership: number;
  worker: number;
  workerMembership: number;
}

async function servicePorts(frontend?: number): Promise<ServicePorts> {
  const taken = new Set<number>(frontend ? [frontend] : []);
  const free = async (): Promise<number> => {
    const port = await freeMembershipPort(taken);
    taken.add(port);
    return port;
  };
  return {
    frontend: frontend ?? (await free()),
    frontendHttp: await free(),
    frontendMembership: await free(),
    history: await free(),
    historyMembership: await free(),
    matching: await free(),
    matchingMembership: await free(),
    worker: await free(),
    workerMembership: await free(),
  };
}

/**
 * A free loopback port below 32768. The SQL schema stores membership ports as `smallint`
 * (cluster_membership.rpc_port), so an OS-assigned ephemeral port (32768-60999 on Linux) makes the
 * server die at startup with `value "38929" is out of range for type smallint`.
 */
async function freeMembershipPort(taken: Set<number>): Promise<number> {
  for (let attempt = 0; attempt < 500; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (!taken.has(port) && (await isPortFree(port))) return port;
  }
  throw new TemporalServerError('TemporalServerStartFailed', 'found no free port between 20000 and 32000 on 127.0.0.1');
}

/**
 * The dev server's defaults that matter to us: search attributes visible as soon as they are added
 * (we add FhAgent and start runs right away), and persistence QPS raised to match.
 */
const DYNAMIC_CONFIG = `system.forceSearchAttributesCacheRefreshOnRead:
  - value: true
frontend.persistenceMaxQPS:
  - value: 10000
history.persistenceMaxQPS:
  - value: 45000
frontend.namespaceRPS.visibility:
  - value: 100
frontend.enableUpdateWorkflowExecution:
  - value: true
frontend.enableUpdateWorkflowExecutionAsyncAccepted:
  - value: true
frontend.enableExecuteMultiOperation:
  - value: true
limit.maxIDLength:
  - value: 255
history.hostLevelCacheMaxSize:
  - value: 8192
`;

/** A server config (Temporal's config/development-postgres12.yaml, on our ports) for one process running every service. */
export function serverConfigYaml(p: ServicePorts, pgPort: number, dynamicConfigFile: string, logLevel: string): string {
  const datastore = (db: string, conns: number) => `      sql:
        pluginName: "postgres12"
        databaseName: "${db}"
        connectAddr: "127.0.0.1:${pgPort}"
        connectProtocol: "tcp"
        user: "${POSTGRES_USER}"
        password: "temporal"
        maxConns: ${conns}
        maxIdleConns: ${conns}
        maxConnLifetime: "1h"`;
  const service = (grpc: number, membership: number, http?: number) => `    rpc:
      grpcPort: ${grpc}
      membershipPort: ${membership}
      bindOnLocalHost: true${http ? `\n      httpPort: ${http}` : ''}`;
  return `log:
  stdout: true
  level: ${logLevel}

persistence:
  defaultStore: postgres-default
  visibilityStore: postgres-visibility
  numHistoryShards: 4
  datastores:
    postgres-default:
${datastore('temporal', 20)}
    postgres-visibility:
${datastore('temporal_visibility', 10)}

global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: "127.0.0.1"

services:
  frontend:
${service(p.frontend, p.frontendMembership, p.frontendHttp)}
  history:
${service(p.history, p.historyMembership)}
  matching:
${service(p.matching, p.matchingMembership)}
  worker:
${service(p.worker, p.workerMembership)}

clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: "active"
  currentClusterName: "active"
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: "frontend"
      rpcAddress: "127.0.0.1:${p.frontend}"
      httpAddress: "127.0.0.1:${p.frontendHttp}"

dcRedirectionPolicy:
  policy: "noop"

dynamicConfigClient:
  filepath: "${dynamicConfigFile}"
  pollInterval: "10s"
`;
}

export interface StartTemporalClusterOptions extends ClusterOptions {
  /** Frontend gRPC port on 127.0.0.1; a free one when omitted. */
  port?: number;
  /** Where PostgreSQL's data, the server config and the logs live. A temporary directory (removed by stop()) when omitted. */
  dir?: string;
  namespace?: string;
  /** Registered on the namespace. Default every attribute the SDK uses (FH_SEARCH_ATTRIBUTES, what `fh server` registers). */
  searchAttributes?: Record<string, SearchAttributeTypeName>;
  /** Server log level. Default `warn`. */
  logLevel?: string;
  /** Processes outlive this one (`temporal-cluster.js start`); stop them with {@link stopDetachedCluster}. */
  detached?: boolean;
}

export interface TemporalCluster {
  /** `127.0.0.1:<port>` of the frontend. */
  address: string;
  namespace: string;
  dir: string;
  postgres: PostgresServer;
  /** Pid of the Temporal server process (changes on {@link restartServer}). */
  serverPid(): number;
  serverLog: string;
  /** Stops the Temporal server (SIGTERM; SIGKILL after `graceMs`, default 20 s) and starts it again on the same ports and database. */
  restartServer(opts?: { graceMs?: number }): Promise<void>;
  /** Stops the server, then PostgreSQL; removes a temporary dir. Idempotent. */
  stop(): Promise<void>;
}

const INDEXED_VALUE_TYPES: Record<SearchAttributeTypeName, number> = {
  Text: 1,
  Keyword: 2,
  Int: 3,
  Double: 4,
  Bool: 5,
  Datetime: 6,
  KeywordList: 7,
};

/**
 * PostgreSQL, schema, Temporal server, namespace and search attributes, in that order; resolves when
 * a client can list workflows by the search attributes in the namespace.
 */
export async function startTemporalCluster(opts: StartTemporalClusterOptions = {}): Promise<TemporalCluster> {
  const projectDir = opts.projectDir ?? findProjectDir();
  const onProgress = opts.onProgress ?? (() => undefined);
  const namespace = opts.namespace ?? 'default';
  const searchAttributes: Record<string, SearchAttributeTypeName> = opts.searchAttributes ?? { ...FH_SEARCH_ATTRIBUTES };
  const temporary = !opts.dir;
  const dir = opts.dir ? path.resolve(opts.dir) : fs.mkdtempSync(path.join(os.tmpdir(), 'fh-cluster-'));
  fs.mkdirSync(dir, { recursive: true });
  fs.chmodSync(dir, 0o755); // PostgreSQL, running as another user when we are root, must reach its data dir inside

  const started = Date.now();
  const binaries = await ensureTemporalServer({ projectDir, onProgress });
  const postgres = await startPostgres({ dataDir: path.join(dir, 'pg'), detached: opts.detached, onProgress });
  let server: ServerProcess | undefined;
  try {
    applyTemporalSchema(binaries.sqlTool, postgres.port, onProgress);
    const ports = await servicePorts(opts.port);
    const configDir = path.join(dir, 'config');
    fs.mkdirSync(configDir, { recursive: true });
    const dynamicConfigFile = path.join(configDir, 'dynamicconfig.yaml');
    fs.writeFileSync(dynamicConfigFile, DYNAMIC_CONFIG);
    fs.writeFileSync(path.join(configDir, 'fh.yaml'), serverConfigYaml(ports, postgres.port, dynamicConfigFile, opts.logLevel ?? 'warn'));
    const address = `127.0.0.1:${ports.frontend}`;
    const serverLog = path.join(dir, 'temporal-server.log');
    const launch = async (): Promise<ServerProcess> => {
      const proc = spawnServer(binaries.server, dir, serverLog, opts.detached ?? false);
      await waitForFrontend(address, proc, serverLog);
      return proc;
    };
    server = await launch();
    onProgress(`Temporal server ${TEMPORAL_SERVER_VERSION} answering at ${address} (pid ${server.child.pid})`);
    await setUpNamespace(address, namespace, searchAttributes, onProgress);
    onProgress(`Temporal cluster ready at ${address} (namespace ${namespace}) in ${Math.round((Date.now() - started) / 1000)} s`);

    let stopping: Promise<void> | undefined;
    const cluster: TemporalCluster = {
      address,
      namespace,
      dir,
      postgres,
      serverLog,
      serverPid: () => server!.child.pid!,
      async restartServer({ graceMs } = {}) {
        await server!.stop(graceMs);
        server = await launch();
        await waitForNamespace(address, namespace, searchAttributes);
      },
      stop: () =>
        (stopping ??= (async () => {
          await server?.stop();
          await postgres.stop();
          if (temporary) fs.rmSync(dir, { recursive: true, force: true });
        })()),
    };
    if (opts.detached) {
      fs.writeFileSync(statePath(dir), JSON.stringify({ address, namespace, serverPid: server.child.pid, postgresPid: postgres.pid, postgresPort: postgres.port }, null, 2));
    }
    return cluster;
  } catch (err) {
    await server?.stop();
    await postgres.stop();
    if (temporary) fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

interface ServerProcess {
  child: ChildProcess;
  exited(): string | undefined;
  stop(graceMs?: number): Promise<void>;
}

function spawnServer(server: string, dir: string, logFile: string, detached: boolean): ServerProcess {
  const out = fs.openSync(logFile, 'a');
  const child = spawn(server, ['--root', dir, '--config', 'config', '--env', 'fh', '--allow-no-auth', 'start'], {
    stdio: ['ignore', out, out],
    detached,
  });
  fs.closeSync(out);
  if (detached) child.unref();
  const proc = watchProcess(child);
  return {
    child,
    exited: proc.exited,
    stop: (graceMs = 20_000) => proc.stop('SIGTERM', graceMs),
  };
}

async function connect(address: string): Promise<Connection> {
  // Loaded lazily: `install` never needs the client.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Connection } = require('@temporalio/client') as typeof import('@temporalio/client');
  return Connection.connect({ address, connectTimeout: 2000 });
}

async function waitForFrontend(address: string, proc: ServerProcess, logFile: string): Promise<void> {
  await waitUntil(
    async () => {
      const connection = await connect(address);
      try {
        await connection.workflowService.getSystemInfo({});
        return true;
      } finally {
        await connection.close();
      }
    },
    {
      timeoutMs: 120_000,
      intervalMs: 500,
      aborted: () => (proc.exited() ? `it exited (${proc.exited()})` : undefined),
      fail: (why) => new TemporalServerError('TemporalServerStartFailed', `The Temporal server did not answer at ${address}: ${why}.\nLast lines of ${logFile}:\n${logTail(logFile)}`),
    },
  );
}

/**
 * Registers the namespace (1-day retention) and the search attributes, each unless it exists, and waits until a
 * list query over them succeeds. Works on any server: the cluster tier's, and the dev server a test file wants a
 * namespace of its own on.
 */
export async function setUpNamespace(address: string, namespace: string, searchAttributes: Record<string, SearchAttributeTypeName>, onProgress: (line: string) => void): Promise<void> {
  const connection = await connect(address);
  try {
    try {
      await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
      onProgress(`registered namespace ${namespace}`);
    } catch (err) {
      if ((err as { code?: number }).code !== 6 /* ALREADY_EXISTS */) throw asSetupError(`registering namespace ${namespace}`, err);
    }
    // The frontend learns about a new namespace from its namespace cache, refreshed every few seconds.
    await waitUntil(async () => (await connection.operatorService.listSearchAttributes({ namespace })) !== undefined, {
      timeoutMs: 60_000,
      intervalMs: 500,
      fail: (why) => new TemporalServerError('TemporalNamespaceSetupFailed', `namespace ${namespace} not usable: ${why}`),
    });
    const existing = (await connection.operatorService.listSearchAttributes({ namespace })).customAttributes ?? {};
    const missing = Object.fromEntries(Object.entries(searchAttributes).filter(([name]) => !(name in existing)).map(([name, type]) => [name, INDEXED_VALUE_TYPES[type]]));
    if (Object.keys(missing).length) {
      try {
        await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: missing });
      } catch (err) {
        if ((err as { code?: number }).code !== 6) throw asSetupError(`adding search attributes ${Object.keys(missing).join(', ')}`, err);
      }
      onProgress(`added search attributes ${Object.keys(missing).join(', ')} to ${namespace}`);
    }
  } finally {
    await connection.close();
  }
  await waitForNamespace(address, namespace, searchAttributes);
}

/** A value of each type that a visibility query accepts (`FhFlagged = 'probe'` is rejected: not a Bool). */
const PROBE_VALUES: Record<SearchAttributeTypeName, string> = {
  Text: "'probe'",
  Keyword: "'probe'",
  KeywordList: "'probe'",
  Int: '0',
  Double: '0',
  Bool: 'true',
  Datetime: "'2000-01-01T00:00:00Z'",
};

/** Until a list query over the search attributes succeeds in the namespace: then workers and clients can use it. */
async function waitForNamespace(address: string, namespace: string, attributes: Record<string, SearchAttributeTypeName>): Promise<void> {
  const query = Object.entries(attributes)
    .map(([name, type]) => `${name} = ${PROBE_VALUES[type]}`)
    .join(' AND ');
  let last = '';
  await waitUntil(
    async () => {
      const connection = await connect(address);
      try {
        await connection.workflowService.listWorkflowExecutions({ namespace, pageSize: 1, query });
        return true;
      } catch (err) {
        last = (err as Error).message;
        return false;
      } finally {
        await connection.close();
      }
    },
    { timeoutMs: 60_000, intervalMs: 500, fail: (why) => new TemporalServerError('TemporalNamespaceSetupFailed', `namespace ${namespace} not ready: ${why} (last error: ${last})`) },
  );
}

function asSetupError(what: string, err: unknown): TemporalServerError {
  return new TemporalServerError('TemporalNamespaceSetupFailed', `${what} failed: ${(err as Error).message}`, { cause: err });
}

function statePath(dir: string): string {
  return path.join(dir, 'cluster.json');
}

/** Stops a cluster started with `detached: true` in `dir` (by the pids it recorded). */
export async function stopDetachedCluster(dir: string, onProgress: (line: string) => void = () => undefined): Promise<boolean> {
  const file = statePath(path.resolve(dir));
  if (!fs.existsSync(file)) return false;
  const state = JSON.parse(fs.readFileSync(file, 'utf8')) as { serverPid: number; postgresPid: number };
  for (const [name, pid, signal] of [
    ['Temporal server', state.serverPid, 'SIGTERM'],
    ['PostgreSQL', state.postgresPid, 'SIGINT'],
  ] as const) {
    if (!alive(pid)) continue;
    onProgress(`stopping ${name} (pid ${pid})`);
    process.kill(pid, signal);
    const deadline = Date.now() + 20_000;
    while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    if (alive(pid)) process.kill(pid, 'SIGKILL');
  }
  fs.rmSync(file, { force: true });
  return true;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
