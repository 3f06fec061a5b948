/**
 * Provision MinIO (an S3-compatible server) and run it on loopback, for tests of the S3 store.
 *
 * Resolution order for the `minio` binary:
 *   1. `MINIO_PATH` (must point at an executable, otherwise this is an error),
 *   2. `minio` on `PATH`,
 *   3. `<projectDir>/.minio/bin/minio` (where {@link ensureMinio} builds it),
 *   4. when Go is on `PATH`: build it with `go install github.com/minio/minio@latest` into `<projectDir>/.minio/bin`,
 *   5. otherwise an error saying how to get one (MinIO publishes no npm-downloadable binary).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { acquireBuildLock, exeName, findOnPath, goInstall, isExecutableFile, waitUntil, watchProcess } from '../../../src/testing/go-build';
import { findProjectDir, getFreePort } from '../../../src/testing/temporal-cli';

/** The Go package built by {@link ensureMinio}. `latest`: MinIO tags releases by date and ships no go.mod replace directives. */
export const MINIO_PACKAGE = 'github.com/minio/minio';
export const MINIO_VERSION = 'latest';

export type MinioErrorCode =
  /** `MINIO_PATH` is set but does not name an executable file. */
  | 'MinioPathInvalid'
  /** No binary and no Go to build one. */
  | 'MinioNotFound'
  /** `go install` failed (or its output is missing). */
  | 'MinioBuildFailed'
  /** The server exited or did not answer /minio/health/ready in time. */
  | 'MinioStartFailed';

export class MinioError extends Error {
  readonly code: MinioErrorCode;

  constructor(code: MinioErrorCode, message: string, options?: { cause?: unknown }) {
    super(message);
    this.name = 'MinioError';
    this.code = code;
    if (options && 'cause' in options) (this as { cause?: unknown }).cause = options.cause;
  }
}

export interface EnsureMinioOptions {
  /** Where `.minio/bin` lives. Defaults to the nearest directory upward from `process.cwd()` with a package.json. */
  projectDir?: string;
  /** Receives progress lines (the build takes about three minutes the first time). */
  onProgress?: (line: string) => void;
}

export interface StartMinioOptions extends EnsureMinioOptions {
  /** Directory for the objects. A new temporary directory (removed by `stop()`) when omitted. */
  dataDir?: string;
  /** S3 API port on 127.0.0.1; a free port when omitted. */
  port?: number;
  /** How long to wait for /minio/health/ready. Default 60 s. */
  readyTimeoutMs?: number;
}

export interface MinioServer {
  /** `http://127.0.0.1:<port>`: the S3 endpoint (path-style addressing). */
  endpoint: string;
  /** The generated root user, valid for this server only. */
  accessKeyId: string;
  secretAccessKey: string;
  /** MinIO accepts any region name; clients need one to sign requests. */
  region: string;
  dataDir: string;
  executable: string;
  /** SIGTERM (SIGKILL after 10 s), then removes the data directory if this call made it. Idempotent. */
  stop(): Promise<void>;
}

/** Where {@link ensureMinio} installs MinIO for a project. */
export function localMinioPath(projectDir: string = findProjectDir()): string {
  return path.join(projectDir, '.minio', 'bin', exeName('minio'));
}

/** `MINIO_PATH`, `minio` on PATH, or `<projectDir>/.minio/bin/minio`; undefined when none exists. */
export function findMinio(opts: { projectDir?: string } = {}): string | undefined {
  const fromEnv = process.env.MINIO_PATH;
  if (fromEnv) {
    const resolved = path.resolve(fromEnv);
    if (isExecutableFile(resolved)) return resolved;
    throw new MinioError(
      'MinioPathInvalid',
      `MINIO_PATH is set to ${fromEnv}, which is not an executable file. Point it at a minio server binary, or unset it to use ` +
        '`minio` on PATH, or put Go on PATH and the SDK builds one into .minio/bin.',
    );
  }
  return findOnPath('minio') ?? (isExecutableFile(localMinioPath(opts.projectDir)) ? localMinioPath(opts.projectDir) : undefined);
}

/** Finds MinIO, or builds it with Go into `<projectDir>/.minio/bin`; resolves to the binary's path. */
export async function ensureMinio(opts: EnsureMinioOptions = {}): Promise<string> {
  const projectDir = opts.projectDir ?? findProjectDir();
  const onProgress = opts.onProgress ?? (() => undefined);
  const found = findMinio({ projectDir });
  if (found) return found;
  const go = findOnPath('go');
  if (!go) {
    throw new MinioError(
      'MinioNotFound',
      'No minio binary (MINIO_PATH, PATH, .minio/bin) and Go is not on PATH to build one. Put Go >= 1.24 on PATH ' +
        '(this is then built into .minio/bin, once), or download a MinIO server binary and set MINIO_PATH to it.',
    );
  }
  const target = localMinioPath(projectDir);
  const binDir = path.dirname(target);
  const release = await acquireBuildLock(binDir, 'MinIO', onProgress, (m) => new MinioError('MinioBuildFailed', m));
  try {
    if (isExecutableFile(target)) return target; // another process finished the build while we waited
    await goInstall({
      go,
      spec: `${MINIO_PACKAGE}@${MINIO_VERSION}`,
      binDir,
      what: 'MinIO',
      flags: ['-ldflags=-s -w'],
      onProgress,
      fail: (detail, cause) => new MinioError('MinioBuildFailed', `${detail}\nOr download a MinIO server binary and set MINIO_PATH to it.`, { cause }),
    });
  } finally {
    release();
  }
  if (!isExecutableFile(target)) {
    throw new MinioError('MinioBuildFailed', `go install reported success but ${target} does not exist (GOOS/GOARCH/GOFLAGS in the environment send binaries elsewhere).`);
  }
  onProgress(`MinIO installed at ${target}`);
  return target;
}

/**
 * Starts MinIO on 127.0.0.1 with fresh root credentials and waits until /minio/health/ready answers.
 * The web console is off: tests only need the S3 API.
 */
export async function startMinio(opts: StartMinioOptions = {}): Promise<MinioServer> {
  const onProgress = opts.onProgress ?? (() => undefined);
  const executable = await ensureMinio(opts);
  const ownDataDir = !opts.dataDir;
  const dataDir = opts.dataDir ? path.resolve(opts.dataDir) : fs.mkdtempSync(path.join(os.tmpdir(), 'fh-minio-'));
  fs.mkdirSync(dataDir, { recursive: true });
  const port = opts.port ?? (await getFreePort());
  const consolePort = await getFreePort();
  const accessKeyId = `fh${randomBytes(6).toString('hex')}`;
  const secretAccessKey = randomBytes(24).toString('base64url');
  const endpoint = `http://127.0.0.1:${port}`;

  const child: ChildProcess = spawn(
    executable,
    ['server', dataDir, '--address', `127.0.0.1:${port}`, '--console-address', `127.0.0.1:${consolePort}`, '--quiet'],
    {
      env: { ...process.env, MINIO_ROOT_USER: accessKeyId, MINIO_ROOT_PASSWORD: secretAccessKey, MINIO_BROWSER: 'off', MINIO_UPDATE: 'off' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const output: string[] = [];
  const keep = (d: Buffer): void => {
    output.push(...d.toString().split(/\r?\n/).filter(Boolean));
    output.splice(0, Math.max(0, output.length - 30));
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  let spawnError: Error | undefined;
  child.on('error', (err) => (spawnError = err));
  const proc = watchProcess(child);

  const removeData = (): void => {
    if (ownDataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  };
  const stop = async (): Promise<void> => {
    await proc.stop('SIGTERM', 10_000);
    removeData();
  };

  const started = Date.now();
  try {
    await waitUntil(
      async () => {
        const res = await fetch(`${endpoint}/minio/health/ready`, { signal: AbortSignal.timeout(2000) });
        return res.status === 200;
      },
      {
        timeoutMs: opts.readyTimeoutMs ?? 60_000,
        aborted: () => (spawnError ? `could not run ${executable}: ${spawnError.message}` : proc.exited() ? `it exited (${proc.exited()})` : undefined),
        fail: (why) =>
          new MinioError(
            'MinioStartFailed',
            `MinIO (${executable}) did not become ready on ${endpoint}: ${why}.\n${output.join('\n')}\n` +
              `Run \`${executable} server <dir> --address 127.0.0.1:${port}\` by hand to see why.`,
          ),
      },
    );
  } catch (err) {
    await stop();
    throw err;
  }
  onProgress(`MinIO ready at ${endpoint} (data ${dataDir}) in ${Date.now() - started} ms`);

  let stopping: Promise<void> | undefined;
  return {
    endpoint,
    accessKeyId,
    secretAccessKey,
    region: 'us-east-1',
    dataDir,
    executable,
    stop: () => (stopping ??= stop()),
  };
}
