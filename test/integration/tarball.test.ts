/**
 * The package as users get it: `npm pack` of the built package, installed with npm (its dependencies
 * from the registry, `--prefer-offline` so the local cache serves what it has) into a directory outside
 * this repository, with a fresh CommonJS project and a fresh ES module project in it. Each runs, in
 * plain JavaScript, an agent inline against the fake Anthropic server and the same agent on Temporal (a
 * worker bundling the installed agent module, a client from `connectClient` reading TEMPORAL_ADDRESS)
 * against the integration run's dev server; and `fh` runs from the installed bin.
 *
 * The README's quickstart runs there too, as the README writes it (no API key, no clone): the bash block
 * annotated `<!-- quickstart: … -->`, command by command, in the installed project; and `fh fake` serves
 * a plain JavaScript agent the way the README's "Without an API key" shows.
 *
 * A TypeScript consumer of every entry point compiles there too, in a CommonJS and an ES module project,
 * with the tsconfig docs/typescript.md gives for each, as written and with `skipLibCheck: false` (`strict`,
 * `declaration`), this repository's TypeScript and @types/node, and without @aws-sdk/client-s3 (an
 * optional peer) installed: the package's declarations stand alone. For Temporal's own declarations
 * the skipLibCheck: false build does what docs/typescript.md says: @types/ms installed,
 * exactOptionalPropertyTypes off.
 *
 * One `npm install` serves both projects (each has its own package.json with its own "type"; Node finds
 * the packages in the parent's node_modules): the install does not depend on the module system, and a
 * second one would double the ~20 s this test costs.
 */
import { execFile } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { findTemporalCli } from '../../src/testing/temporal-cli';
import { codeBlocks } from '../support/markdown-blocks';
import { documentedTsconfig } from '../support/doc-samples';
import { npmInstall, packTarball, typesNodeSpec } from '../support/packed-package';

const ROOT = path.resolve(__dirname, '../..');
const run = promisify(execFile);

const AGENTS = {
  cjs: `'use strict';
const { agent, schema, tool } = require('@fabric-harness/sdk');

const add = tool({
  name: 'add',
  description: 'Add two integers.',
  input: schema.object({ a: schema.number().int(), b: schema.number().int() }),
  execute: ({ a, b }) => String(a + b),
});
const calculator = agent({
  name: 'calculator',
  input: schema.object({ task: schema.string() }),
  run: async ({ init, input }) => {
    const session = await (await init({ system: 'Use tools.', tools: [add] })).session();
    return { reply: await session.prompt(input.task) };
  },
});
module.exports = { add, calculator };
`,
  esm: `import { agent, schema, tool } from '@fabric-harness/sdk';

export const add = tool({
  name: 'add',
  description: 'Add two integers.',
  input: schema.object({ a: schema.number().int(), b: schema.number().int() }),
  execute: ({ a, b }) => String(a + b),
});
export const calculator = agent({
  name: 'calculator',
  input: schema.object({ task: schema.string() }),
  run: async ({ init, input }) => {
    const session = await (await init({ system: 'Use tools.', tools: [add] })).session();
    return { reply: await session.prompt(input.task) };
  },
});
`,
};

/** The body both projects share: inline, then on Temporal, printing one JSON line. */
const body = (kind: 'cjs' | 'esm', agentsPath: string) => `
  const fake = await FakeAnthropicServer.start({
    script: [callTools({ name: 'add', input: { a: 2, b: 3 } }), say('5'), callTools({ name: 'add', input: { a: 2, b: 3 } }), say('5')],
  });
  try {
    const inline = await calculator.invoke({ task: 'Add 2 and 3' }, { apiKey: 'test', baseURL: fake.url });
    const taskQueue = 'tarball-${kind}-' + process.pid;
    const worker = await createWorker({ agents: ${agentsPath}, tools: [add], taskQueue, model: { apiKey: 'test', baseURL: fake.url } });
    const client = await connectClient();
    const onTemporal = await worker.runUntil(async () =>
      (await startAgent(client, calculator, { task: 'Add 2 and 3' }, { workflowId: taskQueue + '-' + Date.now(), taskQueue })).result(),
    );
    await client.connection.close();
    console.log(JSON.stringify({ inline: inline.reply, onTemporal: onTemporal.reply, modelRequests: fake.messageRequests().length }));
  } finally {
    await fake.stop();
  }
`;

const MAIN = {
  cjs: `'use strict';
const { createWorker } = require('@fabric-harness/sdk/worker');
const { connectClient, startAgent } = require('@fabric-harness/sdk/client');
const { FakeAnthropicServer, say, callTools } = require('@fabric-harness/sdk/testing');
const { add, calculator } = require('./agents');

async function main() {${body('cjs', "require.resolve('./agents')")}}
main().catch((err) => { console.error(err); process.exit(1); });
`,
  esm: `import { fileURLToPath } from 'node:url';
import { createWorker } from '@fabric-harness/sdk/worker';
import { connectClient, startAgent } from '@fabric-harness/sdk/client';
import { FakeAnthropicServer, say, callTools } from '@fabric-harness/sdk/testing';
import { add, calculator } from './agents.js';
${body('esm', "fileURLToPath(new URL('./agents.js', import.meta.url))")}`,
};

/**
 * Every entry point, named in values a `declaration: true` build must write out (their types reach into
 * each entry's declarations), and S3Store given a client of its own, as an app without the AWS SDK can.
 */
const CONSUMER = `import * as root from '@fabric-harness/sdk';
import * as strict from '@fabric-harness/sdk/strict';
import * as client from '@fabric-harness/sdk/client';
import * as audit from '@fabric-harness/sdk/audit';
import * as worker from '@fabric-harness/sdk/worker';
import * as board from '@fabric-harness/sdk/board';
import * as testing from '@fabric-harness/sdk/testing';

export const entries = { root, strict, client, audit, worker, board, testing };
export const calculator = root.agent({ name: 'calculator', input: root.schema.object({ task: root.schema.string() }), run: async ({ input }) => input.task });
const s3: worker.S3ClientLike = { send: async () => ({}) };
export const store = new worker.S3Store({ bucket: 'fh-bucket', client: s3 });
export const startWorker = (agents: URL) => worker.createWorker({ agents });
`;

describe('the packed tarball, installed in fresh projects', () => {
  let dir: string;
  const timings: Record<string, number> = {};

  beforeAll(async () => {
    expect(existsSync(path.join(ROOT, 'dist/index.js'))).toBe(true); // `npm test` builds first (pretest)
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-tarball-'));
    let t = Date.now();
    const tarball = await packTarball(dir);
    timings.pack = Date.now() - t;
    await fs.writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'fh-tarball-check', private: true }));
    t = Date.now();
    await npmInstall(dir, [tarball, typesNodeSpec(), '@types/ms@2']);
    timings.install = Date.now() - t;
    for (const kind of ['cjs', 'esm'] as const) {
      await fs.mkdir(path.join(dir, kind));
      await fs.writeFile(path.join(dir, kind, 'package.json'), JSON.stringify({ name: `fh-${kind}`, private: true, type: kind === 'esm' ? 'module' : 'commonjs' }));
      await fs.writeFile(path.join(dir, kind, 'agents.js'), AGENTS[kind]);
      await fs.writeFile(path.join(dir, kind, 'main.js'), MAIN[kind]);
    }
  }, 330_000);

  afterAll(async () => {
    process.stderr.write(`tarball test timings (ms): ${JSON.stringify(timings)}\n`);
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  it.each(['cjs', 'esm'] as const)('a %s project runs an agent inline and on Temporal', async (kind) => {
    const t = Date.now();
    const env: NodeJS.ProcessEnv = { ...process.env, TEMPORAL_ADDRESS: process.env.FH_TEST_TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE: process.env.FH_TEST_TEMPORAL_NAMESPACE };
    delete env.ANTHROPIC_API_KEY;
    delete env.ANTHROPIC_BASE_URL;
    const result = await run(process.execPath, ['main.js'], { cwd: path.join(dir, kind), env, timeout: 90_000 }).catch((err) => err);
    timings[kind] = Date.now() - t;
    const lastLine = String(result.stdout ?? '').trim().split('\n').at(-1);
    expect({ kind, lastLine, stderr: result.code ? result.stderr : '' }).toEqual({
      kind,
      lastLine: JSON.stringify({ inline: '5', onTemporal: '5', modelRequests: 4 }),
      stderr: '',
    });
  });

  it.each(['cjs', 'esm'] as const)(
    'a TypeScript consumer of every entry point compiles in a %s project, as documented and with skipLibCheck: false, without the optional AWS SDK',
    async (kind) => {
      expect(existsSync(path.join(dir, 'node_modules/@aws-sdk/client-s3'))).toBe(false);
      const work = path.join(dir, `types-${kind}`);
      await fs.mkdir(path.join(work, 'src'), { recursive: true });
      await fs.writeFile(path.join(work, 'package.json'), JSON.stringify({ name: `fh-types-${kind}`, private: true, type: kind === 'esm' ? 'module' : 'commonjs' }));
      await fs.writeFile(path.join(work, 'src/consumer.ts'), CONSUMER);
      const documented = documentedTsconfig(kind);
      expect(documented.compilerOptions).toMatchObject({ strict: true, declaration: true });
      const tsc = path.join(ROOT, 'node_modules/.bin/tsc');
      const errors: Record<string, string> = {};
      // skipLibCheck: false as docs/typescript.md says: with exactOptionalPropertyTypes off, which
      // Temporal's schedule-client.d.ts does not compile under.
      const strictLibs = { skipLibCheck: false, exactOptionalPropertyTypes: false };
      for (const [name, changes] of [['documented', {}], ['skipLibCheck-false', strictLibs]] as const) {
        const config = { ...documented, compilerOptions: { ...documented.compilerOptions, ...changes } };
        await fs.writeFile(path.join(work, `tsconfig.${name}.json`), JSON.stringify(config, null, 2));
        const r = await run(tsc, ['-p', `tsconfig.${name}.json`, '--pretty', 'false'], { cwd: work, timeout: 120_000 }).catch((err) => err);
        errors[name] = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim();
      }
      expect(errors).toEqual({ documented: '', 'skipLibCheck-false': '' });
      expect(existsSync(path.join(work, 'dist/consumer.d.ts'))).toBe(true);
    },
  );

  it('the installed `fh` bin runs', async () => {
    const { stdout } = await run(path.join(dir, 'node_modules/.bin/fh'), ['--help'], { cwd: dir });
    expect(stdout).toContain('Usage: fh <command>');
  });

  /** The environment a new user has: no API key, no model URL, Temporal's CLI wherever this machine has it. */
  function userEnv(): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const k of ['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'ANTHROPIC_MODEL', 'TEMPORAL_ADDRESS', 'TEMPORAL_NAMESPACE']) delete env[k];
    // The CLI the test run already found or built (as `temporal` on PATH would be for a user), so the
    // quickstart does not build another copy into the scratch project.
    const cli = findTemporalCli({ projectDir: ROOT });
    if (cli) env.TEMPORAL_CLI_PATH = cli;
    return env;
  }

  it("the README's quickstart runs as written: the demo says the model is scripted and the agent's work is done", async () => {
    const readme = await fs.readFile(path.join(ROOT, 'README.md'), 'utf8');
    const quickstart = codeBlocks(readme, 'README.md').filter((b) => b.annotation?.kind === 'quickstart');
    expect(quickstart.map((b) => b.lang)).toEqual(['bash']);
    const commands = quickstart[0]!.code.split('\n').map((l) => l.replace(/\s#.*$/, '').trim()).filter(Boolean);
    expect(commands.length).toBeGreaterThan(0);
    let stdout = '';
    for (const command of commands) {
      const r = await run('sh', ['-c', command], { cwd: dir, env: userEnv(), timeout: 180_000 }).catch((err) => err);
      expect({ command, code: r.code ?? 0, stderr: r.code ? r.stderr : '' }).toEqual({ command, code: 0, stderr: '' });
      stdout += r.stdout;
    }
    expect(stdout).toContain('SCRIPTED fake Anthropic server');
    expect(stdout).toMatch(/Result: notes\.md has a heading/);
    expect(stdout).toContain('runs are reliable and auditable'); // the file the agent wrote and fixed
    // No terminal here, so the server stops with the demo: no bare link to a UI that is gone.
    expect(stdout).not.toContain('Temporal UI:');
    expect(stdout).toMatch(/The dev server stops with the demo.*`fh demo --stay` keeps it up to open the run at http:\/\/127\.0\.0\.1:\d+\/namespaces\/default\/workflows\/demo-notes-keeper-/);
  }, 200_000);

  it('`fh fake` from the installed bin serves a scripted reply to a plain JavaScript agent', async () => {
    const work = path.join(dir, 'fake-user');
    await fs.mkdir(work);
    await fs.writeFile(path.join(work, 'calc.json'), JSON.stringify([{ tool: 'add', input: { a: 2, b: 3 } }, '5']));
    await fs.writeFile(path.join(work, 'inline.js'), `${AGENTS.cjs}\ncalculator.invoke({ task: 'Add 2 and 3' }).then((r) => console.log('reply:', r.reply));\n`);
    const { spawn } = await import('node:child_process');
    const fake = spawn(path.join(dir, 'node_modules/.bin/fh'), ['fake', '--script', 'calc.json', '--port', '0'], { cwd: work, env: userEnv() });
    try {
      let out = '';
      const url = await new Promise<string>((resolve, reject) => {
        fake.stdout.on('data', (d) => {
          out += d;
          const m = /export ANTHROPIC_BASE_URL=(\S+) ANTHROPIC_API_KEY=fake/.exec(out);
          if (m) resolve(m[1]!);
        });
        fake.on('exit', (code) => reject(new Error(`fh fake exited ${code}: ${out}`)));
      });
      expect(out).toContain('NOT a model');
      const r = await run(process.execPath, ['inline.js'], { cwd: work, env: { ...userEnv(), ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: 'fake' }, timeout: 60_000 });
      expect(r.stdout.trim()).toBe('reply: 5');
    } finally {
      fake.kill('SIGINT');
    }
  });

  // Last: it adds the openai package to the project the other tests use.
  it('`npx fh demo --provider openai` runs as a new user would try it, after `npm install openai`', async () => {
    await npmInstall(dir, ['openai']);
    const env = userEnv();
    for (const k of ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'OPENAI_MODEL']) delete env[k];
    const r = await run('npx', ['fh', 'demo', '--provider', 'openai'], { cwd: dir, env, timeout: 180_000 }).catch((err) => err);
    expect({ code: r.code ?? 0, stderr: r.code ? r.stderr : '' }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout).toContain('SCRIPTED fake OpenAI Responses server');
    // On the worker's own `openai` connection, named by the run (no ANTHROPIC_API_KEY: the default would fail).
    expect(r.stdout).toMatch(/Started workflow demo-notes-keeper-\d+ \(agent notes-keeper, connection openai, model gpt-5\.1, /);
    expect(r.stdout).toMatch(/Result: notes\.md has a heading/);
    expect(r.stdout).toContain('runs are reliable and auditable');
  }, 300_000);
});
