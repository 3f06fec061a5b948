/**
 * Child sessions in their own git worktree, on the real dev server with a real git repository: a fork
 * started with isolation 'worktree' runs its tools in a worktree of the parent's working directory on a
 * new branch; what its bash writes is not in the parent's directory; deleting it commits the work on
 * the branch and removes the worktree (the branch stays unless asked).
 */
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startSession } from '@fabric-harness/sdk/client';
import { callTools, FakeAnthropicServer, say } from '@fabric-harness/sdk/testing';
import { worktreeSession } from '../fixtures/ecosystem-agents';
import { startTestWorker, type TestWorker } from '../support/test-worker';

const exists = (p: string) => fs.stat(p).then(() => true, () => false);

describe('child sessions with isolation: worktree', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;
  let dir: string;
  let git: (...args: string[]) => string;

  beforeAll(async () => {
    fake = await FakeAnthropicServer.start();
    w = await startTestWorker({ name: 'child-sessions', baseURL: fake.url });
  });
  beforeEach(async () => {
    dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'fh-child-')));
    git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: dir, encoding: 'utf8' }).trim();
    git('init', '-q', '-b', 'main');
    await fs.writeFile(path.join(dir, 'README'), 'base\n');
    git('add', '-A');
    git('commit', '-q', '-m', 'base');
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  it("the child's bash writes in its own worktree; deleting it keeps the commit on its branch and removes the worktree", async () => {
    const parent = await startSession(w.client, worktreeSession, { taskQueue: w.taskQueue, title: 'Parent', settings: { workingDirectory: dir } });
    fake.enqueue(say('ready'));
    expect(await parent.prompt('hello')).toBe('ready');

    const child = await parent.fork({ atMessage: 1, isolation: 'worktree' });
    // git works there, under bubblewrap (its admin dir in the repository's .git is bound for it).
    fake.enqueue(callTools({ name: 'bash', input: { command: 'echo from-child > child.txt && ls && git status --short' } }), say('written'));
    const start = fake.messageRequests().length;
    expect(await child.prompt('write child.txt')).toBe('written');

    // The branch is named where the child is described; its tools ran in the worktree.
    const info = await child.info();
    const wt = info.worktree!;
    expect(wt.branch).toMatch(new RegExp(`^fh/session-${child.id.replace(/[^a-zA-Z0-9._-]/g, '-').slice(0, 72)}[^/]*-[0-9a-f]{12}/work$`));
    expect(info.settings.workingDirectory).toBe(wt.path);
    expect(wt.path).not.toBe(dir);
    expect(await fs.readFile(path.join(wt.path, 'child.txt'), 'utf8')).toBe('from-child\n');
    // The child's bash ran in its own checkout (the parent's files, and its new one)...
    const toolResult = JSON.stringify(fake.messageRequests()[start + 1]!.body.messages.at(-1));
    expect(toolResult).toContain('README\\nchild.txt');
    expect(toolResult).toContain('exit code 0');
    expect(toolResult).toContain('?? child.txt');
    // ...and the parent's directory does not have it.
    expect(await exists(path.join(dir, 'child.txt'))).toBe(false);
    expect(git('worktree', 'list')).toContain(wt.root);

    await child.delete();
    expect(await exists(wt.root)).toBe(false);
    expect(git('worktree', 'list')).not.toContain(wt.root);
    // The work is committed on the branch, which is kept; the parent's checkout is untouched.
    expect(git('show', `${wt.branch}:child.txt`)).toBe('from-child');
    expect(git('rev-parse', '--abbrev-ref', 'HEAD')).toBe('main');
    expect(await exists(path.join(dir, 'child.txt'))).toBe(false);
    // The parent session goes on in its own directory.
    fake.enqueue(say('still here'));
    expect(await parent.prompt('are you there?')).toBe('still here');
    await parent.end();
  });

  it('end({ deleteBranch }) removes the branch too and answers with the worktree as it left it; keepWorktree leaves the directory', async () => {
    const parent = await startSession(w.client, worktreeSession, { taskQueue: w.taskQueue, title: 'Parent', settings: { workingDirectory: dir } });
    fake.enqueue(say('ready'));
    await parent.prompt('hello');

    const gone = await parent.fork({ atMessage: 1, isolation: 'worktree' });
    fake.enqueue(callTools({ name: 'write_file', input: { path: 'a.txt', content: 'a' } }), say('ok'));
    await gone.prompt('write a.txt');
    const ended = await gone.end({ deleteBranch: true });
    expect(ended.worktree).toMatchObject({ branch: expect.stringMatching(/^fh\/session-.*-[0-9a-f]{12}\/work$/), removed: true, branchDeleted: true });
    expect(ended.worktree!.branch).toContain(gone.id.slice(0, 40));
    expect(ended.worktree!.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(git('branch', '--list', ended.worktree!.branch)).toBe('');
    expect(await exists(ended.worktree!.root)).toBe(false);

    const kept = await parent.fork({ atMessage: 1, isolation: 'worktree' });
    fake.enqueue(say('nothing to do'));
    await kept.prompt('look around');
    const left = await kept.end({ keepWorktree: true });
    expect(left.worktree!.removed).toBeUndefined();
    expect(await exists(path.join(left.worktree!.root, 'README'))).toBe(true);
    await expect(parent.fork({ atMessage: 1, isolation: 'nope' as 'worktree' })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await parent.end();
  });
});
