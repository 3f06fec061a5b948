import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { FabricError } from '../../core/errors';
import { ownWorktreeOf, removePlantedLinks, WORKTREES_DIR, worktreeBranch } from './worktree-layout';

export { WORKTREES_DIR, worktreeBranch };

const run = promisify(execFile);

/**
 * Isolated working copies for sub-agents: a `git worktree` of the parent's working directory on a
 * branch of its own, made before the child starts and removed when it ends; its changes are
 * committed on the branch first, so the work is kept and the branch is what the result names.
 * Both steps are idempotent (activities run at least once).
 *
 * A worktree's name is the caller's name (cut short, for people) plus a hash of the full name and its
 * owner: the activity execution that made it (workflow id, run id, activity id) or, inline, one call.
 * So two names that share a long prefix, a session id used again by a new run, and two flow branches
 * of a resumed run all get worktrees and branches of their own; only the same owner coming back (a
 * retried activity) finds its worktree again and reuses it.
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

async function git(cwd: string, args: string[], extraEnv: Record<string, string> = {}): Promise<string> {
  // A bare environment: the worker's variables (API keys) are not git's business.
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/', LANG: 'C', ...extraEnv };
  try {
    const { stdout } = await run('git', [...GIT_IDENTITY, ...args], { cwd, env, maxBuffer: 10_000_000 });
    return stdout.trim();
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new WorktreeError(cwd, (e.stderr || e.message).trim().split('\n').slice(-3).join(' '));
  }
}

/** A name safe as a directory and a ref component, for people to read; the hash makes it unique. */
function slug(name: string): string {
  return name.replace(/[^a-zA-Z0-9._-]/g, '-').replace(/\.{2,}/g, '.').replace(/^[-.]+/, '').slice(0, 80) || 'sub-agent';
}

/**
 * The owner of a worktree made by an activity: its execution. A retry of that activity has the same
 * (workflow id, run id, activity id); a new run of the same workflow id, or another call, does not.
 */
export function activityOwner(info: { workflowExecution?: { workflowId: string; runId: string } | undefined; activityId: string }): string {
  const wf = info.workflowExecution;
  return `activity ${wf ? `${wf.workflowId} ${wf.runId} ` : ''}${info.activityId}`;
}

/** The worktree's id (its directory name): `<slug of name>-<12 hex of sha256(name, owner)>`. */
export function worktreeId(name: string, owner: string): string {
  const hash = createHash('sha256').update(name).update('\0').update(owner).digest('hex').slice(0, 12);
  return `${slug(name)}-${hash}`;
}

/** Whether `cwd` is inside a git work tree (false for a plain directory, or with no git installed). */
export async function isGitWorkTree(cwd: string): Promise<boolean> {
  return git(cwd, ['rev-parse', '--is-inside-work-tree']).then((o) => o === 'true', () => false);
}

/**
 * A commit of `cwd`'s repository as its files are now (tracked and untracked, minus ignored files
 * and `exclude`, paths relative to `cwd`), made through a private index: the user's index, branch and files are untouched.
 * Its dates are HEAD's, so the same files give the same commit (a retried activity agrees).
 */
export async function snapshotCommit(cwd: string, exclude: string[], message: string): Promise<string> {
  const top = await git(cwd, ['rev-parse', '--show-toplevel']);
  const gitDir = path.resolve(top, await git(top, ['rev-parse', '--git-dir']));
  const head = await git(top, ['rev-parse', '--verify', '-q', 'HEAD']).catch(() => '');
  const index = path.join(gitDir, `fh-snapshot-index-${process.pid}-${Math.random().toString(36).slice(2)}`);
  try {
    const env = { GIT_INDEX_FILE: index };
    if (head) await git(top, ['read-tree', head], env);
    const rel = path.relative(top, await fs.realpath(cwd));
    await git(top, ['add', '-A', '--', '.', ...exclude.map((e) => `:(exclude)${path.join(rel, e)}`)], env);
    const tree = await git(top, ['write-tree'], env);
    const when = head ? await git(top, ['log', '-1', '--format=%cI', head]) : '2000-01-01T00:00:00Z';
    const dates = { GIT_AUTHOR_DATE: when, GIT_COMMITTER_DATE: when };
    return await git(top, ['commit-tree', tree, ...(head ? ['-p', head] : []), '-m', message], dates);
  } finally {
    await fs.rm(index, { force: true });
  }
}

/**
 * A worktree of `cwd`'s repository named for `name` and `owner` (see the module comment), on its own
 * branch from `from` (a commit: the branch is set to it) or HEAD. The same name and owner again (a retry)
 * answer the same worktree.
 */
export async function createWorktree(cwd: string, name: string, owner: string, from = 'HEAD'): Promise<Worktree> {
  const top = await git(cwd, ['rev-parse', '--show-toplevel']);
  const rel = path.relative(top, await fs.realpath(cwd));
  const common = path.resolve(top, await git(cwd, ['rev-parse', '--git-common-dir']));
  const id = worktreeId(name, owner);
  const root = path.join(common, WORKTREES_DIR, id);
  const branch = worktreeBranch(id);
  const exists = await fs.stat(path.join(root, '.git')).then(() => true, () => false);
  if (!exists) {
    // An earlier attempt of this owner that died mid-add left its registration: ours (the id is), so drop it.
    await fs.rm(path.join(common, 'worktrees', id), { recursive: true, force: true });
    // Only this owner makes this branch: one that exists is left by its own earlier, interrupted attempt.
    const branchExists = await git(top, ['branch', '--list', branch]).then((o) => o.length > 0);
    const add = from !== 'HEAD' ? ['worktree', 'add', '-B', branch, root, from] : branchExists ? ['worktree', 'add', root, branch] : ['worktree', 'add', '-b', branch, root, 'HEAD'];
    await git(top, add);
  }
  // The branch's reflog directory: confined git appends to it (sandbox-git.ts binds it), so it must exist.
  await fs.mkdir(path.join(common, 'logs', 'refs', 'heads', path.dirname(branch)), { recursive: true });
  const base = from !== 'HEAD' ? from : await git(root, ['merge-base', 'HEAD', await git(top, ['rev-parse', 'HEAD'])]);
  return { path: path.join(root, rel), root, branch, base };
}

/**
 * Commits what the child changed on its branch, removes the worktree, and names the commit; with
 * `deleteBranch` the branch goes too (its commit is still named: it stays reachable by hash until git
 * collects it).
 */
export async function finishWorktree(
  wt: { root: string; branch: string; base: string; cwd: string; deleteBranch?: boolean },
  // Child sessions' branches are fh/session-<id>-<hash>/work (workflows/session/worktree.ts); the others are sub-agents'.
  message = `fabric-harness ${wt.branch.startsWith('fh/session-') ? 'child session' : 'sub-agent'} work (${wt.branch})`,
): Promise<{ branch: string; commit?: string; branchDeleted?: boolean }> {
  const exists = await fs.stat(wt.root).then((s) => s.isDirectory(), () => false);
  // Not there: finished already (a retried activity), and the branch is what it left.
  if (exists) {
    // The worker's own git, unconfined, in a directory the tools wrote: it takes git's files from the
    // worktree's path (worktree-layout.ts), not from its .git file or commondir, and follows no symlink
    // planted among them, so nothing a tool wrote sends it to another repository or outside.
    const own = ownWorktreeOf(wt.root);
    if (!own) throw new WorktreeError(wt.cwd, `${wt.root} is not a worktree of this repository made by fabric-harness (its git admin dir does not name it); remove it with git worktree remove`);
    removePlantedLinks(own);
    const env = { GIT_DIR: own.admin, GIT_COMMON_DIR: own.common, GIT_WORK_TREE: own.top };
    await git(own.top, ['add', '-A'], env);
    if ((await git(own.top, ['status', '--porcelain'], env)).length > 0) {
      await git(own.top, ['commit', '-q', '-m', message], env);
    }
    // `worktree remove` checks the .git file names the admin dir: put back what git wrote (O_EXCL after rm: never through a link).
    await fs.rm(path.join(own.top, '.git'), { recursive: true, force: true });
    await fs.writeFile(path.join(own.top, '.git'), `gitdir: ${path.join(own.admin)}\n`, { flag: 'wx' });
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
