/**
 * The activities that run git heartbeat while git works: workflows give them a heartbeat timeout (10 s),
 * so a worktree of a large repository on a live worker must not be taken for a dead worker (timed out
 * and retried). git is made slow here by a wrapper first on PATH (each git command waits 0.5 s).
 */
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createActivities } from '../../src/activities/create-activities';
import { createFlowActivities } from '../../src/activities/flow-activities';
import { MemoryTranscriptStore } from '../../src/activities/stores/transcript-store';

async function heartbeatsOf<T>(run: () => Promise<T>): Promise<{ value: T; beats: number }> {
  const env = new MockActivityEnvironment();
  let beats = 0;
  env.on('heartbeat', () => beats++);
  const value = (await env.run(run)) as T;
  return { value, beats };
}

describe('worktree activities heartbeat while git works', () => {
  const PATH = process.env.PATH;
  let repo: string;

  beforeAll(async () => {
    const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    const bin = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-slow-git-'));
    await fs.writeFile(path.join(bin, 'git'), `#!/bin/sh\nsleep 0.5\nexec ${realGit} "$@"\n`, { mode: 0o755 });
    repo = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-hb-repo-'));
    const git = (...args: string[]) => execFileSync(realGit, ['-c', 'user.name=t', '-c', 'user.email=t@localhost', ...args], { cwd: repo });
    git('init', '-q', '-b', 'main');
    await fs.writeFile(path.join(repo, 'a.txt'), 'a\n');
    git('add', '.');
    git('commit', '-qm', 'first');
    process.env.PATH = `${bin}:${PATH}`;
  });
  afterAll(() => {
    process.env.PATH = PATH;
  });

  it("a sub-agent's or child session's worktree: create and finish", async () => {
    const acts = createActivities({ connection: { apiKey: 'k', baseURL: 'http://127.0.0.1:9' }, store: new MemoryTranscriptStore(), tools: [] });
    const created = await heartbeatsOf(() => acts.fhWorktreeCreate({ cwd: repo, name: 'child-1' }));
    await fs.writeFile(path.join(created.value.path, 'b.txt'), 'b\n');
    const finished = await heartbeatsOf(() => acts.fhWorktreeFinish({ ...created.value, cwd: repo }));
    expect(finished.value.commit).toMatch(/^[0-9a-f]{40}$/);
    expect([created.beats >= 1, finished.beats >= 1]).toEqual([true, true]);
  }, 60_000);

  it("a flow branch's work dir: made and done", async () => {
    const acts = createFlowActivities(new MemoryTranscriptStore());
    const made = await heartbeatsOf(() => acts.fhFlowBranchWorkDir({ workDir: repo, name: 'branch-1' }));
    const wt = made.value;
    if (wt.kind !== 'worktree') throw new Error(`expected a worktree, got ${JSON.stringify(wt)}`);
    const done = await heartbeatsOf(() => acts.fhFlowBranchWorkDirDone({ path: wt.path, root: wt.root, branch: wt.branch, base: wt.base, workDir: repo }));
    expect(done.value.branch).toBe(wt.branch);
    expect([made.beats >= 1, done.beats >= 1]).toEqual([true, true]);
  }, 60_000);
});
