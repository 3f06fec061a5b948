/**
 * git works inside a worktree under bubblewrap (src/activities/git/sandbox-git.ts binds what it needs for that
 * worktree): confined bash can `git status`, `diff`, `log`, `add` and `commit` its own work, the commit is
 * on the worktree's branch from outside, and it still cannot write the main checkout, other branches or
 * other worktrees. Real bubblewrap (/usr/bin/bwrap), real git, worktrees made by worktrees.ts.
 */
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { bash } from '../../src/activities/tools/local-tools';
import { createWorktree, finishWorktree, type Worktree } from '../../src/activities/git/worktrees';

describe('git in a worktree, under bubblewrap', () => {
  let repo: string;
  let wt: Worktree;
  let other: Worktree;
  const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@localhost', ...args], { cwd, encoding: 'utf8' }).trim();
  const run = async (cwd: string, command: string) => {
    const out = await bash({ command }, { cwd, signal: new AbortController().signal, heartbeat: () => undefined });
    return { status: out.split('\n')[0], stdout: out.split('--- stdout ---\n')[1]!.split('\n--- stderr ---')[0]!, all: out };
  };

  beforeAll(async () => {
    repo = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'fh-wt-git-')));
    git(repo, 'init', '-q', '-b', 'main');
    await fs.mkdir(path.join(repo, 'src'));
    await fs.writeFile(path.join(repo, 'README'), 'hello\n');
    await fs.writeFile(path.join(repo, 'src', 'a.txt'), 'a\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', 'first');
    wt = await createWorktree(repo, 'sub-agent-git', 'test owner 1');
    other = await createWorktree(repo, 'sub-agent-other', 'test owner 2');
  });
  afterAll(() => fs.rm(repo, { recursive: true, force: true }));

  it('status, diff, log, add and commit work; the commit is on the branch from outside', async () => {
    const r = await run(
      wt.path,
      [
        'set -e',
        'echo changed >> README',
        'git status --short',
        'git diff --stat',
        'git log --oneline',
        'git add -A',
        'git -c user.name=agent -c user.email=agent@localhost commit -qm "confined commit"',
        'git log --format=%s -1',
      ].join('\n'),
    );
    expect(r.status).toBe('exit code 0');
    expect(r.stdout).toContain(' M README');
    expect(r.stdout).toContain('README | 1 +');
    expect(r.stdout).toMatch(/[0-9a-f]{7} first/);
    expect(r.stdout.trim().split('\n').at(-1)).toBe('confined commit');
    expect(git(repo, 'log', '--format=%s', '-1', wt.branch)).toBe('confined commit');
    expect(git(repo, 'rev-parse', 'main')).toBe(wt.base); // main did not move
  });

  it('works from a directory inside the worktree too (the rest of the checkout is read-only there)', async () => {
    const r = await run(path.join(wt.root, 'src'), 'echo b > b.txt && git add b.txt && git -c user.name=a -c user.email=a@l commit -qm sub && git log --format=%s -1; echo x > ../README; echo "top=$?"');
    expect(r.stdout).toContain('sub\n');
    expect(r.stdout).toContain('top=1');
    expect(git(repo, 'log', '--format=%s', '-1', wt.branch)).toBe('sub');
  });

  it('cannot write the main checkout, another branch, another worktree, or the object store layout', async () => {
    const mainHead = git(repo, 'rev-parse', 'main');
    const otherHead = git(repo, 'rev-parse', other.branch);
    const common = path.join(repo, '.git');
    const r = await run(
      wt.path,
      [
        // The main checkout is not there at all (under /tmp a write lands in the sandbox's private /tmp).
        `cat ${path.join(repo, 'README')}; echo "checkout=$?"`,
        `echo planted > ${path.join(repo, 'README')}`,
        `echo planted > ${path.join(other.root, 'README')}; echo "worktree=$?"`,
        'git update-ref refs/heads/main HEAD 2>&1; echo "main=$?"',
        `git update-ref refs/heads/${other.branch} HEAD; echo "otherbranch=$?"`,
        `echo x > ${path.join(common, 'config')}; echo "config=$?"`,
        `rm -rf ${path.join(common, 'objects', '00')} 2>/dev/null; ln -s /tmp ${path.join(common, 'objects', 'zz')}; echo "objects=$?"`,
        `ls ${path.join(common, 'worktrees')}`,
      ].join('\n'),
    );
    expect(r.stdout).toContain('Read-only file system'); // why update-ref failed
    for (const what of ['checkout', 'worktree', 'main', 'otherbranch', 'config', 'objects']) expect(r.stdout).toMatch(new RegExp(`${what}=[1-9]`));
    expect(r.stdout).not.toContain(path.basename(other.root)); // other worktrees' admin dirs are not there
    expect(await fs.readFile(path.join(repo, 'README'), 'utf8')).toBe('hello\n');
    expect(await fs.readFile(path.join(other.root, 'README'), 'utf8')).toBe('hello\n');
    expect([git(repo, 'rev-parse', 'main'), git(repo, 'rev-parse', other.branch)]).toEqual([mainHead, otherHead]);
    await expect(fs.lstat(path.join(common, 'objects', 'zz'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it("finishing does not follow what a tool planted in its git files: a symlinked reflog, a .git file naming another repository", async () => {
    const base = path.dirname(repo);
    const victim = path.join(await fs.mkdtemp(path.join(base, 'fh-wt-victim-')), 'victim.log');
    await fs.writeFile(victim, 'untouched\n');
    const elsewhere = await fs.mkdtemp(path.join(base, 'fh-wt-elsewhere-'));
    git(elsewhere, 'init', '-q', '-b', 'main');
    const adminOf = (w: Worktree) => path.join(repo, '.git', 'worktrees', path.basename(w.root));
    const plantAndFinish = async (name: string, plant: (w: Worktree) => string) => {
      const w = await createWorktree(repo, name, 'test owner 3');
      const r = await run(w.path, `echo work > work.txt && ${plant(w)} && echo planted`);
      expect(r.stdout).toBe('planted\n');
      const done = await finishWorktree({ ...w, cwd: repo }).catch((err: Error) => err);
      expect(await fs.readFile(victim, 'utf8')).toBe('untouched\n');
      expect(() => git(elsewhere, 'rev-parse', '--verify', '-q', 'HEAD')).toThrow(); // no commit landed there
      if (done instanceof Error) throw done;
      expect(git(repo, 'show', '--name-only', '--format=', done.commit!)).toBe('work.txt');
    };
    await plantAndFinish('planted-log', (w) => `rm -f ${adminOf(w)}/logs/HEAD && ln -s ${victim} ${adminOf(w)}/logs/HEAD`);
    await plantAndFinish('planted-gitdir', () => `printf 'gitdir: ${elsewhere}/.git\\n' > .git`);
    await Promise.all([fs.rm(path.dirname(victim), { recursive: true }), fs.rm(elsewhere, { recursive: true })]);
  });
});
