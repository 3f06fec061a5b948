import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { FabricError } from '../core/errors';

const run = promisify(execFile);

/**
 * Isolated working copies for sub-agents: a `git worktree` of the parent's working directory on a
 * branch of its own, made before the child starts and removed when it ends; its changes are
 * committed on the branch first, so the work is kept and the branch is what the result names.
 * Both steps are idempotent (activities run at least once).
 */
export class WorktreeError extends FabricError {
  constructor(
    readonly cwd: string,
    reason: string,
  ) {
    super('WORKTREE_FAILED', `git worktree for ${cwd}: ${reason}`);
  }
}

export interface Worktree {
  /** The child's working directory (the same place inside the worktree as `cwd` in the repository). */
  path: string;
  /** The worktree's root. */
  root: string;
  branch: string;
  /** The commit it started from. */
  base: string;
}

const GIT_IDENTITY = ['-c', 'user.name=fabric-harness', '-c', 'user.email=fabric-harness@localhost'];

async function git(cwd: string, args: string[]): Promise<string> {
  // A bare environment: the worker's variables (API keys) are not git's business.
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/', LANG: 'C' };
  try {
    const { stdout } = await run('git', [...GIT_IDENTITY, ...args], { cwd, env, maxBuffer: 10_000_000 });
    return stdout.trim();
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new WorktreeError(cwd, (e.stderr || e.message).trim().split('\n').slice(-3).join(' '));
  }
}

/** A name safe as a branch and a directory name. */
function slug(name: string): string {
  return name.replace(/[^a-zA-Z0-9._-]/g, '-').replace(/^[-.]+/, '').slice(0, 100) || 'sub-agent';
}

export async function createWorktree(cwd: string, name: string): Promise<Worktree> {
  const top = await git(cwd, ['rev-parse', '--show-toplevel']);
  const rel = path.relative(top, await fs.realpath(cwd));
  const common = path.resolve(top, await git(cwd, ['rev-parse', '--git-common-dir']));
  const root = path.join(common, 'fh-worktrees', slug(name));
  const branch = `fh/${slug(name)}`;
  const exists = await fs.stat(path.join(root, '.git')).then(() => true, () => false);
  if (!exists) {
    const branchExists = await git(top, ['branch', '--list', branch]).then((o) => o.length > 0);
    await git(top, branchExists ? ['worktree', 'add', root, branch] : ['worktree', 'add', '-b', branch, root, 'HEAD']);
  }
  const base = await git(root, ['merge-base', 'HEAD', await git(top, ['rev-parse', 'HEAD'])]);
  return { path: path.join(root, rel), root, branch, base };
}

/**
 * Commits what the child changed on its branch, removes the worktree, and names the commit; with
 * `deleteBranch` the branch goes too (its commit is still named: it stays reachable by hash until git
 * collects it).
 */
export async function finishWorktree(wt: { root: string; branch: string; base: string; cwd: string; deleteBranch?: boolean }): Promise<{ branch: string; commit?: string; branchDeleted?: boolean }> {
  const exists = await fs.stat(path.join(wt.root, '.git')).then(() => true, () => false);
  // Not there: finished already (a retried activity), and the branch is what it left.
  if (exists) {
    await git(wt.root, ['add', '-A']);
    if ((await git(wt.root, ['status', '--porcelain'])).length > 0) {
      await git(wt.root, ['commit', '-q', '-m', `fabric-harness sub-agent work (${wt.branch})`]);
    }
    await git(wt.cwd, ['worktree', 'remove', '--force', wt.root]);
  }
  const listed = (await git(wt.cwd, ['branch', '--list', wt.branch])).length > 0;
  // Gone already: a retried activity deleted it.
  if (!listed) return { branch: wt.branch, ...(wt.deleteBranch ? { branchDeleted: true } : {}) };
  const head = await git(wt.cwd, ['rev-parse', wt.branch]);
  if (wt.deleteBranch) await git(wt.cwd, ['branch', '-D', wt.branch]);
  const deleted = wt.deleteBranch ? { branchDeleted: true } : {};
  return head === wt.base ? { branch: wt.branch, ...deleted } : { branch: wt.branch, commit: head, ...deleted };
}
