/**
 * A worktree belongs to the activity execution that made it: names that share a long prefix, a session
 * id used again by a new run, and flow branches with long node ids each get their own worktree and
 * branch; only a retry of the same activity (same workflow id, run id, activity id) finds it again.
 */
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { Info } from '@temporalio/activity';
import { createActivities } from '../../src/activities/create-activities';
import { createFlowActivities } from '../../src/activities/flow-activities';
import { MemoryTranscriptStore } from '../../src/activities/stores/transcript-store';
import type { WorktreePayload } from '../../src/wire/activity-contract';
import { createWorktree, worktreeId } from '../../src/activities/git/worktrees';
import { ownWorktreeOf } from '../../src/activities/git/worktree-layout';

/** Runs `fn` as an activity of workflow `workflowId`, run `runId` (activity id `activityId`, attempt `attempt`). */
function asActivity<T>(who: { workflowId: string; runId: string; activityId?: string; attempt?: number }, fn: () => Promise<T>): Promise<T> {
  const info: Partial<Info> = { workflowExecution: { workflowId: who.workflowId, runId: who.runId }, activityId: who.activityId ?? '1', attempt: who.attempt ?? 1 };
  return new MockActivityEnvironment(info).run(fn) as Promise<T>;
}

describe('worktree names are unique per owner; only a retry reuses one', () => {
  let repo: string;
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@localhost', ...args], { cwd: repo, encoding: 'utf8' }).trim();
  const acts = createActivities({ connection: { apiKey: 'k', baseURL: 'http://127.0.0.1:9' }, store: new MemoryTranscriptStore(), tools: [] });
  const flows = createFlowActivities(new MemoryTranscriptStore());

  beforeEach(async () => {
    repo = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'fh-wt-names-')));
    git('init', '-q', '-b', 'main');
    await fs.writeFile(path.join(repo, 'a.txt'), 'a\n');
    git('add', '.');
    git('commit', '-qm', 'first');
  });
  afterEach(() => fs.rm(repo, { recursive: true, force: true }));

  it('two session ids that share their first 100 characters get different worktrees and branches', async () => {
    const prefix = `session-${'x'.repeat(100)}`;
    const one = await asActivity({ workflowId: `${prefix}-one`, runId: 'r1' }, () => acts.fhWorktreeCreate({ cwd: repo, name: `${prefix}-one` }));
    const two = await asActivity({ workflowId: `${prefix}-two`, runId: 'r2' }, () => acts.fhWorktreeCreate({ cwd: repo, name: `${prefix}-two` }));
    expect(two.root).not.toBe(one.root);
    expect(two.branch).not.toBe(one.branch);
    expect(one.branch).toMatch(/^fh\/session-x+-[0-9a-f]{12}\/work$/);
  });

  it('a session id used again by a new run does not start from the kept branch of the old one', async () => {
    const name = 'session-reused';
    const old = await asActivity({ workflowId: 'reused', runId: 'run-1' }, () => acts.fhWorktreeCreate({ cwd: repo, name }));
    await fs.writeFile(path.join(old.path, 'old-work.txt'), 'the old run\n');
    const kept = await asActivity({ workflowId: 'reused', runId: 'run-1' }, () => acts.fhWorktreeFinish({ ...old, cwd: repo }));
    expect(kept.commit).toMatch(/^[0-9a-f]{40}$/);
    const fresh = await asActivity({ workflowId: 'reused', runId: 'run-2' }, () => acts.fhWorktreeCreate({ cwd: repo, name }));
    expect(fresh.branch).not.toBe(old.branch);
    expect(fresh.base).toBe(git('rev-parse', 'main'));
    await expect(fs.stat(path.join(fresh.path, 'old-work.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(git('rev-parse', old.branch)).toBe(kept.commit); // the old run's work is still on its own branch
  });

  it('two flow branches with long node ids, and the same branch of a resumed run, get their own worktrees', async () => {
    const run = `flow-run-${'n'.repeat(90)}`;
    const made = async (workflowId: string, runId: string) => {
      const dir = await asActivity({ workflowId, runId }, () => flows.fhFlowBranchWorkDir({ workDir: repo, name: workflowId }));
      if (dir.kind !== 'worktree') throw new Error(`expected a worktree, got ${JSON.stringify(dir)}`);
      return dir;
    };
    const a = await made(`${run}-branch-review-the-security-model`, 'ra');
    const b = await made(`${run}-branch-review-the-performance-model`, 'rb');
    const resumed = await made(`${run}-branch-review-the-security-model`, 'ra-resumed');
    expect(new Set([a.root, b.root, resumed.root]).size).toBe(3);
    expect(new Set([a.branch, b.branch, resumed.branch]).size).toBe(3);
    // One finishing does not remove the other's worktree.
    await asActivity({ workflowId: 'x', runId: 'ra' }, () => flows.fhFlowBranchWorkDirDone({ workDir: repo, path: a.path, root: a.root, branch: a.branch, base: a.base }));
    expect((await fs.stat(path.join(b.root, 'a.txt'))).isFile()).toBe(true);
    expect((await fs.stat(path.join(resumed.root, 'a.txt'))).isFile()).toBe(true);
  });

  it('a retry of the same activity finds its worktree again, work included', async () => {
    const who = { workflowId: 'parent', runId: 'run-1', activityId: '7' };
    const first: WorktreePayload = await asActivity({ ...who, attempt: 1 }, () => acts.fhWorktreeCreate({ cwd: repo, name: 'child-1' }));
    await fs.writeFile(path.join(first.path, 'progress.txt'), 'made before the retry\n');
    const again: WorktreePayload = await asActivity({ ...who, attempt: 2 }, () => acts.fhWorktreeCreate({ cwd: repo, name: 'child-1' }));
    expect(again).toEqual(first);
    expect(await fs.readFile(path.join(again.path, 'progress.txt'), 'utf8')).toBe('made before the retry\n');
    // Another call of the same run (another activity id) with the same name is another worktree.
    const other = await asActivity({ ...who, activityId: '8' }, () => acts.fhWorktreeCreate({ cwd: repo, name: 'child-1' }));
    expect(other.root).not.toBe(first.root);
  });

  it('a retry after an attempt that died part-way (registered, its directory gone) makes the worktree again', async () => {
    const first = await createWorktree(repo, 'child-2', 'owner');
    await fs.rm(first.root, { recursive: true, force: true });
    const wt = await createWorktree(repo, 'child-2', 'owner');
    expect(wt).toEqual(first);
    expect(git('-C', wt.root, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe(wt.branch);
    // Its admin dir has the name the sandbox binds.
    expect(ownWorktreeOf(wt.root)?.admin).toBe(path.join(repo, '.git', 'worktrees', worktreeId('child-2', 'owner')));
  });
});
