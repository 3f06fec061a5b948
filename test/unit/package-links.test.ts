/**
 * The README and docs/ as an installed package holds them: every relative link (to a page, an anchor in it,
 * or an image) resolves to a file `npm pack` puts in the tarball, so the links work in node_modules and on
 * the registry's page alike (0.6.6 shipped no docs/, and every `docs/*.md` link was broken there).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

function packedFiles(): Set<string> {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  return new Set((JSON.parse(out) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((f) => f.path));
}

/** `[text](target)` and `![alt](target)` links that are not absolute URLs or same-page anchors. */
function relativeLinks(markdown: string): string[] {
  return [...markdown.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((t) => !/^[a-z]+:/i.test(t) && !t.startsWith('#'));
}

describe('links in the packed README and docs', () => {
  const files = packedFiles();
  const pages = [...files].filter((f) => f === 'README.md' || (f.startsWith('docs/') && f.endsWith('.md')));

  it('the package holds the README, the docs and their images', () => {
    expect(pages).toEqual(expect.arrayContaining(['README.md', 'docs/agents.md', 'docs/sessions.md', 'docs/architecture.md']));
    expect(files.has('docs/images/board.png')).toBe(true);
  });

  it('every page in the package has its links in the package', () => {
    const broken = pages.flatMap((page) =>
      relativeLinks(readFileSync(path.join(ROOT, page), 'utf8'))
        .map((link) => path.posix.normalize(path.posix.join(path.posix.dirname(page), link.split('#')[0]!)))
        .filter((target) => !files.has(target))
        .map((target) => `${page} -> ${target}`),
    );
    expect(broken).toEqual([]);
  });
});
