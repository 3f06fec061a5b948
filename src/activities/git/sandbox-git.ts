/**
 * What git needs inside the sandbox when the sandbox root is in one of our worktrees (worktrees.ts):
 * the worktree's `.git` file points at its admin dir in the repository's common git dir, which the
 * sandbox (bubblewrap or Seatbelt: these are policy entries, sandbox-policy.ts) would otherwise not have, so a sub-agent, child session or flow branch could not
 * `git status`, `diff`, `log` or `commit` its own work. Bound, at the same paths:
 *
 * - read-write: the worktree's admin dir `<common>/worktrees/<id>` (HEAD, index, logs/HEAD, ORIG_HEAD);
 *   its branch's ref directory `refs/heads/fh/<id>` and reflog directory `logs/refs/heads/fh/<id>` (git
 *   renames a lock file over the ref, so the directory, which holds that one branch only); and each of
 *   the 256 loose-object directories `objects/00` … `objects/ff` (a commit writes its objects there).
 * - read-only: `objects` itself (so no directory in it can be replaced, e.g. by a symlink that later
 *   git runs would write through) with `objects/pack` and `objects/info`; `refs` and `packed-refs` (every
 *   other branch and tag); `HEAD`, `config`, `info` (exclude), `shallow`; and the worktree's top when
 *   the root is below it (so git sees the whole checkout; only the root is writable).
 *
 * Not bound: hooks, other worktrees' admin dirs and files, the main checkout, remotes' credentials.
 * Everything here is derived from the root's path (`<common>/fh-worktrees/<id>/…`), never read from a
 * file the tool can write (its `.git` file, HEAD, commondir); the admin dir's back-pointer only confirms
 * it (a tool that rewrites its own loses git, nothing else).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ownWorktreeOf, writableGitDirs } from './worktree-layout';

/** The 256 loose-object directories (git makes them as needed; the sandbox cannot, so they are made first). */
const OBJECT_DIRS = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** A path git needs, read-only or read-write (a sandbox-policy.ts entry). */
export type GitEntry = { kind: 'read'; path: string; optional?: boolean } | { kind: 'write'; path: string };

/** Policy entries that let git work in the worktree `root` is in (none when it is not one of ours). */
export function gitEntries(root: string): GitEntry[] {
  const wt = ownWorktreeOf(root);
  if (!wt) return [];
  const { common, top } = wt;
  const writable = writableGitDirs(wt); // the admin dir, the branch's ref and reflog directories
  for (const dir of [...writable, ...OBJECT_DIRS.map((d) => path.join(common, 'objects', d))]) fs.mkdirSync(dir, { recursive: true });
  const entries: GitEntry[] = [];
  for (const name of ['HEAD', 'config', 'packed-refs', 'shallow', 'info']) entries.push({ kind: 'read', path: path.join(common, name), optional: true });
  entries.push({ kind: 'read', path: path.join(common, 'refs') });
  entries.push({ kind: 'read', path: path.join(common, 'objects') });
  for (const d of OBJECT_DIRS) entries.push({ kind: 'write', path: path.join(common, 'objects', d) });
  for (const dir of writable) entries.push({ kind: 'write', path: dir });
  if (top !== path.resolve(root)) entries.push({ kind: 'read', path: top });
  return entries;
}
