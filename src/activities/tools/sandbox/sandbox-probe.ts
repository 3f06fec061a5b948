/**
 * Whether a confinement runs here, and what to tell the user when it does not. Each is probed once per
 * process by running `true` under the real profile, so "installed but cannot make its sandbox here" (a
 * container without user namespaces) is found before a tool call, not during one.
 *
 * The programs are `bwrap` on PATH and `/usr/bin/sandbox-exec`; FH_BWRAP_PATH and FH_SANDBOX_EXEC_PATH
 * (worker settings, never a tool's) name others, e.g. a path that does not exist to see how a machine
 * without confinement behaves.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FabricError } from '../../../core/errors';
import { renderBwrap } from './sandbox-bwrap';
import { sandboxPolicy } from './sandbox-policy';
import { seatbeltArgs } from './sandbox-seatbelt';

export class SandboxUnavailableError extends FabricError {
  constructor(message: string) {
    super('SANDBOX_UNAVAILABLE', message);
  }
}

export type Probe = { ok: true } | { ok: false; reason: string };

/** The PATH a probe runs with (the sandbox's own). */
const PROBE_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export const bwrapProgram = (): string => process.env.FH_BWRAP_PATH || 'bwrap';
export const seatbeltProgram = (): string => process.env.FH_SANDBOX_EXEC_PATH || '/usr/bin/sandbox-exec';

const probes = new Map<string, Probe>();

/** Whether bubblewrap runs here: installed, and able to make its namespaces. */
export function probeBwrap(program = bwrapProgram()): Probe {
  return cached(`bwrap:${program}`, () =>
    runProbe(program, (dir) => renderBwrap(sandboxPolicy(dir, {}, 'linux')), 'bubblewrap (bwrap) is not installed', 'bwrap'),
  );
}

/** Whether Seatbelt runs here: macOS's sandbox-exec, able to apply the profile. */
export function probeSeatbelt(program = seatbeltProgram()): Probe {
  return cached(`seatbelt:${program}`, () =>
    runProbe(program, (dir) => seatbeltArgs(sandboxPolicy(dir, {}, 'darwin')), `sandbox-exec (macOS Seatbelt) is not available at ${program}`, 'sandbox-exec'),
  );
}

/** The probe of the confinement `confinement` names ('none' and custom wrappers always pass here). */
export function probeConfinement(confinement: unknown): Probe {
  if (confinement === 'bwrap') return probeBwrap();
  if (confinement === 'seatbelt') return probeSeatbelt();
  return { ok: true };
}

/** Throws SandboxUnavailableError (saying how to fix it) unless bubblewrap works here. */
export function requireBwrap(probe = probeBwrap()): void {
  if (!probe.ok) throw new SandboxUnavailableError(unavailableMessage(probe.reason, 'bubblewrap'));
}

/** Throws SandboxUnavailableError (saying how to fix it) unless Seatbelt works here. */
export function requireSeatbelt(probe = probeSeatbelt()): void {
  if (!probe.ok) throw new SandboxUnavailableError(unavailableMessage(probe.reason, 'Seatbelt (sandbox-exec)'));
}

/** One line for a user whose machine has no confinement: what to do about it. */
export function confinementHint(reason: string): string {
  return (
    `No confinement for bash here (${reason.replace(/\s+/g, ' ')}): on Linux install bubblewrap (apt-get install bubblewrap, or your distro's package); ` +
    "on macOS sandbox-exec is built in; or set toolSandbox: { wrapper: 'none' } to run tools unconfined."
  );
}

function unavailableMessage(reason: string, name: string): string {
  return (
    `${reason}. Tool processes (bash) run confined by ${name} by default and are refused without it: ` +
    'install it (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap; macOS has sandbox-exec built in), ' +
    "or run them unconfined, as the worker's user with its view of the file system, by setting toolSandbox: { wrapper: 'none' } " +
    '(createWorker / FabricHarnessPlugin; invoke() and openSession() take the same toolSandbox option).'
  );
}

function cached(key: string, probe: () => Probe): Probe {
  let result = probes.get(key);
  if (!result) probes.set(key, (result = probe()));
  return result;
}

function runProbe(program: string, args: (dir: string) => string[], missing: string, name: string): Probe {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fh-sandbox-probe-'));
  try {
    const res = spawnSync(program, [...args(fs.realpathSync(dir)), 'true'], { env: { PATH: PROBE_PATH }, encoding: 'utf8', timeout: 10_000 });
    if (res.error) {
      const enoent = (res.error as NodeJS.ErrnoException).code === 'ENOENT';
      return { ok: false, reason: enoent ? missing : `${name} could not be started: ${res.error.message}` };
    }
    if (res.status !== 0) return { ok: false, reason: `${name} cannot create its sandbox here: ${(res.stderr || `exit code ${res.status}`).trim()}` };
    return { ok: true };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
