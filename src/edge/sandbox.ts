/**
 * The one place that decides how a process the model asked for runs: with which environment, and inside
 * which confinement. bash uses it; so can anything else that starts a process on the model's behalf (an
 * MCP stdio server, a sub-agent's tool). Written once so they all get the same rules:
 *
 * - `sandboxEnv(root)`: a minimal environment. Nothing of the worker's own (API keys, Temporal and store
 *   credentials) is in it; values reach a tool only when the worker sets or names them.
 * - `confinedSpawn(command, args, { root, network, signal })`: by default under bubblewrap, where the
 *   process sees its sandbox root read-write at the same path, the system directories needed to run
 *   programs read-only (/usr and its /bin, /lib links, a few files of /etc), a private /tmp, /proc and
 *   /dev of its own, no network unless `network: true`, and nothing else: no $HOME, no project tree, no
 *   other process's /proc. A root in one of our git worktrees also gets what git needs for that
 *   worktree (sandbox-git.ts). Aborting `signal` kills its whole process group (and bubblewrap takes the
 *   sandbox's processes with it).
 *
 * Where bubblewrap is missing or cannot create its namespaces, confinedSpawn throws
 * SandboxUnavailableError instead of running unconfined: running without confinement is an explicit
 * choice (`confinement: 'none'`), never a silent fallback.
 */
import { spawn, spawnSync, type ChildProcess, type StdioOptions } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FabricError } from '../core/errors';
import { gitBindArgs } from './sandbox-git';

export class SandboxUnavailableError extends FabricError {
  constructor(message: string) {
    super('SANDBOX_UNAVAILABLE', message);
  }
}

/**
 * How a process is confined: 'bwrap' (bubblewrap, the default), 'none' (runs as the worker's user with
 * the worker's view of the file system: an explicit opt-out), or an argv prefix of your own wrapper, with
 * `{cwd}` in an argument replaced by the sandbox root.
 */
export type Confinement = 'bwrap' | 'none' | readonly string[];

/** The PATH inside the sandbox: system directories only (a worker PATH may name directories under $HOME). */
export const SANDBOX_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export interface SandboxEnvOptions {
  /** Variables to set, e.g. `{ GITHUB_TOKEN: '…' }` (worker settings: they never travel through history). */
  env?: Record<string, string>;
  /** Names of the worker's own variables to pass through as they are (e.g. ['HTTPS_PROXY']). */
  passEnv?: readonly string[];
}

/**
 * The whole environment a sandboxed process gets: PATH (system directories), HOME = the sandbox root,
 * LANG, TERM=dumb, TMPDIR=/tmp, then the named pass-through variables and the set ones. Nothing else of
 * `process.env`.
 */
export function sandboxEnv(root: string, options: SandboxEnvOptions = {}): Record<string, string> {
  const passed: Record<string, string> = {};
  for (const name of options.passEnv ?? []) {
    const value = process.env[name];
    if (value !== undefined) passed[name] = value;
  }
  return { PATH: SANDBOX_PATH, HOME: root, LANG: process.env.LANG || 'C.UTF-8', TERM: 'dumb', TMPDIR: '/tmp', ...passed, ...options.env };
}

export interface ConfinedSpawnOptions {
  /** The sandbox root: the working directory, and the only directory the process may write. Must exist. */
  root: string;
  /** Let the process reach the network (default false: a network namespace with no interfaces). */
  network?: boolean;
  /** Aborting it SIGKILLs the process group. */
  signal?: AbortSignal;
  /** The process's environment (default `sandboxEnv(root)`). It is the whole environment. */
  env?: Record<string, string>;
  /** Extra paths the process may read (bound read-only at the same path), e.g. an MCP server's install directory. */
  readOnly?: readonly string[];
  /** Default 'bwrap'. */
  confinement?: Confinement;
  /** Default ['ignore', 'pipe', 'pipe']; an MCP stdio server wants ['pipe', 'pipe', 'pipe']. */
  stdio?: StdioOptions;
}

/**
 * Starts `command args` confined to `root` (see the module comment). The child leads its own process
 * group; `signal` (or `killConfined(child)`) kills the group. Throws SandboxUnavailableError when the
 * confinement cannot be had.
 */
export function confinedSpawn(command: string, args: readonly string[], options: ConfinedSpawnOptions): ChildProcess {
  const confinement = options.confinement ?? 'bwrap';
  const root = path.resolve(options.root);
  const argv = [...confinementArgv(confinement, root, options), command, ...args];
  const child = spawn(argv[0]!, argv.slice(1), {
    cwd: root,
    env: options.env ?? sandboxEnv(root),
    stdio: options.stdio ?? ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group, so a kill reaches every process it started
  });
  const signal = options.signal;
  if (signal) {
    const onAbort = () => killConfined(child);
    if (signal.aborted) onAbort();
    else {
      signal.addEventListener('abort', onAbort, { once: true });
      child.once('exit', () => signal.removeEventListener('abort', onAbort));
    }
  }
  return child;
}

/** SIGKILLs the child's whole process group (a pipeline leaves children behind otherwise). */
export function killConfined(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    /* already gone */
  }
}

/** The argv prefix that confines a command (empty for 'none'). Throws SandboxUnavailableError. */
export function confinementArgv(confinement: Confinement, root: string, options: Pick<ConfinedSpawnOptions, 'network' | 'readOnly'> = {}): string[] {
  if (confinement === 'none') return [];
  if (confinement === 'bwrap') {
    requireBwrap();
    return ['bwrap', ...bwrapArgs(root, options)];
  }
  return confinement.map((a) => a.split('{cwd}').join(root));
}

/** /bin, /lib, … are links into /usr on merged-/usr systems (Debian 12): recreate the link, else bind the directory. */
const ROOT_DIRS = ['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32'];

/** What of /etc programs commonly need: the linker cache, Debian's alternatives (awk, …), name service, TLS roots, time zone. */
const ETC_FILES = [
  'alternatives',
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'localtime',
  'passwd',
  'group',
  'nsswitch.conf',
  'hosts',
  'resolv.conf',
  'ssl',
  'ca-certificates',
  'ca-certificates.conf',
];

/** bubblewrap's arguments (without the leading 'bwrap') for a process confined to `root`. */
export function bwrapArgs(root: string, options: Pick<ConfinedSpawnOptions, 'network' | 'readOnly'> = {}): string[] {
  const args = ['--unshare-all', ...(options.network ? ['--share-net'] : []), '--die-with-parent', '--new-session', '--cap-drop', 'ALL'];
  args.push('--ro-bind', '/usr', '/usr');
  for (const dir of ROOT_DIRS) {
    const host = `/${dir}`;
    const link = readLink(host);
    if (link !== undefined) args.push('--symlink', link, host);
    else if (fs.existsSync(host)) args.push('--ro-bind', host, host);
  }
  for (const name of ETC_FILES) args.push('--ro-bind-try', `/etc/${name}`, `/etc/${name}`);
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp');
  for (const p of options.readOnly ?? []) args.push('--ro-bind', path.resolve(p), path.resolve(p));
  // In one of our worktrees: what git needs for that worktree and no more (sandbox-git.ts).
  args.push(...gitBindArgs(root));
  // After /tmp, so a root under /tmp is bound over the private /tmp rather than hidden by it. Then the
  // sandbox's own top level goes read-only: the root and the private /tmp are all that can be written.
  args.push('--bind', root, root, '--chdir', root, '--remount-ro', '/');
  return args;
}

function readLink(p: string): string | undefined {
  try {
    return fs.readlinkSync(p);
  } catch {
    return undefined;
  }
}

let bwrapProbe: { ok: true } | { ok: false; reason: string } | undefined;

/**
 * Whether bubblewrap runs here: installed, and able to make its namespaces (a container without user
 * namespaces, or a seccomp profile that forbids them, fails here). Probed once per process, by running
 * `true` under the real profile.
 */
export function probeBwrap(program = 'bwrap'): { ok: true } | { ok: false; reason: string } {
  if (program !== 'bwrap') return runProbe(program);
  return (bwrapProbe ??= runProbe(program));
}

function runProbe(program: string): { ok: true } | { ok: false; reason: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fh-bwrap-probe-'));
  try {
    const res = spawnSync(program, [...bwrapArgs(fs.realpathSync(dir)), 'true'], { env: { PATH: SANDBOX_PATH }, encoding: 'utf8', timeout: 10_000 });
    if (res.error) {
      const missing = (res.error as NodeJS.ErrnoException).code === 'ENOENT';
      return { ok: false, reason: missing ? 'bubblewrap (bwrap) is not installed' : `bwrap could not be started: ${res.error.message}` };
    }
    if (res.status !== 0) return { ok: false, reason: `bwrap cannot create its sandbox here: ${(res.stderr || `exit code ${res.status}`).trim()}` };
    return { ok: true };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Throws SandboxUnavailableError (saying how to fix it) unless bubblewrap works here. */
export function requireBwrap(probe = probeBwrap()): void {
  if (probe.ok) return;
  throw new SandboxUnavailableError(
    `${probe.reason}. Tool processes (bash) run confined by bubblewrap by default and are refused without it: ` +
      'install it (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap), ' +
      "or run them unconfined, as the worker's user with its view of the file system, by setting toolSandbox: { wrapper: 'none' } " +
      '(createWorker / FabricHarnessPlugin; invoke() and openSession() take the same toolSandbox option).',
  );
}
