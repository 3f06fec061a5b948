/**
 * The shape of src/, checked over its relative-import graph (type-only imports count: they still tie the
 * files' meaning). docs/architecture.md draws the same layers.
 *   1. No import circles.
 *   2. Imports only run downward: each top-level folder names the folders it may import.
 *   3. No file over MAX_LINES, except the allow-list below, each with its reason.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

const SRC = path.resolve(__dirname, '../../src');
const MAX_LINES = 400;

/** What each part of src/ may import (besides itself). Everything not listed is an upward arrow. */
const MAY_IMPORT: Record<string, readonly string[]> = {
  core: [],
  wire: ['core'],
  workflows: ['wire', 'core'],
  activities: ['wire', 'core'],
  testing: ['wire', 'core'],
  inline: ['activities', 'wire', 'core'],
  client: ['activities', 'wire', 'core'],
  worker: ['client', 'workflows', 'activities', 'wire', 'core'],
  audit: ['worker', 'client', 'workflows', 'activities', 'wire', 'core'],
  board: ['audit', 'client', 'activities', 'wire', 'core'],
  cli: ['board', 'audit', 'worker', 'client', 'inline', 'testing', 'workflows', 'activities', 'wire', 'core'],
  // The package doors: `@fabric-harness/sdk` and its workflow-bundle twin, and `/strict`.
  'index.ts': ['inline', 'core'],
  'workflow-entry.ts': ['core'],
  strict: ['inline', 'core'],
};

/** Single upward arrows kept on purpose, each with its reason. */
const UPWARD_ALLOWED: Record<string, string> = {
  'client/index.ts -> audit/index.ts':
    'deprecated re-exports of the history tools for 0.4.0 users (replay loads the worker lazily, inside replayHistory); removed in 0.6.0',
};

/** Files allowed over MAX_LINES, with the reason. */
const LONG_FILES: Record<string, string> = {
  'testing/anthropic/fake-anthropic.ts': 'the fake server class: its HTTP handler and the replies it builds share per-server state (ids, prompt cache, clock); its script language and validation are their own modules',
  'board/page/script.ts': 'the page script: one self-contained function served as its own source text, so it cannot import',
};

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...sourceFiles(p));
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

const files = sourceFiles(SRC);
const known = new Set(files);
const rel = (f: string) => path.relative(SRC, f).split(path.sep).join('/');
const part = (f: string) => rel(f).split('/')[0];

function resolveImport(from: string, spec: string): string | undefined {
  const base = path.resolve(path.dirname(from), spec);
  return [base, `${base}.ts`, path.join(base, 'index.ts')].find((c) => known.has(c));
}

const IMPORT = /(?:import|export)\s[^;]*?from\s+['"](\.[^'"]+)['"]|require\(\s*['"](\.[^'"]+)['"]\s*\)|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;
const edges = new Map<string, string[]>();
for (const f of files) {
  const targets = new Set<string>();
  for (const m of fs.readFileSync(f, 'utf8').matchAll(IMPORT)) {
    const to = resolveImport(f, m[1] ?? m[2] ?? m[3]);
    if (to && to !== f) targets.add(to);
  }
  edges.set(f, [...targets]);
}

/** Strongly connected components of more than one file (Tarjan). */
function circles(): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v)!) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(rel(w));
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const f of files) if (!index.has(f)) visit(f);
  return found;
}

describe('the structure of src/', () => {
  it('has no import circles', () => {
    expect(circles()).toEqual([]);
  });

  it('imports only downward', () => {
    const upward: string[] = [];
    for (const [from, targets] of edges) {
      const a = part(from);
      for (const to of targets) {
        const b = part(to);
        if (a === b) continue;
        const edge = `${rel(from)} -> ${rel(to)}`;
        if (!(MAY_IMPORT[a] ?? []).includes(b) && !(edge in UPWARD_ALLOWED)) upward.push(edge);
      }
    }
    expect(upward).toEqual([]);
  });

  it('knows every part of src/', () => {
    expect([...new Set(files.map(part))].filter((p) => !(p in MAY_IMPORT))).toEqual([]);
  });

  it(`has no file over ${MAX_LINES} lines outside the allow-list`, () => {
    const lines = (f: string) => fs.readFileSync(f, 'utf8').split('\n').length - 1;
    const long = files.filter((f) => lines(f) > MAX_LINES && !(rel(f) in LONG_FILES)).map((f) => `${rel(f)}: ${lines(f)} lines`);
    expect(long).toEqual([]);
  });

  it('keeps the allow-lists current (every entry still needed)', () => {
    const stale = Object.keys(LONG_FILES).filter((f) => !known.has(path.join(SRC, f)) || fs.readFileSync(path.join(SRC, f), 'utf8').split('\n').length - 1 <= MAX_LINES);
    const unusedEdges = Object.keys(UPWARD_ALLOWED).filter((edge) => {
      const [from, to] = edge.split(' -> ');
      return !(edges.get(path.join(SRC, from)) ?? []).includes(path.join(SRC, to));
    });
    expect({ stale, unusedEdges }).toEqual({ stale: [], unusedEdges: [] });
  });
});
