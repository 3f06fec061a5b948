/**
 * PostgreSQL for the test Temporal cluster: Debian's packaged server (installed with apt-get when
 * missing and this process may), a data directory made with `initdb`, one server on a loopback port.
 *
 * PostgreSQL refuses to run as root; as root, initdb and the server run as the `postgres` system user
 * (which Debian's package creates), and the data directory is given to that user.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { findOnPath, isExecutableFile, waitUntil, watchProcess } from '../../../src/testing/go-build';
import { getFreePort } from '../../../src/testing/temporal-cli';

export type PostgresErrorCode =
  /** No PostgreSQL binaries and no way to install them. */
  | 'PostgresNotFound'
  /** apt-get install failed. */
  | 'PostgresInstallFailed'
  /** initdb failed. */
  | 'PostgresInitFailed'
  /** The server exited or did not accept connections in time. */
  | 'PostgresStartFailed';

export class PostgresError extends Error {
  readonly code: PostgresErrorCode;

  constructor(code: PostgresErrorCode, message: string) {
    super(message);
    this.name = 'PostgresError';
    this.code = code;
  }
}

/**
 * The directory holding `postgres`, `initdb` and `pg_isready`: `POSTGRES_BIN_DIR`, the newest
 * `/usr/lib/postgresql/<version>/bin` (Debian's layout), or the directory `postgres` on PATH really
 * lives in. Undefined when none has all three.
 */
export function findPostgresBinDir(): string | undefined {
  const complete = (dir: string): boolean => ['postgres', 'initdb', 'pg_isready'].every((b) => isExecutableFile(path.join(dir, b)));
  const fromEnv = process.env.POSTGRES_BIN_DIR;
  if (fromEnv) {
    if (complete(fromEnv)) return path.resolve(fromEnv);
    throw new PostgresError('PostgresNotFound', `POSTGRES_BIN_DIR is set to ${fromEnv}, which lacks postgres, initdb or pg_isready.`);
  }
  const debian = '/usr/lib/postgresql';
  const versions = fs.existsSync(debian)
    ? fs
        .readdirSync(debian)
        .filter((v) => /^\d+$/.test(v))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  for (const v of versions) if (complete(path.join(debian, v, 'bin'))) return path.join(debian, v, 'bin');
  const onPath = findOnPath('postgres');
  if (onPath) {
    const dir = path.dirname(fs.realpathSync(onPath));
    if (complete(dir)) return dir;
  }
  return undefined;
}

/** Finds PostgreSQL, or installs Debian's `postgresql` package with apt-get (as root only). */
export async function ensurePostgres(onProgress: (line: string) => void = () => undefined): Promise<string> {
  const found = findPostgresBinDir();
  if (found) return found;
  const apt = findOnPath('apt-get');
  if (!apt || process.getuid?.() !== 0) {
    throw new PostgresError(
      'PostgresNotFound',
      'PostgreSQL is not installed (looked in POSTGRES_BIN_DIR, /usr/lib/postgresql/*/bin and PATH). Install it ' +
        '(`sudo apt-get install postgresql` on Debian/Ubuntu) or set POSTGRES_BIN_DIR to the directory holding postgres and initdb.',
    );
  }
  onProgress('PostgreSQL is not installed: apt-get install postgresql…');
  for (const args of [['update'], ['install', '-y', '--no-install-recommends', 'postgresql']]) {
    const res = spawnSync(apt, args, { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }, encoding: 'utf8', maxBuffer: 64 << 20 });
    if (res.status !== 0) {
      throw new PostgresError('PostgresInstallFailed', `apt-get ${args.join(' ')} failed (${res.status ?? res.signal}):\n${(res.stderr || res.stdout || '').slice(-3000)}`);
    }
  }
  const installed = findPostgresBinDir();
  if (!installed) throw new PostgresError('PostgresInstallFailed', 'apt-get installed postgresql, but no /usr/lib/postgresql/*/bin was found afterwards.');
  onProgress(`PostgreSQL installed in ${installed}`);
  return installed;
}

/** The uid/gid to run PostgreSQL as: this process's, or the `postgres` user's when this process is root. */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    return { uid, gid };
  } catch {
    throw new PostgresError('PostgresStartFailed', 'PostgreSQL refuses to run as root, and there is no `postgres` user to run it as. Run as another user, or create one.');
  }
}

export interface StartPostgresOptions {
  /** Data directory; made with initdb when empty. A temporary one (removed by stop()) when omitted. */
  dataDir?: string;
  /** Port on 127.0.0.1; a free one when omitted. */
  port?: number;
  /** Start the server in its own process group that outlives this process (for `temporal-cluster.js start`). */
  detached?: boolean;
  onProgress?: (line: string) => void;
}

export interface PostgresServer {
  port: number;
  dataDir: string;
  pid: number;
  /** The superuser, who may log in from loopback without a password (trust). */
  user: string;
  logFile: string;
  /** Fast shutdown (SIGINT), SIGKILL after 15 s; removes a temporary data directory. Idempotent. */
  stop(): Promise<void>;
}

export const POSTGRES_USER = 'temporal';

/** initdb (when needed) and start PostgreSQL on 127.0.0.1; resolves once it accepts connections. */
export async function startPostgres(opts: StartPostgresOptions = {}): Promise<PostgresServer> {
  const onProgress = opts.onProgress ?? (() => undefined);
  const bin = await ensurePostgres(onProgress);
  const owner = runAs();
  const temporary = !opts.dataDir;
  const dataDir = opts.dataDir ? path.resolve(opts.dataDir) : fs.mkdtempSync(path.join(os.tmpdir(), 'fh-postgres-'));
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if (owner) fs.chownSync(dataDir, owner.uid, owner.gid);
  // Logs sit next to the data directory, not in it: initdb wants an empty directory.
  const logFile = `${dataDir}.log`;

  if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) {
    onProgress(`initdb ${dataDir}`);
    // Trust on loopback: a throwaway test database that listens on 127.0.0.1 only.
    const res = spawnSync(path.join(bin, 'initdb'), ['-D', dataDir, '-U', POSTGRES_USER, '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8'], {
      encoding: 'utf8',
      ...owner,
    });
    if (res.status !== 0) throw new PostgresError('PostgresInitFailed', `initdb -D ${dataDir} failed (${res.status ?? res.signal}):\n${res.stderr || res.stdout}`);
  }

  const port = opts.port ?? (await getFreePort());
  const out = fs.openSync(logFile, 'a');
  if (owner) fs.fchownSync(out, owner.uid, owner.gid);
  const child: ChildProcess = spawn(
    path.join(bin, 'postgres'),
    // The socket directory is the data directory: /var/run/postgresql may not exist or not be ours.
    ['-D', dataDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${dataDir}`, '-c', 'max_connections=200'],
    { stdio: ['ignore', out, out], detached: opts.detached ?? false, ...owner },
  );
  fs.closeSync(out);
  if (opts.detached) child.unref();
  const proc = watchProcess(child);

  const stop = async (): Promise<void> => {
    await proc.stop('SIGINT', 15_000);
    if (temporary) {
      fs.rmSync(dataDir, { recursive: true, force: true });
      fs.rmSync(logFile, { force: true });
    }
  };

  const started = Date.now();
  try {
    await waitUntil(
      async () => spawnSync(path.join(bin, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port), '-q'], { timeout: 5000 }).status === 0,
      {
        timeoutMs: 60_000,
        intervalMs: 250,
        aborted: () => (proc.exited() ? `it exited (${proc.exited()})` : undefined),
        fail: (why) => new PostgresError('PostgresStartFailed', `PostgreSQL (${bin}/postgres) did not accept connections on 127.0.0.1:${port}: ${why}.\n${logTail(logFile)}`),
      },
    );
  } catch (err) {
    await stop();
    throw err;
  }
  onProgress(`PostgreSQL ready on 127.0.0.1:${port} (data ${dataDir}) in ${Date.now() - started} ms`);
  let stopping: Promise<void> | undefined;
  return { port, dataDir, pid: child.pid!, user: POSTGRES_USER, logFile, stop: () => (stopping ??= stop()) };
}

/** The last lines of a log file, for error messages. */
export function logTail(file: string, lines = 30): string {
  try {
    // Server logs carry long stack traces: a line is cut where it stops saying what happened.
    return fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .slice(-lines)
      .map((l) => (l.length > 600 ? `${l.slice(0, 600)}…` : l))
      .join('\n');
  } catch {
    return `(no log at ${file})`;
  }
}
