/**
 * The code samples of README.md and docs/*.md, gathered into small projects that are compiled with
 * `tsc` against the built package (dist/) and run with Node, so a sample that stops compiling or
 * running fails a test that names the block, the Markdown line and the compiler/runtime error.
 *
 * Every ```ts / ```js block carries an annotation (an HTML comment just before it, invisible on GitHub):
 *
 *   <!-- sample: project=calc-cjs,calc-esm -->                  a file of one or more projects; its first
 *                                                              line `// name.ts` is its file name (or file=)
 *   <!-- sample: project=calc-cjs role=main runs-with=fake+temporal stdout="Result" -->
 *        role=module (default: compiled only) | main (run to completion, exit 0, in document order) |
 *             worker (started before the mains, stopped after them; must not exit early)
 *        runs-with=fake (ANTHROPIC_* point at a fake Anthropic server) +temporal (TEMPORAL_ADDRESS /
 *             TEMPORAL_NAMESPACE point at the integration run's dev server) | none
 *        stdout="…" a substring the main must print
 *   <!-- fragment: project=calc-cjs reason="why this is not a whole file" prelude="declarations" -->
 *        a deliberate fragment: compiled in its project after the prelude, never run
 *   <!-- seed: test/seeds/long-running.ts -->                    a product-doc sample kept verbatim in
 *        test/seeds/ (compiled by `npm run typecheck`, run by test/integration/seeds.test.ts)
 *
 * A project named `*-esm` is an ES module package ("type": "module": top-level await, import.meta.url,
 * `./x.js` imports); any other is CommonJS. Each compiles with the tsconfig docs/typescript.md gives for
 * its module system (see documentedTsconfig); a README sample that can be written for both is in a
 * project of each (`project=calc-cjs,calc-esm`). Projects live in test/.doc-samples/<project>/ with the package
 * linked as node_modules/@fabric-harness/sdk → this repository (its package.json exports → dist/).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promises as fs, readdirSync, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { codeBlocks, type CodeBlock } from './markdown-blocks';
import { packTarball } from './packed-package';

export const ROOT = path.resolve(__dirname, '../..');
export const SAMPLES_DIR = path.join(ROOT, 'test/.doc-samples');

export type Role = 'module' | 'main' | 'worker';

export interface SampleFile {
  project: string;
  /** File name inside the project, e.g. `worker.ts`. */
  name: string;
  role: Role;
  runsWith: { fake: boolean; temporal: boolean };
  stdout?: string;
  /** Lines put before the block (a fragment's prelude). */
  prelude: string[];
  block: CodeBlock;
  kind: 'sample' | 'fragment';
}

export interface Project {
  name: string;
  esm: boolean;
  files: SampleFile[];
}

export interface Collected {
  projects: Map<string, Project>;
  seeds: CodeBlock[];
  bash: CodeBlock[];
  /** Blocks that break the rules, each a readable message naming the block. */
  problems: string[];
}

const CODE_LANGS = new Set(['ts', 'typescript', 'js', 'javascript', 'mts', 'cts', 'mjs', 'cjs']);
const ROLES: Role[] = ['module', 'main', 'worker'];

export const where = (b: CodeBlock): string => `${b.file}:${b.line}`;

/** The Markdown files whose samples are checked: README.md and docs/*.md. */
export function docFiles(): string[] {
  const docs = readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort();
  return ['README.md', ...docs.map((f) => `docs/${f}`)];
}

/** Synchronous, so jest can make one test per project. */
export function collectSamples(files: string[]): Collected {
  const out: Collected = { projects: new Map(), seeds: [], bash: [], problems: [] };
  for (const file of files) {
    for (const block of codeBlocks(readFileSync(path.join(ROOT, file), 'utf8'), file)) {
      if (block.lang === 'bash' || block.lang === 'sh') {
        if (block.annotation?.kind !== 'fragment') out.bash.push(block);
        continue;
      }
      if (!CODE_LANGS.has(block.lang)) continue;
      const a = block.annotation;
      if (!a || !['sample', 'fragment', 'seed'].includes(a.kind)) {
        out.problems.push(
          `${where(block)}: a \`\`\`${block.lang} block without an annotation. Put one of ` +
            '`<!-- sample: project=… -->`, `<!-- fragment: project=… reason="…" -->` or `<!-- seed: test/seeds/… -->` ' +
            'on the line before it (see test/support/doc-samples.ts).',
        );
        continue;
      }
      if (a.kind === 'seed') {
        out.seeds.push(block);
        continue;
      }
      const projects = (a.attrs.project ?? '').split(',').filter(Boolean);
      if (projects.length === 0) {
        out.problems.push(`${where(block)}: ${a.raw} names no project=`);
        continue;
      }
      if (a.kind === 'fragment' && !a.attrs.reason) {
        out.problems.push(`${where(block)}: a fragment must say why it is one: ${a.raw} has no reason="…"`);
        continue;
      }
      const role = (a.attrs.role ?? 'module') as Role;
      if (!ROLES.includes(role) || (a.kind === 'fragment' && role !== 'module')) {
        out.problems.push(`${where(block)}: role=${a.attrs.role} is not one of ${ROLES.join(', ')} (fragments are never run)`);
        continue;
      }
      const name =
        a.kind === 'fragment'
          ? `fragment-${path.basename(file, '.md').toLowerCase()}-${block.line}.ts`
          : (a.attrs.file ?? /^\/\/ ([\w.-]+\.(?:ts|mts|cts|js|mjs|cjs))\b/.exec(block.code)?.[1]);
      if (!name) {
        out.problems.push(`${where(block)}: a sample needs a file name: a first line \`// name.ts\` or file=name.ts in ${a.raw}`);
        continue;
      }
      const runs = (a.attrs['runs-with'] ?? 'none').split('+');
      for (const projectName of projects) {
        const project = out.projects.get(projectName) ?? { name: projectName, esm: projectName.endsWith('-esm'), files: [] };
        out.projects.set(projectName, project);
        if (project.files.some((f) => f.name === name)) {
          out.problems.push(`${where(block)}: project ${projectName} already has a file ${name}`);
          continue;
        }
        project.files.push({
          project: projectName,
          name,
          role,
          runsWith: { fake: runs.includes('fake'), temporal: runs.includes('temporal') },
          stdout: a.attrs.stdout,
          prelude: a.attrs.prelude ? a.attrs.prelude.split(';').map((s) => s.trim()).filter(Boolean).map((s) => `${s};`) : [],
          block,
          kind: a.kind as 'sample' | 'fragment',
        });
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Writing and compiling a project
// ---------------------------------------------------------------------------------------------------

const projectDir = (p: Project): string => path.join(SAMPLES_DIR, p.name);
const emitted = (f: SampleFile): string => f.name.replace(/\.ts$/, '.js').replace(/\.mts$/, '.mjs').replace(/\.cts$/, '.cjs');

let installed: Promise<void> | undefined;

/**
 * The package as `npm pack` makes it, unpacked where the sample projects import it from
 * (test/.doc-samples/node_modules/@fabric-harness/sdk): the samples compile and run against the packed
 * files and nothing else of this repository (its dependencies resolve from the repository's node_modules,
 * one folder further up, as an app's would from its own). Once per run.
 */
function installPackedPackage(): Promise<void> {
  installed ??= (async () => {
    const target = path.join(SAMPLES_DIR, 'node_modules/@fabric-harness/sdk');
    await fs.rm(target, { force: true, recursive: true });
    await fs.mkdir(target, { recursive: true });
    const packDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-doc-samples-pack-'));
    const tarball = await packTarball(packDir);
    await new Promise<void>((resolve, reject) =>
      execFile('tar', ['-xzf', tarball, '-C', target, '--strip-components=1'], (err) => (err ? reject(err) : resolve())),
    );
    await fs.rm(packDir, { recursive: true, force: true });
  })();
  return installed;
}

/** Writes the project's files, its package.json and tsconfig, over the packed package (installPackedPackage). */
export async function writeProject(p: Project): Promise<string> {
  const dir = projectDir(p);
  await fs.rm(dir, { recursive: true, force: true });
  await fs.mkdir(path.join(dir, 'src'), { recursive: true });
  await installPackedPackage();
  await fs.writeFile(
    path.join(dir, 'package.json'),
    JSON.stringify({ name: `sample-${p.name}`, private: true, type: p.esm ? 'module' : 'commonjs' }, null, 2),
  );
  // The tsconfig docs/typescript.md gives for the project's module system, as written, but for where
  // it reads and writes. Declarations are emitted (the documented config has declaration: true) because
  // their errors, like TS2883 for a type the package does not export, are reported only when written.
  // The package is the packed one at node_modules/@fabric-harness/sdk, so a declaration may name only what
  // its `exports` expose.
  const { compilerOptions } = documentedTsconfig(p.esm ? 'esm' : 'cjs');
  await fs.writeFile(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { ...compilerOptions, rootDir: 'src', outDir: 'out' }, include: ['src'] }, null, 2),
  );
  for (const f of p.files) await fs.writeFile(path.join(dir, 'src', f.name), [...f.prelude, f.block.code].join('\n'));
  return dir;
}

/** The Markdown line of a line of a generated file (1-based), or undefined in a prelude. */
export function markdownLine(f: SampleFile, fileLine: number): number | undefined {
  const inBlock = fileLine - f.prelude.length;
  return inBlock >= 1 ? f.block.line + inBlock : undefined;
}

/**
 * Rewrites `src/<file>.ts:<line>` (stack traces) and `src/<file>.ts(<line>,<col>)` (tsc) references to
 * the Markdown they came from, and puts the project, the file and the source line under each such line.
 */
export function toMarkdownLocations(p: Project, text: string): string {
  const ref = /(?:[^\s(]*\/)?src\/([\w.-]+)(?::(\d+)(?::(\d+))?|\((\d+),(\d+)\))/;
  return text
    .split('\n')
    .map((textLine) => {
      const m = ref.exec(textLine);
      const f = m && p.files.find((x) => x.name === m[1] || emitted(x) === m[1]);
      const line = m ? Number(m[2] ?? m[4]) : 0;
      if (!m || !f || !line) return textLine;
      const md = markdownLine(f, line);
      const col = m[3] ?? m[5];
      const loc = md === undefined ? `${where(f.block)} (prelude line ${line})` : `${f.block.file}:${md}${col ? `:${col}` : ''}`;
      const source = [...f.prelude, ...f.block.code.split('\n')][line - 1] ?? '';
      return `${textLine.replace(m[0], loc)}\n      in ${p.name}/${f.name} (${f.kind} at ${where(f.block)}):\n      | ${source.trim()}`;
    })
    .join('\n');
}

export interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface Tsconfig {
  compilerOptions: Record<string, unknown>;
  include?: string[];
}

/**
 * The tsconfig docs/typescript.md gives for an ES module or a CommonJS project (the ```json block after
 * `<!-- tsconfig: esm -->` / `<!-- tsconfig: cjs -->`): the samples compile with it, and
 * test/integration/tarball.test.ts compiles a consumer of the installed package with it.
 */
export function documentedTsconfig(kind: 'esm' | 'cjs'): Tsconfig {
  const file = 'docs/typescript.md';
  const blocks = codeBlocks(readFileSync(path.join(ROOT, file), 'utf8'), file).filter(
    (b) => b.annotation?.kind === 'tsconfig' && b.annotation.attrs.value === kind,
  );
  if (blocks.length !== 1 || blocks[0]!.lang !== 'json') throw new Error(`${file} must have one \`\`\`json block after <!-- tsconfig: ${kind} --> (found ${blocks.length})`);
  return JSON.parse(blocks[0]!.code) as Tsconfig;
}

/** Type-checks and emits the project with the repository's tsc and the documented tsconfig (`args` override it). */
export async function compileProject(p: Project, args: string[] = []): Promise<Outcome> {
  const tsc = path.join(ROOT, 'node_modules/.bin/tsc');
  return new Promise<Outcome>((resolve) => {
    execFile(tsc, ['-p', 'tsconfig.json', '--pretty', 'false', ...args], { cwd: projectDir(p), timeout: 120_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

// ---------------------------------------------------------------------------------------------------
// Running a project
// ---------------------------------------------------------------------------------------------------

export interface RunEnv {
  anthropicBaseURL?: string;
  temporalAddress?: string;
  temporalNamespace?: string;
}

function envFor(f: SampleFile, env: RunEnv): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: '--enable-source-maps' };
  for (const k of ['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'ANTHROPIC_MODEL', 'TEMPORAL_ADDRESS', 'TEMPORAL_NAMESPACE']) delete e[k];
  if (f.runsWith.fake) Object.assign(e, { ANTHROPIC_API_KEY: 'sample-test', ANTHROPIC_BASE_URL: env.anthropicBaseURL });
  if (f.runsWith.temporal) Object.assign(e, { TEMPORAL_ADDRESS: env.temporalAddress, TEMPORAL_NAMESPACE: env.temporalNamespace });
  return e;
}

interface Running {
  file: SampleFile;
  child: ChildProcess;
  output: { stdout: string; stderr: string };
  exited: Promise<number | null>;
}

function start(p: Project, f: SampleFile, env: RunEnv): Running {
  const child = spawn(process.execPath, [path.join('out', emitted(f))], { cwd: projectDir(p), env: envFor(f, env), stdio: ['ignore', 'pipe', 'pipe'] });
  const output = { stdout: '', stderr: '' };
  child.stdout!.on('data', (d) => (output.stdout += d));
  child.stderr!.on('data', (d) => (output.stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code, signal) => resolve(code ?? (signal ? -1 : null))));
  return { file: f, child, output, exited };
}

async function stop(r: Running): Promise<void> {
  if (r.child.exitCode !== null || r.child.signalCode !== null) return;
  r.child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const done = await Promise.race([r.exited.then(() => true), new Promise((res) => (timer = setTimeout(() => res(false), 10_000)))]);
  clearTimeout(timer);
  if (!done) r.child.kill('SIGKILL');
  await r.exited;
}

export interface RunReport {
  /** Empty when every main exited 0 with the output it promised and no worker died early. */
  failures: string[];
  transcript: string;
}

/** Starts the workers, runs the mains in document order (each within `timeoutMs`), stops the workers. */
export async function runProject(p: Project, env: RunEnv, timeoutMs = 60_000): Promise<RunReport> {
  const failures: string[] = [];
  const log: string[] = [];
  const show = (r: Running) =>
    `--- ${p.name}/${r.file.name} (${r.file.role} at ${where(r.file.block)})\n` +
    toMarkdownLocations(p, `stdout:\n${r.output.stdout}\nstderr:\n${r.output.stderr}`);
  const workers = p.files.filter((f) => f.role === 'worker').map((f) => start(p, f, env));
  const workerDied = Promise.race(workers.map((w) => w.exited.then(() => w)));
  try {
    for (const f of p.files.filter((x) => x.role === 'main')) {
      const r = start(p, f, env);
      let timer: NodeJS.Timeout | undefined;
      const outcome = await Promise.race([
        r.exited.then((code) => ({ kind: 'exit' as const, code })),
        workerDied.then((w) => ({ kind: 'worker' as const, w })),
        new Promise<{ kind: 'timeout' }>((res) => (timer = setTimeout(() => res({ kind: 'timeout' }), timeoutMs))),
      ]);
      clearTimeout(timer);
      if (outcome.kind === 'worker') {
        failures.push(`${where(outcome.w.file.block)}: the worker ${p.name}/${outcome.w.file.name} exited while ${f.name} ran\n${show(outcome.w)}`);
      } else if (outcome.kind === 'timeout') {
        failures.push(`${where(f.block)}: ${p.name}/${f.name} did not finish in ${timeoutMs} ms`);
      } else if (outcome.code !== 0) {
        failures.push(`${where(f.block)}: ${p.name}/${f.name} exited with ${outcome.code}`);
      } else if (f.stdout !== undefined && !r.output.stdout.includes(f.stdout)) {
        failures.push(`${where(f.block)}: ${p.name}/${f.name} did not print ${JSON.stringify(f.stdout)}`);
      }
      await stop(r);
      log.push(show(r));
      if (outcome.kind !== 'exit') break;
    }
  } finally {
    await Promise.all(workers.map(stop));
    log.push(...workers.map(show));
  }
  if (failures.length > 0) failures.push(log.join('\n'));
  return { failures, transcript: log.join('\n') };
}

/** Runs a command line of the `fh` CLI (dist/cli/main.js). */
export function runFh(args: string[]): Promise<Outcome> {
  return new Promise((resolve) => {
    execFile(process.execPath, [path.join(ROOT, 'dist/cli/main.js'), ...args], { cwd: ROOT, timeout: 30_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}
