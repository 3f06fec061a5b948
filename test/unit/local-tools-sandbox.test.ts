import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createLocalTools } from '../../src/activities/tools/local-tools';
import { resolveToolSandbox, SandboxUnavailableError } from '../../src/activities/tools/tool-env';
import { runToolImplementation } from '../../src/activities/tools/tool-runner';
import { InvalidInputError } from '../../src/core/errors';

/** The file tools are confined to the sandbox after symlinks; bash gets a minimal environment. */
describe('local tools in the sandbox', () => {
  let base: string;
  let root: string;
  let outside: string;
  const ctx = () => ({ cwd: root, signal: new AbortController().signal, heartbeat: () => undefined });
  const run = (name: string, input: unknown, local = createLocalTools()) => runToolImplementation(undefined, name, input, ctx(), { local });

  beforeEach(async () => {
    base = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-sandbox-'));
    root = path.join(base, 'root');
    outside = path.join(base, 'outside');
    await fs.mkdir(root);
    await fs.mkdir(outside);
    await fs.writeFile(path.join(outside, 'secret.txt'), 'TOP SECRET');
    await fs.writeFile(path.join(root, 'inside.txt'), 'hello inside');
  });
  afterEach(() => fs.rm(base, { recursive: true, force: true }));

  const refused = (r: { content: string; isError: boolean }) => {
    expect(r.isError).toBe(true);
    expect(r.content).toMatch(/outside the sandbox directory/);
    expect(r.content).not.toContain('TOP SECRET');
  };

  it('read_file refuses ../, absolute paths, and symlinks (file or directory) leading outside', async () => {
    refused(await run('read_file', { path: '../outside/secret.txt' }));
    refused(await run('read_file', { path: '/etc/passwd' }));
    refused(await run('read_file', { path: path.join(outside, 'secret.txt') }));
    await fs.symlink(path.join(outside, 'secret.txt'), path.join(root, 'link.txt'));
    refused(await run('read_file', { path: 'link.txt' }));
    await fs.symlink(outside, path.join(root, 'outdir'));
    refused(await run('read_file', { path: 'outdir/secret.txt' }));
    refused(await run('read_file', { path: 'outdir/missing.txt' })); // does not reveal what exists outside
  });

  it('write_file refuses writing through a symlinked file, a symlinked parent dir, or into a new file under it', async () => {
    await fs.symlink(path.join(outside, 'secret.txt'), path.join(root, 'link.txt'));
    await fs.symlink(outside, path.join(root, 'outdir'));
    refused(await run('write_file', { path: '../escaped.txt', content: 'x' }));
    refused(await run('write_file', { path: path.join(outside, 'abs.txt'), content: 'x' }));
    refused(await run('write_file', { path: 'link.txt', content: 'overwritten' }));
    refused(await run('write_file', { path: 'outdir/secret.txt', content: 'overwritten' }));
    refused(await run('write_file', { path: 'outdir/new.txt', content: 'planted' }));
    refused(await run('write_file', { path: 'outdir/deep/new.txt', content: 'planted' }));
    await fs.symlink(path.join(outside, 'nothing-yet'), path.join(root, 'dangling'));
    refused(await run('write_file', { path: 'dangling', content: 'planted' }));
    expect((await fs.readdir(outside)).sort()).toEqual(['secret.txt']);
    expect(await fs.readdir(base)).toEqual(expect.not.arrayContaining(['escaped.txt']));
    expect(await fs.readFile(path.join(outside, 'secret.txt'), 'utf8')).toBe('TOP SECRET');
  });

  it('edit_file refuses a symlink leading outside', async () => {
    await fs.symlink(path.join(outside, 'secret.txt'), path.join(root, 'link.txt'));
    refused(await run('edit_file', { path: 'link.txt', old_string: 'TOP', new_string: 'NO' }));
    refused(await run('edit_file', { path: '../outside/secret.txt', old_string: 'TOP', new_string: 'NO' }));
    expect(await fs.readFile(path.join(outside, 'secret.txt'), 'utf8')).toBe('TOP SECRET');
  });

  it('paths and symlinks that stay inside keep working', async () => {
    await fs.mkdir(path.join(root, 'sub'));
    await fs.symlink(path.join(root, 'inside.txt'), path.join(root, 'sub', 'alias.txt'));
    await fs.symlink(path.join(root, 'sub'), path.join(root, 'subdir-link'));
    expect(await run('read_file', { path: 'sub/alias.txt' })).toEqual({ content: 'hello inside', isError: false });
    expect(await run('read_file', { path: path.join(root, 'inside.txt') })).toEqual({ content: 'hello inside', isError: false });
    expect(await run('read_file', { path: 'sub/../inside.txt' })).toEqual({ content: 'hello inside', isError: false });
    expect((await run('write_file', { path: 'subdir-link/new/deep.txt', content: 'made' })).isError).toBe(false);
    expect(await fs.readFile(path.join(root, 'sub/new/deep.txt'), 'utf8')).toBe('made');
    expect((await run('edit_file', { path: 'sub/alias.txt', old_string: 'hello', new_string: 'bye' })).isError).toBe(false);
    expect(await fs.readFile(path.join(root, 'inside.txt'), 'utf8')).toBe('bye inside');
    expect(await run('read_file', { path: 'nope.txt' })).toEqual({ content: 'Error: no such file: nope.txt', isError: true });
  });

  it('bash runs with a minimal environment: no worker secrets, HOME is the sandbox', async () => {
    process.env.FH_TEST_SECRET_VAR = 'sk-worker-secret';
    try {
      const r = await run('bash', { command: 'echo "[$FH_TEST_SECRET_VAR]"; echo "home=$HOME"; env' });
      expect(r.content).toContain('[]');
      expect(r.content).toContain(`home=${root}`);
      expect(r.content).not.toContain('sk-worker-secret');
      const names = r.content.split('--- stdout ---\n')[1].split('\n').filter((l) => /^[A-Z_]+=/.test(l)).map((l) => l.split('=')[0]);
      expect(names.filter((n) => !['PATH', 'HOME', 'LANG', 'TERM', 'TMPDIR', 'PWD', 'SHLVL', '_', 'OLDPWD'].includes(n))).toEqual([]);
    } finally {
      delete process.env.FH_TEST_SECRET_VAR;
    }
  });

  it('bash gets what the worker configures: env values, passed-through names, a wrapper', async () => {
    process.env.FH_TEST_PASS = 'passed-through';
    try {
      const local = createLocalTools(
        resolveToolSandbox({ env: { TOOL_TOKEN: 'tok' }, passEnv: ['FH_TEST_PASS'], wrapper: ['env', 'WRAPPED={cwd}'] }),
      );
      const r = await run('bash', { command: 'echo "$TOOL_TOKEN $FH_TEST_PASS $WRAPPED"' }, local);
      expect(r.content).toContain(`tok passed-through ${root}`);
    } finally {
      delete process.env.FH_TEST_PASS;
    }
  });

  it('a wrapper that is not installed, or a bad option, is refused when the worker starts', () => {
    expect(() => resolveToolSandbox({ wrapper: ['no-such-wrapper-xyz'] })).toThrow(SandboxUnavailableError);
    expect(() => resolveToolSandbox({ passEnv: ['bad name'] } as never)).toThrow(InvalidInputError);
    expect(() => resolveToolSandbox({ wrapper: 'firejail' } as never)).toThrow(InvalidInputError);
    expect(() => resolveToolSandbox({ network: 'yes' } as never)).toThrow(InvalidInputError);
  });
});
