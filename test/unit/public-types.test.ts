/**
 * Every type a public signature reaches can be named by a user's code: a `const a = agent({...})` in a
 * project compiled with `declaration: true` writes each type its inferred type mentions, and can only
 * name what the package's `exports` entries export (TS2883: "cannot be named without a reference to
 * 'SessionUsage'", the first user's report). test/support/public-types.ts walks the built .d.ts from
 * every entry's exports through every type they mention; each entry's reachable-types.ts exports what it
 * finds. The doc-samples test compiles the samples with `declaration: true` as well, as an installed
 * package is seen.
 */
import { existsSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import * as path from 'node:path';
import { DeclarationGraph, ENTRIES } from '../support/public-types';

const DIST = path.resolve(__dirname, '../../dist');

describe('public types', () => {
  it('the built package has every entry', () => {
    // `npm test` builds first (pretest); run `npm run build` before this file alone.
    expect(ENTRIES.filter((e) => !existsSync(path.join(DIST, `${e}.d.ts`)))).toEqual([]);
  });

  it('every type reached from an entry is exported by an entry', () => {
    const missing = new DeclarationGraph(DIST).unnamable().map((u) => `${u.file}: ${u.name} (reached from ${u.entry})`);
    expect(missing).toEqual([]);
  });

  it('the declarations name only packages every install brings (dependencies, required peers, Node), not an optional peer', () => {
    // An optional peer (@aws-sdk/client-s3) named in a public .d.ts fails to compile with skipLibCheck:
    // false in every app that does not install it (TS2307), whether or not the app uses it.
    const pkg = JSON.parse(readFileSync(path.resolve(__dirname, '../../package.json'), 'utf8'));
    const optional = new Set(Object.keys(pkg.peerDependenciesMeta ?? {}).filter((n) => pkg.peerDependenciesMeta[n].optional));
    const installed = new Set([...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.peerDependencies ?? {}).filter((n) => !optional.has(n))]);
    const entries = Object.keys(pkg.exports)
      .filter((k) => pkg.exports[k].types)
      .map((k) => pkg.exports[k].types.replace(/^\.\/dist\//, '').replace(/\.d\.ts$/, ''));
    expect(entries).toEqual(expect.arrayContaining([...ENTRIES, 'board/index']));
    const named = new DeclarationGraph(DIST).packagesNamed(entries);
    expect(named.length).toBeGreaterThan(0);
    const builtin = (p: string) => p.startsWith('node:') || builtinModules.includes(p);
    expect(named.filter((n) => !installed.has(n.pkg) && !builtin(n.pkg)).map((n) => `${n.file} names ${n.pkg}`)).toEqual([]);
  });

  it('no published declaration file names an optional peer, reached from an entry or not (every file ships, and a deep import reaches it)', () => {
    const pkg = JSON.parse(readFileSync(path.resolve(__dirname, '../../package.json'), 'utf8'));
    const optional = Object.keys(pkg.peerDependenciesMeta ?? {}).filter((n) => pkg.peerDependenciesMeta[n].optional);
    expect(optional).toEqual(expect.arrayContaining(['openai', '@google/genai', 'redis']));
    const { readdirSync } = jest.requireActual('node:fs') as typeof import('node:fs');
    const files = (readdirSync(DIST, { recursive: true }) as string[]).filter((f) => f.endsWith('.d.ts'));
    expect(files.length).toBeGreaterThan(100);
    const naming = files.flatMap((f) => {
      const text = readFileSync(path.join(DIST, f), 'utf8');
      const specs = [...text.matchAll(/(?:[}\s]from\s*|\bimport\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm)].map((m) => m[1]!);
      return specs.filter((spec) => optional.some((o) => spec === o || spec.startsWith(`${o}/`))).map((spec) => `${f} names ${spec}`);
    });
    expect(naming).toEqual([]);
  });

  it('the walk finds a reached type that is not exported (a declaration made up for the check)', () => {
    const { mkdtempSync, writeFileSync, mkdirSync } = jest.requireActual('node:fs') as typeof import('node:fs');
    const dir = mkdtempSync(path.join(require('node:os').tmpdir(), 'fh-public-types-'));
    mkdirSync(path.join(dir, 'core'));
    writeFileSync(path.join(dir, 'core/session.d.ts'), 'export interface SessionUsage { inputTokens: number }\nexport interface Session { usage(): SessionUsage }\n');
    for (const e of ENTRIES) {
      mkdirSync(path.dirname(path.join(dir, `${e}.d.ts`)), { recursive: true });
      writeFileSync(path.join(dir, `${e}.d.ts`), e === 'index' ? "export type { Session } from './core/session';\n" : 'export {};\n');
    }
    expect(new DeclarationGraph(dir).unnamable()).toEqual([{ file: 'core/session.d.ts', name: 'SessionUsage', entry: 'index' }]);
  });
});
