/**
 * `fh init` as a user meets it: from the packed tarball, installed with npm, the installed bin writes an
 * ES module project and a CommonJS one; they install (one npm workspace install for both, their
 * dependency on the SDK pointed at the tarball), type-check, pass their own `npm test`, and `npm run dev`
 * (worker + `fh fake`, against this test's Temporal dev server through TEMPORAL_ADDRESS) lets `npm start`
 * print the agent's first reply: the fake's scripted one, with no API key anywhere.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { startDevServer, type DevServer } from '../../src/testing/temporal-cli';
import { FH_SEARCH_ATTRIBUTES } from '../../src/wire/search-attributes';
import { npmInstall, packTarball, ROOT } from '../support/packed-package';

const run = promisify(execFile);
const PROJECTS = { esm: 'app', cjs: 'app-cjs' } as const;

/** A new user's environment: no API key, no model URL, no Temporal settings. */
function userEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('ANTHROPIC_') || k.startsWith('TEMPORAL_') || k.startsWith('npm_') || k === 'NODE_OPTIONS') delete env[k];
  return { ...env, ...extra };
}

async function npmRun(cwd: string, script: string, env = userEnv()): Promise<{ code: number; output: string }> {
  const r = await run('npm', ['run', '--silent', script], { cwd, env, timeout: 90_000 }).catch((err) => err);
  return { code: typeof r.code === 'number' ? r.code : 0, output: `${r.stdout ?? ''}${r.stderr ?? ''}` };
}

/** Starts `npm run dev`; resolves once it says the worker is up (rejects if it exits first). */
function startDev(cwd: string, env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; output: () => string }> {
  // Its own process group, so the test can stop npm, the dev script and what it started at once.
  const child = spawn('npm', ['run', 'dev'], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d;
      if (out.includes('dev: worker started')) resolve({ child, output: () => out });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`npm run dev exited ${code} before the worker started:\n${out}`)));
  });
}

async function stopDev(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.pid === undefined) return;
  const exited = new Promise((r) => child.once('exit', r));
  process.kill(-child.pid, 'SIGINT');
  await exited;
}

describe('fh init, from the packed tarball', () => {
  let dir: string;
  let server: DevServer;
  const timings: Record<string, number> = {};

  beforeAll(async () => {
    expect(existsSync(path.join(ROOT, 'dist/cli/main.js'))).toBe(true); // `npm run build` first
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-init-'));
    let t = Date.now();
    const tarball = await packTarball(dir);
    await fs.writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'fh-init-check', private: true }));
    await npmInstall(dir, [tarball]);
    timings.install = Date.now() - t;
    const fh = path.join(dir, 'node_modules/.bin/fh');
    const outputs = [];
    for (const [kind, name] of Object.entries(PROJECTS)) {
      const r = await run(fh, ['init', name, ...(kind === 'cjs' ? ['--cjs'] : [])], { cwd: dir, env: userEnv() });
      outputs.push(r.stdout);
      await run('npm', ['pkg', 'set', `dependencies.@fabric-harness/sdk=file:${tarball}`], { cwd: path.join(dir, name) });
    }
    expect(outputs[0]!.trim().split('\n')).toEqual([
      'Created app (an ES module project): an agent with a tool, a worker, a client, a test.',
      'Next:',
      '  cd app && npm install',
      expect.stringMatching(/^ {2}npm run dev +# /),
      expect.stringMatching(/^ {2}npm start +# /),
    ]);
    // Both projects as workspaces of the directory: one install for the two, with their own package.json.
    await fs.writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'fh-init-check', private: true, workspaces: Object.values(PROJECTS) }));
    t = Date.now();
    await npmInstall(dir);
    timings.workspaces = Date.now() - t;
    server = await startDevServer({ ui: false, searchAttributes: { ...FH_SEARCH_ATTRIBUTES } });
  }, 330_000);

  afterAll(async () => {
    process.stderr.write(`init test timings (ms): ${JSON.stringify(timings)}\n`);
    await server?.stop();
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  it.each(Object.entries(PROJECTS))('the %s project type-checks, passes its own tests, and `npm run dev` + `npm start` reach a first reply without an API key', async (kind, name) => {
    const t = Date.now();
    const cwd = path.join(dir, name);
    const pkg = JSON.parse(await fs.readFile(path.join(cwd, 'package.json'), 'utf8'));
    expect(pkg.type).toBe(kind === 'esm' ? 'module' : undefined);

    expect(await npmRun(cwd, 'typecheck')).toEqual({ code: 0, output: '' });
    const test = await npmRun(cwd, 'test');
    expect({ code: test.code, pass: /# pass 1\b/.test(test.output), output: test.code ? test.output : '' }).toEqual({ code: 0, pass: true, output: '' });

    const env = userEnv({ TEMPORAL_ADDRESS: server.address });
    const dev = await startDev(cwd, env);
    try {
      expect(dev.output()).toContain(`dev: using the Temporal server at ${server.address}`);
      expect(dev.output()).toMatch(/ANTHROPIC_API_KEY is not set: started the SCRIPTED fake Anthropic server \(fake\.json, not a model\) at http:\/\/127\.0\.0\.1:\d+/);
      const start = await npmRun(cwd, 'start', env);
      expect(start).toEqual({ code: 0, output: expect.stringMatching(/reply: 2 \+ 3 = 5 \(a scripted reply from fh fake, not a model\) \(2 model calls\)\n$/) });
    } finally {
      await stopDev(dev.child);
    }
    timings[kind] = Date.now() - t;
  }, 90_000);
});
