/**
 * Building test servers (MinIO, the Temporal server and its SQL tool) from the Go module proxy with
 * `go install` (and the Temporal CLI, for temporal-cli.ts): one build at a time per bin directory
 * (a lock file shared by every process), progress lines while it runs, and the last lines of the
 * build output in the error when it fails.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** An executable regular file (on Windows: any regular file). */
export function isExecutableFile(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    if (process.platform !== 'win32') fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first executable called `name` on PATH. */
export function findOnPath(name: string): string | undefined {
  const names = process.platform === 'win32' ? [`${name}.exe`, `${name}.cmd`, name] : [name];
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    for (const n of names) {
      const candidate = path.join(dir, n);
      if (isExecutableFile(candidate)) return candidate;
    }
  }
  return undefined;
}

export function exeName(name: string): string {
  return process.platform === 'win32' ? `${name}.exe` : name;
}

/**
 * Serializes builds into one bin directory across processes (jest workers, CI steps, a developer's
 * `npm run …:install`): resolves with a release function once this process holds the lock.
 */
export async function acquireBuildLock(
  binDir: string,
  what: string,
  onProgress: (line: string) => void,
  fail: (message: string) => Error,
  maxWaitMs = 30 * 60_000,
): Promise<() => void> {
  fs.mkdirSync(binDir, { recursive: true });
  const lock = path.join(binDir, '.install.lock');
  const deadline = Date.now() + maxWaitMs;
  let announced = false;
  for (;;) {
    try {
      fs.writeFileSync(lock, String(process.pid), { flag: 'wx' });
      return () => fs.rmSync(lock, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    let holder = Number.NaN;
    try {
      holder = Number.parseInt(fs.readFileSync(lock, 'utf8').trim(), 10);
    } catch {
      continue; // released between our write and our read
    }
    if (!Number.isFinite(holder) || !isProcessAlive(holder)) {
      fs.rmSync(lock, { force: true }); // stale: its owner died mid-build
      continue;
    }
    if (!announced) {
      onProgress(`Another process (pid ${holder}) is building ${what} into ${binDir}; waiting for it…`);
      announced = true;
    }
    if (Date.now() > deadline) {
      throw fail(`Gave up waiting for pid ${holder} to finish building ${what} (lock ${lock}). If no build is running, delete the lock file and retry.`);
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export interface GoInstallOptions {
  go: string;
  /** `module/path/cmd@version`, or several of one module version (built in one go, sharing their dependencies). */
  spec: string | string[];
  binDir: string;
  /** Human name for progress lines, e.g. "MinIO". */
  what: string;
  /** Extra `go install` flags placed before the spec (e.g. `-ldflags=-s -w`). */
  flags?: string[];
  onProgress: (line: string) => void;
  /** Builds the error thrown on failure; `detail` ends with the last lines of the build output. */
  fail: (detail: string, cause?: unknown) => Error;
}

/** `GOBIN=<binDir> go install <flags> <spec>`, output streamed to `onProgress`; resolves with the build time in ms. */
export function goInstall(opts: GoInstallOptions): Promise<number> {
  const { go, binDir, what, onProgress, fail } = opts;
  const specs = typeof opts.spec === 'string' ? [opts.spec] : opts.spec;
  const spec = specs.join(' ');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    GOBIN: binDir,
    // Everything built here is pure Go; without cgo no C compiler is needed.
    CGO_ENABLED: process.env.CGO_ENABLED ?? '0',
  };
  onProgress(`Building ${what} from source: go install ${spec} (GOBIN=${binDir}). This takes a few minutes the first time; later runs reuse the binary.`);
  const started = Date.now();
  return new Promise<number>((resolve, reject) => {
    const child = spawn(go, ['install', ...(opts.flags ?? []), ...specs], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const tail: string[] = [];
    const onLine = (line: string): void => {
      if (!line.trim()) return;
      tail.push(line);
      if (tail.length > 40) tail.shift();
      onProgress(line);
    };
    for (const stream of [child.stdout, child.stderr]) {
      let buffered = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        buffered += chunk;
        const lines = buffered.split(/\r?\n/);
        buffered = lines.pop() ?? '';
        lines.forEach(onLine);
      });
      stream.on('end', () => onLine(buffered));
    }
    const heartbeat = setInterval(() => onProgress(`…still building ${what} (${Math.round((Date.now() - started) / 1000)}s elapsed)`), 30_000);
    heartbeat.unref();
    child.on('error', (err) => {
      clearInterval(heartbeat);
      reject(fail(`could not run ${go}: ${err.message}. Check your Go installation.`, err));
    });
    child.on('close', (code, signal) => {
      clearInterval(heartbeat);
      const ms = Date.now() - started;
      if (code === 0) {
        onProgress(`Built ${what} in ${Math.round(ms / 1000)}s`);
        resolve(ms);
        return;
      }
      reject(
        fail(
          `\`go install ${spec}\` failed (${signal ? `signal ${signal}` : `exit code ${code}`}).\n${tail.join('\n')}\n` +
            `Check that this machine reaches the Go module proxy (GOPROXY=${process.env.GOPROXY ?? 'default'}) and that Go is recent enough ` +
            `(or GOTOOLCHAIN allows fetching one).`,
        ),
      );
    });
  });
}

/** Polls `probe` every `intervalMs` until it resolves true; rejects with `fail()` after `timeoutMs` or as soon as `aborted()` says why. */
export async function waitUntil(
  probe: () => Promise<boolean>,
  opts: { timeoutMs: number; intervalMs?: number; aborted?: () => string | undefined; fail: (why: string) => Error },
): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    const why = opts.aborted?.();
    if (why) throw opts.fail(why);
    if (await probe().catch(() => false)) return;
    if (Date.now() > deadline) throw opts.fail(`not ready after ${Math.round(opts.timeoutMs / 1000)}s`);
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 200));
  }
}

/** A started server process: why it ended, if it has (exit code, signal or spawn error), and a stop that escalates. */
export interface WatchedProcess {
  exited(): string | undefined;
  /** Sends `signal`, then SIGKILL after `graceMs`; resolves once the process has exited. */
  stop(signal: NodeJS.Signals, graceMs: number): Promise<void>;
}

export function watchProcess(child: ChildProcess): WatchedProcess {
  let exited: string | undefined;
  const done = new Promise<void>((resolve) => {
    child.on('exit', (code, signal) => {
      exited = signal ? `signal ${signal}` : `exit code ${code}`;
      resolve();
    });
    child.on('error', (err) => {
      exited = err.message;
      resolve();
    });
  });
  return {
    exited: () => exited,
    async stop(signal, graceMs) {
      if (exited) return;
      child.kill(signal);
      const killer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await done;
      clearTimeout(killer);
    },
  };
}
