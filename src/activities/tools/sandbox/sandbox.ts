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
 *   sandbox's processes with it). On macOS the same policy (sandbox-policy.ts) is a Seatbelt profile
 *   for sandbox-exec (sandbox-seatbelt.ts).
 *
 * Where the platform's confinement is missing or cannot run, confinedSpawn throws
 * SandboxUnavailableError instead of running unconfined: running without confinement is an explicit
 * choice (`confinement: 'none'`), never a silent fallback.
 */
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { renderBwrap } from './sandbox-bwrap';
import { bwrapProgram, requireBwrap, requireSeatbelt, seatbeltProgram } from './sandbox-probe';
import { sandboxPolicy, type PolicyOptions } from './sandbox-policy';
import { seatbeltArgs } from './sandbox-seatbelt';

export { SandboxUnavailableError, probeBwrap, probeSeatbelt, requireBwrap, requireSeatbelt, probeConfinement, confinementHint } from './sandbox-probe';

/**
 * How a process is confined: 'bwrap' (bubblewrap, the default on Linux), 'seatbelt' (macOS's
 * sandbox-exec, the default there), 'none' (runs as the worker's user with the worker's view of the file
 * system: an explicit opt-out), or an argv prefix of your own wrapper, with `{cwd}` in an argument
 * replaced by the sandbox root.
 */
export type Confinement = 'bwrap' | 'seatbelt' | 'none' | readonly string[];

/** The platform's own confinement: Seatbelt on macOS, bubblewrap elsewhere (where it is missing, SANDBOX_UNAVAILABLE says so). */
export function defaultConfinement(platform: NodeJS.Platform = process.platform): 'bwrap' | 'seatbelt' {
  return platform === 'darwin' ? 'seatbelt' : 'bwrap';
}

/**
 * The private temporary directory: /tmp under bubblewrap (a tmpfs of its own); on macOS, where Seatbelt
 * cannot give a process its own /tmp, `<root>/.tmp` (inside the one writable directory).
 */
export function privateTmp(root: string, platform: NodeJS.Platform = process.platform): string {
  return platform === 'darwin' ? path.join(root, '.tmp') : '/tmp';
}

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
 * LANG, TERM=dumb, TMPDIR (the private one, `privateTmp`), then the named pass-through variables and the
 * set ones. Nothing else of `process.env`, whichever the confinement.
 */
export function sandboxEnv(root: string, options: SandboxEnvOptions = {}, platform: NodeJS.Platform = process.platform): Record<string, string> {
  const passed: Record<string, string> = {};
  for (const name of options.passEnv ?? []) {
    const value = process.env[name];
    if (value !== undefined) passed[name] = value;
  }
  return { PATH: SANDBOX_PATH, HOME: root, LANG: process.env.LANG || 'C.UTF-8', TERM: 'dumb', TMPDIR: privateTmp(root, platform), ...passed, ...options.env };
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
  /** Default: the platform's (`defaultConfinement()`). */
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
  const confinement = options.confinement ?? defaultConfinement();
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
export function confinementArgv(confinement: Confinement, root: string, options: PolicyOptions = {}): string[] {
  if (confinement === 'none') return [];
  if (confinement === 'bwrap') {
    requireBwrap();
    return [bwrapProgram(), ...bwrapArgs(root, options)];
  }
  if (confinement === 'seatbelt') {
    requireSeatbelt();
    // Seatbelt matches resolved paths (macOS's /tmp and /var are links into /private).
    const real = fs.realpathSync(root);
    makePrivateTmp(privateTmp(real, 'darwin'));
    const readOnly = (options.readOnly ?? []).map((p) => realpathOr(p));
    return [seatbeltProgram(), ...seatbeltArgs(sandboxPolicy(real, { ...options, readOnly }, 'darwin'))];
  }
  return confinement.map((a) => a.split('{cwd}').join(root));
}

/** bubblewrap's arguments (without the leading 'bwrap') for a process confined to `root`: the Linux policy, rendered. */
export function bwrapArgs(root: string, options: PolicyOptions = {}): string[] {
  return renderBwrap(sandboxPolicy(root, options, 'linux'));
}

/**
 * Makes `<root>/.tmp`, ignored by git (`*` in its own .gitignore): in a worktree, the worker's finishing
 * `git add -A` would otherwise commit a tool's temporary files.
 */
function makePrivateTmp(dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
  try {
    fs.writeFileSync(path.join(dir, '.gitignore'), '*\n', { flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
}

function realpathOr(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}
