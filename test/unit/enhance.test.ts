/**
 * The prompt enhancer: identifiers from the draft, one ripgrep call (real ripgrep; and a missing one,
 * and one that hangs past the hard timeout), the repo intro (cached 5 minutes), the small-model rewrite
 * against the scripted fake, and the fallback when the model fails.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FakeAnthropicServer, fail, say } from '@fabric-harness/sdk/testing';
import { extractIdentifiers } from '../../src/core/enhance/identifiers';
import { enhancePrompt } from '../../src/activities/enhance/enhance';
import { clearRepoIntroCache, INTRO_CACHE_SIZE, repoIntro, repoIntroCacheSize } from '../../src/activities/enhance/repo-intro';

async function repo(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-enhance-'));
  const write = async (rel: string, text: string) => {
    await fs.mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
    await fs.writeFile(path.join(dir, rel), text);
  };
  await write('package.json', JSON.stringify({ name: 'shop', description: 'A small shop', dependencies: { react: '^19', '@anthropic-ai/sdk': '^1' }, devDependencies: { vite: '^6' }, workspaces: ['packages/*'] }));
  await write('README.md', '# Shop\n\nThe shop front.\n');
  await write('src/cart/CartStore.ts', 'export class CartStore {\n  addItem() {}\n}\n');
  await write('src/checkout.ts', 'import { CartStore } from "./cart/CartStore";\nexport function computeTotal() {}\n');
  await write('src/unrelated.ts', 'export const x = 1;\n');
  // Build output and dependencies mention the symbols too, and are left out.
  await write('node_modules/lib/CartStore.js', 'CartStore');
  await write('dist/checkout.js', 'computeTotal CartStore');
  return dir;
}

describe('identifier extraction', () => {
  it('takes paths, PascalCase, camelCase, snake_case and backticked identifiers, stoplisted, at most 8', () => {
    const draft = 'In src/cart/CartStore.ts make `addItem` dedupe; CartStore and computeTotal share tax_rate. Use `function` and `a + b`, see https://example.com/a/b. Also JavaScript, MAX_ITEMS, oneMore, twoMore, threeMore';
    expect(extractIdentifiers(draft)).toEqual(['src/cart/CartStore.ts', 'addItem', 'computeTotal', 'tax_rate', 'MAX_ITEMS', 'oneMore', 'twoMore', 'threeMore']);
    expect(extractIdentifiers('just words here')).toEqual([]);
  });

  it('takes every backticked path whole, the second as the first (no regex state carried between them)', () => {
    // Next.js route paths: only the backticked form holds the whole path (the brackets end a plain match).
    expect(extractIdentifiers('Move `app/[slug]/page.tsx` and `app/[id]/edit.tsx` to the new layout')).toEqual(['app/[slug]/page.tsx', 'app/[id]/edit.tsx']);
  });
});

describe('enhancePrompt', () => {
  let fake: FakeAnthropicServer;
  let dir: string;
  beforeAll(async () => {
    fake = await FakeAnthropicServer.start();
  });
  beforeEach(async () => {
    dir = await repo();
    clearRepoIntroCache();
  });
  afterAll(async () => {
    await fake.stop();
  });
  const model = () => ({ apiKey: 'k', baseURL: fake.url });

  it('with ripgrep: attaches the intro, the files that mention the symbols (build dirs excluded), and the rewrite', async () => {
    fake.enqueue(say('Make CartStore.addItem in src/cart/CartStore.ts ignore duplicates.'));
    const start = fake.messageRequests().length;
    const r = await enhancePrompt('fix duplicates in CartStore and computeTotal', { cwd: dir, ...model() });
    expect(r.problems).toEqual([]);
    expect(r.rewritten).toBe(true);
    expect(r.prompt).toBe('Make CartStore.addItem in src/cart/CartStore.ts ignore duplicates.');
    expect(r.attached.symbols).toEqual(['CartStore', 'computeTotal']);
    expect(r.attached.files).toEqual(['src/cart/CartStore.ts', 'src/checkout.ts']);
    expect(r.attached.intro).toMatchObject({ name: 'shop', description: 'A small shop', readmeLine: 'Shop', frameworks: ['React', 'Vite', 'Anthropic SDK'], workspaces: ['packages/*'] });
    expect(r.attached.intro!.topLevel).toEqual(expect.arrayContaining(['README.md', 'package.json', 'src/']));
    const req = fake.messageRequests()[start]!.body;
    expect(req.model).toBe('claude-haiku-4-5');
    const sent = JSON.stringify(req.messages);
    expect(sent).toContain('src/checkout.ts');
    expect(sent).toContain('Frameworks: React, Vite, Anthropic SDK');
  });

  it('without ripgrep: no files from the search, a problem named, still a rewritten prompt', async () => {
    fake.enqueue(say('rewritten'));
    const r = await enhancePrompt('fix CartStore', { cwd: dir, ...model(), rgPath: path.join(dir, 'no-such-rg') });
    expect(r.prompt).toBe('rewritten');
    expect(r.attached.files).toEqual([]);
    expect(r.problems).toEqual([{ step: 'search', message: expect.stringMatching(/ripgrep \(rg\) is not installed/) }]);
  });

  it('a ripgrep that hangs is killed at the hard timeout and the enhancer still answers', async () => {
    const rg = path.join(dir, 'slow-rg');
    await fs.writeFile(rg, '#!/bin/sh\nsleep 30\n', { mode: 0o755 });
    fake.enqueue(say('rewritten anyway'));
    const r = await enhancePrompt('fix CartStore', { cwd: dir, ...model(), rgPath: rg });
    expect(r.prompt).toBe('rewritten anyway');
    expect(r.problems).toEqual([{ step: 'search', message: 'ripgrep did not finish within 1500 ms' }]);
  }, 10_000);

  it('when the model fails: the draft with the context appended', async () => {
    fake.enqueue(fail(401, { message: 'bad key' }));
    const r = await enhancePrompt('fix computeTotal', { cwd: dir, ...model() });
    expect(r.rewritten).toBe(false);
    expect(r.prompt).toBe('fix computeTotal\n\nRelevant files: src/checkout.ts\nSymbols: computeTotal');
    expect(r.problems.map((p) => p.step)).toEqual(['model']);
  });

  it('bad input is a typed error naming the field', async () => {
    await expect(enhancePrompt('  ', { cwd: dir })).rejects.toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('draft') });
    await expect(enhancePrompt('x', { cwd: dir, bogus: 1 } as never)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });

  it('the repo intro is cached per directory for 5 minutes', async () => {
    let now = 1_000_000;
    const first = await repoIntro(dir, () => now);
    await fs.writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'renamed' }));
    now += 4 * 60_000;
    expect((await repoIntro(dir, () => now)).name).toBe(first.name);
    now += 2 * 60_000;
    expect((await repoIntro(dir, () => now)).name).toBe('renamed');
  });

  it(`the repo intro cache keeps at most ${INTRO_CACHE_SIZE} directories, the least recently used dropped first`, async () => {
    const root = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-enhance-many-'));
    const dirs: string[] = [];
    for (let i = 0; i < INTRO_CACHE_SIZE + 8; i++) {
      const d = path.join(root, `r${i}`);
      await fs.mkdir(d);
      await fs.writeFile(path.join(d, 'package.json'), JSON.stringify({ name: `before-${i}` }));
      dirs.push(d);
    }
    for (const d of dirs) await repoIntro(d);
    expect(repoIntroCacheSize()).toBe(INTRO_CACHE_SIZE);
    for (const [i, d] of dirs.entries()) await fs.writeFile(path.join(d, 'package.json'), JSON.stringify({ name: `after-${i}` }));
    // The newest is still cached (within its 5 minutes); the oldest was dropped and is read again.
    expect((await repoIntro(dirs.at(-1)!)).name).toBe(`before-${dirs.length - 1}`);
    expect((await repoIntro(dirs[0]!)).name).toBe('after-0');
    expect(repoIntroCacheSize()).toBe(INTRO_CACHE_SIZE);
  });
});
