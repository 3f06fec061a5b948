import { execFileSync } from 'node:child_process';
import { z } from 'zod';
import { FabricError } from '../core/errors';
import { parseWith } from '../core/validate';

/**
 * How the worker runs bash: with which environment, inside which wrapper. A worker-level setting
 * (createWorker / FabricHarnessPlugin `toolSandbox`), not an agent option, on purpose: values set here
 * (tokens a tool needs) stay on the worker and never travel through workflow history, and isolation is
 * a property of the machine (is bwrap installed?), not of the workflow code.
 *
 * Default: a minimal environment (PATH, HOME = the sandbox dir, LANG, TERM, TMPDIR) and no wrapper —
 * bash is NOT a jail then: it runs as the worker's user and can read whatever that user can.
 */
export const toolSandboxSchema = z
  .object({
    /** Variables to set for tools, e.g. `{ GITHUB_TOKEN: process.env.GITHUB_TOKEN }`. */
    env: z.record(z.string(), z.string()).optional(),
    /** Names of the worker's own variables to pass through as they are (e.g. ['HTTPS_PROXY']). */
    passEnv: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/)).optional(),
    /**
     * Run bash inside this command: argv prefix, then `bash -c <command>`; `{cwd}` in an argument is
     * replaced by the sandbox directory. 'bwrap': a built-in bubblewrap profile (read-only root, the
     * sandbox directory writable, no network, private /tmp); the worker refuses to start without bwrap.
     */
    wrapper: z.union([z.literal('bwrap'), z.array(z.string().min(1)).min(1)]).optional(),
  })
  .strict();

export type ToolSandboxOptions = z.infer<typeof toolSandboxSchema>;

export class SandboxUnavailableError extends FabricError {
  constructor(message: string) {
    super('SANDBOX_UNAVAILABLE', message);
  }
}

/** What bash is run with: resolved once per worker. */
export interface ToolSandbox {
  env(cwd: string): Record<string, string>;
  /** The argv that runs `command` in `cwd`. */
  argv(command: string, cwd: string): string[];
}

const FALLBACK_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

const BWRAP_PROFILE = [
  'bwrap',
  '--ro-bind', '/', '/',
  '--dev', '/dev',
  '--proc', '/proc',
  '--tmpfs', '/tmp',
  '--bind', '{cwd}', '{cwd}',
  '--chdir', '{cwd}',
  '--unshare-all',
  '--die-with-parent',
  '--new-session',
];

export function resolveToolSandbox(options: ToolSandboxOptions = {}, onPath: (cmd: string) => boolean = commandExists): ToolSandbox {
  const opts = parseWith(toolSandboxSchema, options, 'toolSandbox') as ToolSandboxOptions;
  const wrapper = opts.wrapper === 'bwrap' ? BWRAP_PROFILE : opts.wrapper;
  if (wrapper && !onPath(wrapper[0])) {
    throw new SandboxUnavailableError(
      `toolSandbox.wrapper: '${wrapper[0]}' is not installed on this worker; install it or remove the wrapper (bash then runs unconfined)`,
    );
  }
  const passed: Record<string, string> = {};
  for (const name of opts.passEnv ?? []) {
    const value = process.env[name];
    if (value !== undefined) passed[name] = value;
  }
  return {
    env: (cwd) => ({
      PATH: process.env.PATH || FALLBACK_PATH,
      HOME: cwd,
      LANG: process.env.LANG || 'C.UTF-8',
      TERM: 'dumb',
      TMPDIR: '/tmp',
      ...passed,
      ...opts.env,
    }),
    argv: (command, cwd) => [...(wrapper ?? []).map((a) => a.split('{cwd}').join(cwd)), 'bash', '-c', command],
  };
}

/** Default: minimal environment, no wrapper. */
export const defaultToolSandbox: ToolSandbox = resolveToolSandbox({}, () => true);

function commandExists(cmd: string): boolean {
  try {
    execFileSync('sh', ['-c', 'command -v "$1"', 'sh', cmd], { stdio: 'ignore', env: { PATH: process.env.PATH || FALLBACK_PATH } });
    return true;
  } catch {
    return false;
  }
}
