import * as fs from 'node:fs';
import { z } from 'zod';
import { parseWith } from '../../core/validate';
import * as path from 'node:path';
import { confinementArgv, defaultConfinement, requireBwrap, requireSeatbelt, sandboxEnv, SandboxUnavailableError, type Confinement } from './sandbox/sandbox';

export { SandboxUnavailableError };

/**
 * How the worker runs bash: with which environment, inside which confinement. A worker-level setting
 * (createWorker / FabricHarnessPlugin `toolSandbox`; invoke / openSession take the same), not an agent
 * option, on purpose: values set here (tokens a tool needs) stay on the worker and never travel through
 * workflow history, and isolation is a property of the machine (does bubblewrap run here?), not of the
 * workflow code.
 *
 * Default: the minimal environment of sandbox.ts and the platform's confinement, bubblewrap on Linux and
 * Seatbelt on macOS (the sandbox directory the only one writable, no network). Where it does not run,
 * bash calls fail with SANDBOX_UNAVAILABLE unless `wrapper: 'none'` says to run unconfined.
 */
export const toolSandboxSchema = z
  .object({
    /** Variables to set for tools, e.g. `{ GITHUB_TOKEN: process.env.GITHUB_TOKEN }`. */
    env: z.record(z.string(), z.string()).optional(),
    /** Names of the worker's own variables to pass through as they are (e.g. ['HTTPS_PROXY']). */
    passEnv: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/)).optional(),
    /**
     * Default: the platform's. 'bwrap': bubblewrap (Linux), see sandbox.ts. 'seatbelt': macOS's
     * sandbox-exec, the same policy. 'none': unconfined (bash can read and write whatever
     * the worker's user can). An argv prefix: your own wrapper, then `bash -c <command>`; `{cwd}` in an
     * argument is replaced by the sandbox directory.
     */
    wrapper: z.union([z.literal('bwrap'), z.literal('seatbelt'), z.literal('none'), z.array(z.string().min(1)).min(1)]).optional(),
    /** Let bash reach the network (default false). Applies to 'bwrap' and 'seatbelt'. */
    network: z.boolean().optional(),
  })
  .strict();

export type ToolSandboxOptions = z.infer<typeof toolSandboxSchema>;

/** What bash is run with: resolved once per worker (or inline run). */
export interface ToolSandbox {
  readonly confinement: Confinement;
  readonly network: boolean;
  env(cwd: string): Record<string, string>;
  /**
   * The argv that runs `bash -c command` confined to `cwd` (for launchers that take an argv, such as the
   * MCP SDK's stdio transport); `readOnly` paths are visible read-only. Throws SANDBOX_UNAVAILABLE.
   */
  argv(command: string, cwd: string, readOnly?: readonly string[]): string[];
}

/**
 * Validates the settings. A wrapper asked for by name ('bwrap', 'seatbelt', or an argv whose program is
 * not on PATH) that cannot run fails here, at worker start; the default is checked on first use, so a
 * worker whose agents never run bash starts on a machine without confinement.
 */
export function resolveToolSandbox(options: ToolSandboxOptions = {}, onPath: (cmd: string) => boolean = commandExists): ToolSandbox {
  const opts = parseWith(toolSandboxSchema, options, 'toolSandbox') as ToolSandboxOptions;
  const confinement: Confinement = opts.wrapper ?? defaultConfinement();
  if (opts.wrapper === 'bwrap') requireBwrap();
  if (opts.wrapper === 'seatbelt') requireSeatbelt();
  if (Array.isArray(opts.wrapper) && !onPath(opts.wrapper[0]!)) {
    throw new SandboxUnavailableError(
      `toolSandbox.wrapper: '${opts.wrapper[0]}' is not installed on this worker; install it, or use 'bwrap' (Linux), 'seatbelt' (macOS) or 'none' (unconfined)`,
    );
  }
  const network = opts.network ?? false;
  return {
    confinement,
    network,
    env: (cwd) => sandboxEnv(cwd, opts),
    argv: (command, cwd, readOnly) => [...confinementArgv(confinement, path.resolve(cwd), { network, readOnly }), 'bash', '-c', command],
  };
}

/** Default: minimal environment, the platform's confinement (checked when bash first runs). */
export const defaultToolSandbox: ToolSandbox = resolveToolSandbox({});

function commandExists(cmd: string): boolean {
  if (cmd.includes('/')) return isExecutable(cmd);
  return (process.env.PATH ?? '').split(':').some((dir) => dir && isExecutable(`${dir}/${cmd}`));
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
