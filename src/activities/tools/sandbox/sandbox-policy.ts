/**
 * What a confined process may reach, as data: one policy, rendered for bubblewrap on Linux
 * (sandbox-bwrap.ts) and for Seatbelt on macOS (sandbox-seatbelt.ts), so the two cannot drift apart
 * silently: test/unit/sandbox-policy.test.ts holds each rendering against the same policy.
 *
 * A policy is an ordered list of entries (later ones are mounted over earlier ones by bubblewrap):
 * `read` paths (visible read-only; `optional` ones may be missing), `write` paths (read-write), and
 * `link`s (a merged-/usr system's `/bin → usr/bin`, recreated as the same link). The root is the last
 * `write` entry and the working directory. Everything not listed is absent. The process also gets a
 * private temporary directory and, unless `network`, no network.
 *
 * The environment is not part of the wrapper: `sandboxEnv` (sandbox.ts) is the whole environment for
 * either wrapper, so the worker's secrets are absent under both.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { gitEntries } from '../../git/sandbox-git';

export type PolicyEntry =
  | { kind: 'read'; path: string; optional?: boolean }
  | { kind: 'write'; path: string }
  | { kind: 'link'; path: string; target: string };

export interface SandboxPolicy {
  /** The working directory; also the last `write` entry. */
  root: string;
  /** The system's own read-only files (what programs need to run), in mount order. */
  system: PolicyEntry[];
  /** The rest, mounted after the private /tmp: extra read-only paths, git's (sandbox-git.ts), the root. */
  entries: PolicyEntry[];
  /** Reach the network (false: no network at all, not even loopback). */
  network: boolean;
}

export type SandboxPlatform = 'linux' | 'darwin';

export interface PolicyOptions {
  /** Let the process reach the network (default false). */
  network?: boolean;
  /** Extra paths the process may read, e.g. an MCP server's install directory. */
  readOnly?: readonly string[];
}

/** /bin, /lib, … are links into /usr on merged-/usr systems (Debian 12): recreate the link, else bind the directory. */
const ROOT_DIRS = ['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32'];

/** What of /etc programs commonly need: the linker cache, Debian's alternatives (awk, …), name service, TLS roots, time zone. */
export const ETC_FILES = [
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

/**
 * macOS's system files, read-only: programs (/usr, /bin, /sbin), the OS and its frameworks and dyld
 * cache (/System), /Library (the Command Line Tools' git and clang live in /Library/Developer), the
 * same /etc files as on Linux (in /private/etc, where /etc links), the time zone database localtime
 * links into, resolv.conf's real home, and /dev (reads; writes only to /dev/null, in the profile).
 * The links /etc, /tmp and /var themselves are readable so paths through them resolve.
 */
const DARWIN_SYSTEM: PolicyEntry[] = [
  { kind: 'read', path: '/usr' },
  { kind: 'read', path: '/bin' },
  { kind: 'read', path: '/sbin' },
  { kind: 'read', path: '/System' },
  { kind: 'read', path: '/Library' },
  ...ETC_FILES.map((name): PolicyEntry => ({ kind: 'read', path: `/private/etc/${name}`, optional: true })),
  { kind: 'read', path: '/private/var/db/timezone', optional: true },
  { kind: 'read', path: '/private/var/db/dyld', optional: true }, // the dyld shared cache before macOS 13 (later under /System)
  { kind: 'read', path: '/private/var/run/resolv.conf', optional: true },
  { kind: 'read', path: '/dev' },
  { kind: 'link', path: '/etc', target: 'private/etc' },
  { kind: 'link', path: '/tmp', target: 'private/tmp' },
  { kind: 'link', path: '/var', target: 'private/var' },
];

/** The policy for a process confined to `root` on `platform` (Linux reads the top level's links, as before). */
export function sandboxPolicy(root: string, options: PolicyOptions = {}, platform: SandboxPlatform = 'linux'): SandboxPolicy {
  const resolved = path.resolve(root);
  const entries: PolicyEntry[] = (options.readOnly ?? []).map((p) => ({ kind: 'read', path: path.resolve(p) }));
  // In one of our worktrees: what git needs for that worktree and no more (sandbox-git.ts).
  entries.push(...gitEntries(resolved));
  entries.push({ kind: 'write', path: resolved });
  return { root: resolved, system: platform === 'darwin' ? DARWIN_SYSTEM : linuxSystem(), entries, network: options.network ?? false };
}

function linuxSystem(): PolicyEntry[] {
  const system: PolicyEntry[] = [{ kind: 'read', path: '/usr' }];
  for (const dir of ROOT_DIRS) {
    const host = `/${dir}`;
    const link = readLink(host);
    if (link !== undefined) system.push({ kind: 'link', path: host, target: link });
    else if (fs.existsSync(host)) system.push({ kind: 'read', path: host });
  }
  for (const name of ETC_FILES) system.push({ kind: 'read', path: `/etc/${name}`, optional: true });
  return system;
}

function readLink(p: string): string | undefined {
  try {
    return fs.readlinkSync(p);
  } catch {
    return undefined;
  }
}

/** Every entry, system first, in order. */
export const allEntries = (policy: SandboxPolicy): PolicyEntry[] => [...policy.system, ...policy.entries];
