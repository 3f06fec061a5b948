/**
 * `fh init` without npm: what it writes, what it refuses, and that its tsconfig is the one
 * docs/typescript.md documents (so the scaffold and the doc cannot drift). The scaffold installed from the
 * packed tarball and run to a first reply: test/integration/init.test.ts.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { main } from '../../src/cli/main';
import { tsconfig } from '../../src/cli/init/tsconfig';
import { documentedTsconfig } from '../support/doc-samples';

const ours = require('../../package.json') as { version: string; peerDependencies: Record<string, string> };

async function fh(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (t) => void (out += `${t}\n`), err: (t) => void (err += `${t}\n`) });
  return { code, out, err };
}

describe('fh init', () => {
  let tmp: string;
  beforeEach(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-init-unit-'));
  });
  afterEach(() => fs.rm(tmp, { recursive: true, force: true }));

  it.each(['esm', 'cjs'] as const)('writes the %s tsconfig docs/typescript.md documents, exactly', (kind) => {
    expect(JSON.parse(tsconfig(kind))).toEqual(documentedTsconfig(kind));
  });

  it.each([
    ['esm', [], 'module'],
    ['cjs', ['--cjs'], undefined],
  ] as const)('writes a %s project depending on this SDK version and its Temporal peers', async (_kind, flags, type) => {
    const dir = path.join(tmp, 'My Agent');
    const r = await fh('init', dir, ...flags);
    expect(r).toMatchObject({ code: 0, err: '' });
    expect(r.out.trim().split('\n').length).toBeLessThanOrEqual(5);
    expect(r.out).toContain('npm install');
    const files = (await fs.readdir(dir, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
    expect(files.sort()).toEqual(['.gitignore', 'README.md', 'fake.json', 'package.json', 'scripts/dev.mjs', 'src/agent.test.ts', 'src/agents.ts', 'src/client.ts', 'src/worker.ts', 'tsconfig.json']);
    const pkg = JSON.parse(await fs.readFile(path.join(dir, 'package.json'), 'utf8'));
    expect(pkg.name).toBe('my-agent');
    expect(pkg.type).toBe(type);
    const temporal = Object.fromEntries(Object.entries(ours.peerDependencies).filter(([n]) => n.startsWith('@temporalio/')));
    expect(pkg.dependencies).toEqual({ '@fabric-harness/sdk': `^${ours.version}`, ...temporal });
    expect(Object.keys(pkg.scripts).sort()).toEqual(['build', 'dev', 'start', 'test', 'typecheck']);
    // @types/node 25 rejects Temporal's worker declarations (docs/typescript.md): a major of 24 or less.
    expect(Number(/\d+/.exec(pkg.devDependencies['@types/node'])![0])).toBeLessThanOrEqual(24);
    expect(Object.keys(pkg.devDependencies).sort()).toEqual(['@types/node', 'tsx', 'typescript']);
    expect((await fs.readFile(path.join(dir, 'README.md'), 'utf8')).trimEnd().split('\n')).toHaveLength(5);
  });

  it('refuses a directory that is not empty, naming it and the files it would overwrite, and changes nothing', async () => {
    await fs.writeFile(path.join(tmp, 'package.json'), '{"name":"mine"}');
    await fs.writeFile(path.join(tmp, 'notes.txt'), 'keep');
    const r = await fh('init', tmp);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`fh: ${tmp} is not empty (it would overwrite package.json);`);
    expect(r.err).toContain('--force');
    expect((await fs.readdir(tmp)).sort()).toEqual(['notes.txt', 'package.json']);
    expect(await fs.readFile(path.join(tmp, 'package.json'), 'utf8')).toBe('{"name":"mine"}');
  });

  it('refuses a non-empty directory even when nothing would be overwritten; --force writes and says what it replaced', async () => {
    await fs.writeFile(path.join(tmp, 'notes.txt'), 'keep');
    expect((await fh('init', tmp)).err).toContain('is not empty (none of its files would be overwritten)');
    await fs.writeFile(path.join(tmp, 'README.md'), 'old');
    const forced = await fh('init', tmp, '--force', '--name', '@acme/calc');
    expect(forced).toMatchObject({ code: 0, err: '' });
    expect(forced.out).toContain('Replaced: README.md.');
    expect(JSON.parse(await fs.readFile(path.join(tmp, 'package.json'), 'utf8')).name).toBe('@acme/calc');
    expect(await fs.readFile(path.join(tmp, 'notes.txt'), 'utf8')).toBe('keep');
  });

  it('rejects a name npm would not accept, before writing anything', async () => {
    const r = await fh('init', path.join(tmp, 'x'), '--name', 'Bad Name');
    expect(r).toMatchObject({ code: 2, err: expect.stringContaining("--name 'Bad Name' is not a valid npm package name") });
    expect(await fs.readdir(tmp)).toEqual([]);
  });

  it('has help generated from its options, and a line in `fh --help`', async () => {
    const help = (await fh('init', '--help')).out;
    for (const option of ['--cjs', '--name <package>', '--force']) expect(help).toContain(option);
    expect((await fh('--help')).out).toContain('init [dir] [--cjs]');
  });
});
