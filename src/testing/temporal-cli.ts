/**
 * Provision the Temporal CLI and run its dev server (`temporal server start-dev`) from the project's own files.
 *
 * Resolution order for the CLI binary:
 *   1. `TEMPORAL_CLI_PATH` (must point at an executable, otherwise this is an error),
 *   2. `temporal` on `PATH`,
 *   3. `<projectDir>/.temporal/bin/temporal` (where {@link ensureTemporalCli} builds it),
 *   4. when Go is on `PATH`: build it with `go install` into `<projectDir>/.temporal/bin`,
 *   5. otherwise `undefined`: let `@temporalio/testing` download the CLI (needs internet access).
 *
 * The dev server is started through `TestWorkflowEnvironment.createLocal`, which waits until the frontend answers.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { acquireBuildLock, findOnPath, goInstall, isExecutableFile } from './go-build';
import { FH_SEARCH_ATTRIBUTES } from '../wire/search-attributes';
import { DEV_SERVER_START_BOUND_MS, startOnPorts } from './dev-server-attempts';
import { getFreePort, isPortFree } from './loopback-ports';

export { getFreePort } from './loopback-ports';

/**
 * The CLI release built by {@link ensureTemporalCli}. Pinned to v1.5.1 on purpose: later tags declare a `replace`
 * directive in their go.mod (`replace github.com/temporalio/cli/cliext => ./cliext`), and `go install module@version`
 * refuses modules whose go.mod contains replace directives. v1.5.1 bundles Temporal Server 1.29.1 and UI 2.42.1.
 */
export const TEMPORAL_CLI_VERSION = 'v1.5.1';
/** The Go package path of the CLI's main package. */
export const TEMPORAL_CLI_PACKAGE = 'github.com/temporalio/cli/cmd/temporal';

export type TemporalCliErrorCode =
  /** `TEMPORAL_CLI_PATH` is set but does not name an executable file. */
  | 'TemporalCliPathInvalid'
  /** `go install` of the CLI failed (or its output is missing). */
  | 'TemporalCliBuildFailed'
  /** The port requested for the dev server (or its UI) is already taken. */
  | 'TemporalDevServerPortInUse'
  /** The dev server process did not start or did not become ready. */
  | 'TemporalDevServerStartFailed'
  /** An option of `startDevServer` is not valid (the message names it); nothing was started. */
  | 'TemporalDevServerOptionInvalid';

/** Error raised while finding, building or starting the Temporal CLI; `code` says which step failed. */
export class TemporalCliError extends Error {
  readonly code: TemporalCliErrorCode;

  constructor(code: TemporalCliErrorCode, message: string, options?: { cause?: unknown }) {
    super(message);
    this.name = 'TemporalCliError';
    this.code = code;
    if (options && 'cause' in options) (this as { cause?: unknown }).cause = options.cause;
  }
}

export interface FindTemporalCliOptions {
  /** Where `.temporal/bin` lives. Defaults to the nearest directory upward from `process.cwd()` with a package.json. */
  projectDir?: string;
}

export interface EnsureTemporalCliOptions extends FindTemporalCliOptions {
  /** Receives human-readable progress lines (the build takes a few minutes the first time). */
  onProgress?: (line: string) => void;
}

export type SearchAttributeTypeName = 'Keyword' | 'Text' | 'Int' | 'Double' | 'Bool' | 'Datetime' | 'KeywordList';

export interface StartDevServerOptions extends EnsureTemporalCliOptions {
  /** Serve the Web UI. Default false. */
  ui?: boolean;
  /** UI port; a free loopback port when omitted (and `ui` is true). */
  uiPort?: number;
  /** Frontend gRPC port; a free loopback port when omitted. */
  port?: number;
  /** SQLite file to persist state in; in-memory when omitted. Relative paths resolve against `process.cwd()`. */
  dbFilename?: string;
  /** Namespace created at startup. Default `default`. */
  namespace?: string;
  /**
   * Custom search attributes registered at startup, by name, besides the harness's own (`FH_SEARCH_ATTRIBUTES`:
   * sessions are started with them, and a namespace without them refuses the start).
   */
  searchAttributes?: Record<string, SearchAttributeTypeName>;
  /** Server log level (`debug`, `info`, `warn`, `error`, `never`). Default `warn`. */
  logLevel?: string;
  /**
   * Dynamic config values set at startup (`--dynamic-config-value KEY=VALUE`, each value JSON-encoded), e.g.
   * `{ 'limit.maxIDLength': 200 }`. They go over {@link DEV_SERVER_DYNAMIC_CONFIG}, key by key.
   */
  dynamicConfig?: Record<string, string | number | boolean>;
}

export interface DevServer {
  /** `host:port` of the frontend gRPC service, e.g. `127.0.0.1:7233`. */
  address: string;
  namespace: string;
  /** Set when the UI is enabled, e.g. `http://127.0.0.1:8233`. */
  uiUrl?: string;
  /** Path of the CLI binary that runs the server, or `'downloaded'` when @temporalio/testing fetched it. */
  executable: string | 'downloaded';
  /** The dynamic config it started with: `dynamicConfig` over {@link DEV_SERVER_DYNAMIC_CONFIG}. */
  dynamicConfig: Readonly<Record<string, string | number | boolean>>;
  /** The underlying environment (connections, client) from @temporalio/testing. */
  env: TestWorkflowEnvironment;
  /** Close the environment's connections and stop the server. Idempotent. */
  stop(): Promise<void>;
}

const EXE_NAME = process.platform === 'win32' ? 'temporal.exe' : 'temporal';

/**
 * The nearest directory upward from `from` (default `process.cwd()`) that has a package.json. Outside
 * any package (e.g. `fh server` run from a scratch directory) a per-user directory, so the CLI is
 * built once per user rather than once per directory it was started from.
 */
export function findProjectDir(from: string = process.cwd()): string {
  let dir = path.resolve(from);
  for (;;) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) return path.join(os.homedir(), '.fabric-harness');
    dir = parent;
  }
}

/** Where {@link ensureTemporalCli} installs the CLI for a project. */
export function localTemporalCliPath(projectDir: string = findProjectDir()): string {
  return path.join(projectDir, '.temporal', 'bin', EXE_NAME);
}

/**
 * Find an existing Temporal CLI: `TEMPORAL_CLI_PATH`, then `temporal` on `PATH`, then
 * `<projectDir>/.temporal/bin/temporal`. Returns undefined when none exists.
 * Throws {@link TemporalCliError} `TemporalCliPathInvalid` when `TEMPORAL_CLI_PATH` is set to something unusable.
 */
export function findTemporalCli(opts: FindTemporalCliOptions = {}): string | undefined {
  const fromEnv = process.env.TEMPORAL_CLI_PATH;
  if (fromEnv) {
    const resolved = path.resolve(fromEnv);
    if (isExecutableFile(resolved)) return resolved;
    throw new TemporalCliError(
      'TemporalCliPathInvalid',
      `TEMPORAL_CLI_PATH is set to ${fromEnv}, which is not an executable file. Point it at a Temporal CLI binary ` +
        `(https://docs.temporal.io/cli), or unset it to use \`temporal\` on PATH, or to let \`fh server\` build one with Go into .temporal/bin.`,
    );
  }
  const onPath = findOnPath('temporal');
  if (onPath) return onPath;
  const local = localTemporalCliPath(opts.projectDir ?? findProjectDir());
  if (isExecutableFile(local)) return local;
  return undefined;
}

/**
 * Find the Temporal CLI, or build it with Go into `<projectDir>/.temporal/bin` when Go is on PATH.
 * Resolves to the binary's path, or to `undefined` when there is no CLI and no Go: callers then let
 * `@temporalio/testing` download the CLI (which needs internet access to temporal.download).
 */
export async function ensureTemporalCli(opts: EnsureTemporalCliOptions = {}): Promise<string | undefined> {
  const projectDir = opts.projectDir ?? findProjectDir();
  const onProgress = opts.onProgress ?? (() => undefined);
  const found = findTemporalCli({ projectDir });
  if (found) return found;

  const go = findOnPath('go');
  if (!go) {
    onProgress(
      'No Temporal CLI found (TEMPORAL_CLI_PATH, PATH, .temporal/bin) and Go is not on PATH: ' +
        '@temporalio/testing will download the CLI when the dev server starts (needs internet access).',
    );
    return undefined;
  }

  const target = localTemporalCliPath(projectDir);
  const binDir = path.dirname(target);
  fs.mkdirSync(binDir, { recursive: true });
  const buildFailed = (message: string, cause?: unknown) => new TemporalCliError('TemporalCliBuildFailed', message, cause === undefined ? undefined : { cause });
  const release = await acquireBuildLock(binDir, 'the Temporal CLI', onProgress, buildFailed);
  try {
    // Another process may have finished the build while we waited for the lock.
    if (isExecutableFile(target)) return target;
    await goInstall({
      go,
      binDir,
      spec: `${TEMPORAL_CLI_PACKAGE}@${TEMPORAL_CLI_VERSION}`,
      // Stamp the version `temporal --version` prints (a plain go install reports 0.0.0-DEV); -s -w drop the
      // symbol and DWARF tables, which only serve debuggers, from a ~250 MB binary.
      flags: [`-ldflags=-s -w -X=github.com/temporalio/cli/temporalcli.Version=${TEMPORAL_CLI_VERSION.replace(/^v/, '')}`],
      what: `the Temporal CLI ${TEMPORAL_CLI_VERSION}`,
      onProgress,
      fail: (detail, cause) =>
        buildFailed(`${detail} Or install the Temporal CLI yourself (https://docs.temporal.io/cli) and set TEMPORAL_CLI_PATH to it.`, cause),
    });
  } finally {
    release();
  }
  if (!isExecutableFile(target)) {
    throw new TemporalCliError(
      'TemporalCliBuildFailed',
      `go install reported success but ${target} does not exist. Check GOFLAGS/GOOS/GOARCH in your environment ` +
        `(cross-compiled binaries go elsewhere), or install the Temporal CLI yourself and set TEMPORAL_CLI_PATH.`,
    );
  }
  onProgress(`Temporal CLI ${TEMPORAL_CLI_VERSION} installed at ${target}`);
  return target;
}

async function assertPortFree(port: number, what: string): Promise<void> {
  if (!(await isPortFree(port))) {
    throw new TemporalCliError(
      'TemporalDevServerPortInUse',
      `Port ${port} (${what}) on 127.0.0.1 is already in use, maybe by another Temporal server. ` +
        `Stop that process, connect to it instead (TEMPORAL_ADDRESS=127.0.0.1:${port}), or choose another port.`,
    );
  }
}

/**
 * The dynamic config every dev server started here has unless `dynamicConfig` sets the key otherwise.
 *
 * The server deletes a closed run only once the run's close is acknowledged, and by default it acknowledges
 * every 30 s: deleting a session (`SessionHandle.delete`, `fh session delete`, which wait until the server has
 * deleted every run) took about 34 s a closed run. At 1 s it takes about 4. An idle dev server used 0.35 s of CPU
 * a minute with it, against 0.31 s without.
 */
export const DEV_SERVER_DYNAMIC_CONFIG: Readonly<Record<string, string | number | boolean>> = Object.freeze({
  'history.transferProcessorUpdateAckInterval': '1s',
});

const DYNAMIC_CONFIG_KEY = /^[A-Za-z][A-Za-z0-9_.-]*$/;

/**
 * What is wrong with a dynamic config entry the CLI would misread (undefined: nothing). A key with `=` in it
 * split the CLI's `KEY=VALUE` elsewhere, and the server then failed to start 5 s later with no word of why.
 */
export function dynamicConfigProblem(key: string, value: unknown): string | undefined {
  if (!DYNAMIC_CONFIG_KEY.test(key)) return "is not a dynamic config key (a letter, then letters, digits, '.', '_' or '-')";
  const ok = typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
  return ok ? undefined : `must be a string, a finite number or a boolean, got ${String(value)}`;
}

/**
 * The CLI's `--dynamic-config-value KEY=VALUE` arguments for these values (each JSON-encoded). An entry the
 * CLI would misread is refused here, before anything starts.
 */
function dynamicConfigArgs(values: Readonly<Record<string, string | number | boolean>>): string[] {
  const args: string[] = [];
  for (const [key, value] of Object.entries(values)) {
    const problem = dynamicConfigProblem(key, value);
    if (problem) throw new TemporalCliError('TemporalDevServerOptionInvalid', `startDevServer: dynamicConfig[${JSON.stringify(key)}] ${problem}`);
    args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  }
  return args;
}

/**
 * Start a Temporal dev server on 127.0.0.1 and wait until it is ready. Uses the CLI found or built by
 * {@link ensureTemporalCli}, or lets @temporalio/testing download one when neither a CLI nor Go is available.
 */
export async function startDevServer(
  opts: StartDevServerOptions = {},
  /**
   * How a free port is chosen where `port` or `uiPort` is not given ({@link getFreePort}). A start whose chosen
   * frontend port did not answer is tried again on newly chosen ports, up to 3 starts in all; the repository's
   * tests hand a taken port through this to see it.
   */
  pickPort: () => Promise<number> = getFreePort,
): Promise<DevServer> {
  const projectDir = opts.projectDir ?? findProjectDir();
  const onProgress = opts.onProgress ?? (() => undefined);
  const dynamicConfig = Object.freeze({ ...DEV_SERVER_DYNAMIC_CONFIG, ...opts.dynamicConfig });
  const dynamicConfigFlags = dynamicConfigArgs(dynamicConfig);
  const executablePath = await ensureTemporalCli({ projectDir, onProgress });

  const namespace = opts.namespace ?? 'default';
  const ui = opts.ui ?? false;
  if (opts.port !== undefined) await assertPortFree(opts.port, 'Temporal frontend');
  if (ui && opts.uiPort !== undefined) await assertPortFree(opts.uiPort, 'Temporal UI');
  let dbFilename: string | undefined;
  if (opts.dbFilename) {
    dbFilename = path.resolve(opts.dbFilename);
    fs.mkdirSync(path.dirname(dbFilename), { recursive: true });
  }
  const extraArgs: string[] = [];
  // The harness's own always: a session started on this server needs them (it was the first thing a
  // user of startDevServer without `fh server` met: SearchAttributesMissingError at the first session).
  for (const [name, type] of Object.entries({ ...FH_SEARCH_ATTRIBUTES, ...opts.searchAttributes })) {
    extraArgs.push('--search-attribute', `${name}=${type}`);
  }
  extraArgs.push(...dynamicConfigFlags);

  // Loaded lazily (a plain require, whatever the module setting): @temporalio/testing pulls in the native worker
  // runtime, which `install` and `findTemporalCli` do not need.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { TestWorkflowEnvironment } = require('@temporalio/testing') as typeof import('@temporalio/testing');
  const started = Date.now();
  const attempt = await startOnPorts({
    port: opts.port,
    uiPort: opts.uiPort,
    ui,
    pickPort,
    onRetry: (failed) =>
      onProgress(`The dev server did not answer on 127.0.0.1:${failed.port} (another process may have taken the port after it was chosen); starting it on other ports`),
    // A start that first downloads the CLI takes as long as the download: no bound there.
    boundMs: executablePath ? DEV_SERVER_START_BOUND_MS : Infinity,
    abandon: (late: TestWorkflowEnvironment) => late.teardown(),
    start: ({ port, uiPort }) =>
      TestWorkflowEnvironment.createLocal({
        server: {
          executable: executablePath
            ? { type: 'existing-path', path: executablePath }
            : { type: 'cached-download' },
          ip: '127.0.0.1',
          port,
          ui,
          uiPort,
          dbFilename,
          namespace,
          // @temporalio/testing passes these as --log-format/--log-level itself; repeating them in extraArgs would
          // make the CLI reject the duplicate flags.
          log: { format: 'pretty', level: opts.logLevel ?? 'warn' },
          extraArgs,
        },
      }),
  });
  if (!attempt.ok) {
    const { error: err, ports: { port }, attempts } = attempt;
    const detail = err instanceof Error ? err.message : String(err);
    const tries = attempts > 1 ? ` (the last of ${attempts} starts, each on other ports)` : '';
    const next = executablePath
      ? `run \`${executablePath} server start-dev --ip 127.0.0.1 --port ${port}\` by hand to see its output` +
        `${dbFilename ? `; move ${dbFilename} away if it is corrupt` : ''}; or set TEMPORAL_CLI_PATH to another CLI.`
      : `no local Temporal CLI, so @temporalio/testing tried to download one. Without internet access, install the ` +
        `Temporal CLI (https://docs.temporal.io/cli) and put it on PATH or in TEMPORAL_CLI_PATH, or put Go >= 1.25 on ` +
        `PATH and run \`npx fh server\` again: it builds the CLI into .temporal/bin (minutes, once).`;
    throw new TemporalCliError(
      'TemporalDevServerStartFailed',
      `The Temporal dev server (${executablePath ?? 'downloaded CLI'}) did not start on 127.0.0.1:${port}${tries}: ${detail}\n` +
        `What to do: ${next}`,
      { cause: err },
    );
  }
  const env = attempt.value;
  const { uiPort } = attempt.ports;
  const address = env.address;
  const uiUrl = uiPort !== undefined ? `http://127.0.0.1:${uiPort}` : undefined;
  onProgress(
    `Temporal dev server ready at ${address} (namespace ${namespace}${uiUrl ? `, UI ${uiUrl}` : ''}) ` +
      `in ${Date.now() - started} ms`,
  );

  let stopping: Promise<void> | undefined;
  return {
    address,
    namespace,
    uiUrl,
    executable: executablePath ?? 'downloaded',
    dynamicConfig,
    env,
    stop(): Promise<void> {
      return (stopping ??= env.teardown());
    },
  };
}
