/**
 * The policy (sandbox-policy.ts) as bubblewrap's arguments: a new namespace of every kind (the network's
 * shared only when the policy allows it), no capabilities, a new session, the system entries, a private
 * /proc, /dev and /tmp, then the other entries at the same paths, and the top level remounted read-only,
 * so the `write` entries and the private /tmp are all that can be written.
 */
import type { PolicyEntry, SandboxPolicy } from './sandbox-policy';

/** bubblewrap's arguments (without the leading 'bwrap') for `policy`. */
export function renderBwrap(policy: SandboxPolicy): string[] {
  const args = ['--unshare-all', ...(policy.network ? ['--share-net'] : []), '--die-with-parent', '--new-session', '--cap-drop', 'ALL'];
  for (const entry of policy.system) args.push(...mount(entry));
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp');
  // After /tmp, so a root under /tmp is bound over the private /tmp rather than hidden by it.
  for (const entry of policy.entries) args.push(...mount(entry));
  args.push('--chdir', policy.root, '--remount-ro', '/');
  return args;
}

function mount(entry: PolicyEntry): string[] {
  if (entry.kind === 'link') return ['--symlink', entry.target, entry.path];
  if (entry.kind === 'write') return ['--bind', entry.path, entry.path];
  return [entry.optional ? '--ro-bind-try' : '--ro-bind', entry.path, entry.path];
}
