/**
 * The policy (sandbox-policy.ts) as a Seatbelt profile for macOS's `sandbox-exec`, the confinement Codex
 * CLI and Claude Code use there. Its base (deny by default; processes may run programs and fork, signal
 * and inspect only processes of the same sandbox; a few sysctls, user lookups, ptys, /dev/null) follows
 * Codex CLI's seatbelt_base_policy.sbpl. Then the policy's entries: `read` → file-read* of the subpath,
 * `write` → file-read* and file-write* of the subpath, `link` → the link itself readable (Seatbelt checks
 * the resolved path of what is reached through it), each entry's parent directories' metadata (so paths
 * resolve) and nothing else of them; and `(deny network*)` unless the policy allows the network.
 *
 * Paths never appear in the profile text: each is a `-D NAME=path` parameter, read with `(param "NAME")`,
 * so no path (quotes, backslashes, parentheses) can change the profile's meaning.
 *
 * Differences from bubblewrap that a profile cannot express are in docs/security.md ("macOS").
 */
import * as path from 'node:path';
import { allEntries, type SandboxPolicy } from './sandbox-policy';

/** Codex CLI's base, reduced to what a shell and its tools need. */
const BASE = `(version 1)
(deny default)
; processes: run programs and fork (children inherit this profile); signal and inspect only this sandbox's own
(allow process-exec)
(allow process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
(allow user-preference-read)
(allow sysctl-read)
(allow mach-host*)
(allow ipc-posix-sem)
; user and group lookups (getpwuid: bash's prompt, git's identity)
(allow mach-lookup (global-name "com.apple.system.opendirectoryd.libinfo"))
; ptys, and writes to /dev/null (a character device, not a file put there)
(allow pseudo-tty)
(allow file-read* file-write* file-ioctl (literal "/dev/ptmx"))
(allow file-write-data (require-all (path "/dev/null") (vnode-type CHARACTER-DEVICE)))
`;

/** With the network: sockets, and the system services DNS and TLS need. */
const NETWORK = `(allow network*)
(allow system-socket)
(allow mach-lookup (global-name "com.apple.dnssd.service") (global-name "com.apple.SystemConfiguration.DNSConfiguration") (global-name "com.apple.SystemConfiguration.configd") (global-name "com.apple.trustd.agent"))
`;

export interface SeatbeltProfile {
  /** SBPL text: constants and `(param …)` references only. */
  profile: string;
  /** The `-D` parameters: name → path. */
  params: Record<string, string>;
}

/** The profile for `policy`, with its paths as parameters. */
export function renderSeatbelt(policy: SandboxPolicy): SeatbeltProfile {
  const params: Record<string, string> = {};
  const counts: Record<string, number> = {};
  const param = (kind: string, value: string): string => {
    const name = `${kind}_${(counts[kind] = (counts[kind] ?? -1) + 1)}`;
    params[name] = value;
    return `(param "${name}")`;
  };
  const entries = allEntries(policy);
  const reads = entries.filter((e) => e.kind === 'read').map((e) => `(subpath ${param('READ', e.path)})`);
  const links = entries.filter((e) => e.kind === 'link').map((e) => `(literal ${param('LINK', e.path)})`);
  const writes = entries.filter((e) => e.kind === 'write');
  const writeFilters = writes.map((e) => `(subpath ${param('WRITE', e.path)})`);
  const parents = [...new Set(entries.flatMap((e) => ancestors(e.path)))].map((p) => `(literal ${param('PARENT', p)})`);
  const mountPoints = writes.map((e) => `(literal ${param('TOP', e.path)})`);
  const lines = [BASE];
  lines.push('; the read-only entries, and the links among them');
  if (reads.length > 0) lines.push(`(allow file-read* ${reads.join(' ')})`);
  if (links.length > 0) lines.push(`(allow file-read* ${links.join(' ')})`);
  lines.push('; the directories above every entry: their metadata (a path through them resolves), not their contents');
  if (parents.length > 0) lines.push(`(allow file-read-metadata ${parents.join(' ')})`);
  lines.push('; the writable entries (the root last)');
  if (writeFilters.length > 0) lines.push(`(allow file-read* file-write* ${writeFilters.join(' ')})`);
  // As under bubblewrap, where each is a mount point: what is in them changes, they stay where they are
  // (no removing or renaming one, no symlink put in its place for the worker's own code to follow later).
  if (mountPoints.length > 0) lines.push(`(deny file-write-unlink file-write-create ${mountPoints.join(' ')})`);
  lines.push(policy.network ? NETWORK : '(deny network*)\n');
  return { profile: lines.join('\n'), params };
}

/** sandbox-exec's arguments (without the leading program) before the command: `-p profile -DNAME=path … --`. */
export function seatbeltArgs(policy: SandboxPolicy): string[] {
  const { profile, params } = renderSeatbelt(policy);
  return ['-p', profile, ...Object.entries(params).map(([name, value]) => `-D${name}=${value}`), '--'];
}

/** '/a/b/c' → ['/', '/a', '/a/b']. */
function ancestors(p: string): string[] {
  const out: string[] = [];
  for (let dir = path.dirname(p); ; dir = path.dirname(dir)) {
    out.unshift(dir);
    if (dir === path.dirname(dir)) return out;
  }
}
