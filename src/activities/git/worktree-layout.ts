/**
 * Where our worktrees' git files are, derived from a worktree's path alone (`<common>/fh-worktrees/<id>`),
 * for the two places that must not take them from files a tool can write (its `.git` file, its admin
 * dir's `commondir`): the sandbox, which binds them (sandbox-git.ts), and the worker's own git when it
 * finishes the worktree (worktrees.ts).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** Where our worktrees live: in the repository's common git dir, under this directory. */
export const WORKTREES_DIR = 'fh-worktrees';

/**
 * The branch of worktree `id`: `fh/<id>/work`, one ref directory per worktree, so that a confined tool
 * can be given write access to its own branch's ref (git renames a lock file over it) and no other's.
 */
export const worktreeBranch = (id: string): string => `fh/${id}/work`;

/** One of our worktrees: its top, the repository's common git dir, its id, its admin dir. */
export interface OwnWorktree {
  top: string;
  common: string;
  id: string;
  admin: string;
}

/**
 * The worktree of ours that `root` is in (the worktree itself or a directory in it), else undefined. Its
 * admin dir must name it back (git names the admin dir after the worktree's directory, with a number
 * added when that name is taken: then it is not the one we would guess).
 */
export function ownWorktreeOf(root: string): OwnWorktree | undefined {
  let top = path.resolve(root);
  while (path.basename(path.dirname(top)) !== WORKTREES_DIR) {
    const up = path.dirname(top);
    if (up === top) return undefined;
    top = up;
  }
  const common = path.dirname(path.dirname(top));
  const id = path.basename(top);
  const admin = path.join(common, 'worktrees', id);
  const back = readText(path.join(admin, 'gitdir'));
  if (back === undefined || path.basename(back) !== '.git' || realpath(path.dirname(back)) !== realpath(top)) return undefined;
  if (!isDir(path.join(common, 'objects')) || !isDir(path.join(common, 'refs'))) return undefined;
  return { top, common, id, admin };
}

/** The directories of the worktree's git files a confined tool may write: its admin dir, its branch's ref and reflog directories. */
export function writableGitDirs(wt: OwnWorktree): string[] {
  const branchDir = path.dirname(worktreeBranch(wt.id)); // fh/<id>
  return [wt.admin, path.join(wt.common, 'refs', 'heads', branchDir), path.join(wt.common, 'logs', 'refs', 'heads', branchDir)];
}

/**
 * Removes symlinks from the directories a confined tool could write: git never makes any there, and the
 * worker's own git would follow one (a reflog appended through `logs/HEAD`) to outside the sandbox.
 */
export function removePlantedLinks(wt: OwnWorktree): string[] {
  const removed: string[] = [];
  const walk = (dir: string): void => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = path.join(dir, e.name);
      if (e.isSymbolicLink()) {
        fs.unlinkSync(p);
        removed.push(p);
      } else if (e.isDirectory()) walk(p);
    }
  };
  for (const dir of writableGitDirs(wt)) walk(dir);
  return removed;
}

function readText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return undefined;
  }
}

function realpath(p: string): string | undefined {
  try {
    return fs.realpathSync(p);
  } catch {
    return undefined;
  }
}

function isDir(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}
