import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { RepoIntro } from '../../core/enhance/types';
import { Lru } from '../../core/lru';

/**
 * A short introduction to the repository in a working directory, for the prompt enhancer: the
 * package's name and description, the README's first line, the top-level files, detected frameworks,
 * the dominant languages and monorepo workspaces. Cached per directory for 5 minutes, for the
 * INTRO_CACHE_SIZE most recently used directories (a worker serves many sessions' directories). Every
 * part is optional: a directory without package.json or README still gets what there is.
 */
export type { RepoIntro } from '../../core/enhance/types';

export const INTRO_TTL_MS = 5 * 60_000;
/** How many directories' intros are kept (the least recently used goes first); each is a few KB. */
export const INTRO_CACHE_SIZE = 32;
const TOP_LEVEL_LIMIT = 40;
export const BUILD_DIRS = ['node_modules', 'dist', 'build', 'out', '.next', '.nuxt', 'target', 'coverage', '.git', 'vendor', '__pycache__', '.turbo', '.cache', '.venv'];

/** Dependencies that name a framework or platform. */
const FRAMEWORKS: Array<[RegExp, string]> = [
  [/^next$/, 'Next.js'],
  [/^react$/, 'React'],
  [/^electron$/, 'Electron'],
  [/^vite$/, 'Vite'],
  [/^(prisma|@prisma\/client)$/, 'Prisma'],
  [/^@anthropic-ai\/sdk$/, 'Anthropic SDK'],
  [/^@temporalio\//, 'Temporal'],
  [/^express$/, 'Express'],
  [/^vue$/, 'Vue'],
  [/^svelte$/, 'Svelte'],
  [/^@angular\/core$/, 'Angular'],
  [/^jest$/, 'Jest'],
  [/^vitest$/, 'Vitest'],
  [/^typescript$/, 'TypeScript'],
  [/^tailwindcss$/, 'Tailwind CSS'],
];
const MARKER_FILES: Record<string, string> = { 'Cargo.toml': 'Rust (Cargo)', 'go.mod': 'Go modules', 'pyproject.toml': 'Python (pyproject)', 'requirements.txt': 'Python', Gemfile: 'Ruby (Bundler)', 'pom.xml': 'Maven', 'build.gradle': 'Gradle', Dockerfile: 'Docker' };
const LANGUAGES: Record<string, string> = { '.ts': 'TypeScript', '.tsx': 'TypeScript', '.js': 'JavaScript', '.jsx': 'JavaScript', '.mjs': 'JavaScript', '.cjs': 'JavaScript', '.py': 'Python', '.go': 'Go', '.rs': 'Rust', '.java': 'Java', '.rb': 'Ruby', '.kt': 'Kotlin', '.swift': 'Swift', '.c': 'C', '.cpp': 'C++', '.cs': 'C#', '.php': 'PHP' };

let cache = new Lru<string, { at: number; intro: RepoIntro }>(INTRO_CACHE_SIZE, 'repo intro cache size');

export async function repoIntro(cwd: string, now: () => number = Date.now): Promise<RepoIntro> {
  const key = path.resolve(cwd);
  const hit = cache.get(key);
  if (hit && now() - hit.at < INTRO_TTL_MS) return hit.intro;
  if (hit) cache.delete(key);
  const intro = await readIntro(key);
  cache.set(key, { at: now(), intro });
  return intro;
}

/** Forgets cached intros (tests). */
export function clearRepoIntroCache(): void {
  cache = new Lru(INTRO_CACHE_SIZE, 'repo intro cache size');
}

/** How many intros are kept now (tests). */
export function repoIntroCacheSize(): number {
  return cache.size;
}

async function readIntro(dir: string): Promise<RepoIntro> {
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
  const names = entries.map((e) => e.name).sort();
  const pkg = await readJson(path.join(dir, 'package.json'));
  const deps = pkg ? [...Object.keys(asRecord(pkg.dependencies)), ...Object.keys(asRecord(pkg.devDependencies))] : [];
  const frameworks = [...new Set([...FRAMEWORKS.filter(([re]) => deps.some((d) => re.test(d))).map(([, n]) => n), ...names.filter((n) => MARKER_FILES[n]).map((n) => MARKER_FILES[n]!)])];
  const workspaces = pkg ? (Array.isArray(pkg.workspaces) ? pkg.workspaces : asRecord(pkg.workspaces).packages ?? []) : [];
  return {
    ...(typeof pkg?.name === 'string' ? { name: pkg.name } : {}),
    ...(typeof pkg?.description === 'string' ? { description: pkg.description } : {}),
    ...(await readmeLine(dir, names)),
    topLevel: entries
      .filter((e) => !e.name.startsWith('.') || e.name === '.github')
      .map((e) => (e.isDirectory() ? `${e.name}/` : e.name))
      .sort()
      .slice(0, TOP_LEVEL_LIMIT),
    frameworks,
    languages: await dominantLanguages(dir),
    workspaces: (Array.isArray(workspaces) ? workspaces : []).filter((w): w is string => typeof w === 'string'),
  };
}

async function readmeLine(dir: string, names: string[]): Promise<{ readmeLine?: string }> {
  const readme = names.find((n) => /^readme(\.(md|markdown|txt|rst))?$/i.test(n));
  if (!readme) return {};
  const text = await fs.readFile(path.join(dir, readme), 'utf8').catch(() => '');
  const line = text.split('\n').map((l) => l.replace(/^#+\s*/, '').trim()).find((l) => l.length > 0 && !l.startsWith('<') && !l.startsWith('!['));
  return line ? { readmeLine: line.slice(0, 300) } : {};
}

/** The most common source languages in the first few hundred files (build directories skipped). */
async function dominantLanguages(dir: string): Promise<string[]> {
  const counts = new Map<string, number>();
  let seen = 0;
  const walk = async (d: string, depth: number): Promise<void> => {
    if (depth > 3 || seen > 2_000) return;
    const entries = await fs.readdir(d, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      if (seen > 2_000) return;
      if (e.isDirectory()) {
        if (!BUILD_DIRS.includes(e.name) && !e.name.startsWith('.')) await walk(path.join(d, e.name), depth + 1);
      } else {
        seen++;
        const lang = LANGUAGES[path.extname(e.name)];
        if (lang) counts.set(lang, (counts.get(lang) ?? 0) + 1);
      }
    }
  };
  await walk(dir, 0);
  return [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, 3).map(([l]) => l);
}

async function readJson(file: string): Promise<Record<string, any> | undefined> {
  try {
    const v = JSON.parse(await fs.readFile(file, 'utf8'));
    return v && typeof v === 'object' ? v : undefined;
  } catch {
    return undefined;
  }
}

function asRecord(v: unknown): Record<string, any> {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, any>) : {};
}

/** The intro as the text the model reads. */
export function introText(intro: RepoIntro): string {
  const lines = [
    intro.name ? `Package: ${intro.name}${intro.description ? ` — ${intro.description}` : ''}` : undefined,
    intro.readmeLine ? `README: ${intro.readmeLine}` : undefined,
    intro.frameworks.length ? `Frameworks: ${intro.frameworks.join(', ')}` : undefined,
    intro.languages.length ? `Languages: ${intro.languages.join(', ')}` : undefined,
    intro.workspaces.length ? `Workspaces: ${intro.workspaces.join(', ')}` : undefined,
    intro.topLevel.length ? `Top level: ${intro.topLevel.join(' ')}` : undefined,
  ];
  return lines.filter(Boolean).join('\n');
}
