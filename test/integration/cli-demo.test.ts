/**
 * `fh demo --exit` from the built binary, on a machine with confinement for bash (bubblewrap here) and
 * on one without (FH_BWRAP_PATH names a program that does not exist, as on a machine without
 * bubblewrap): without it the demo says what to do in one line and still reaches its result with the
 * file tools; with it, bash runs as before. A real Temporal dev server, the scripted fake model.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { findTemporalCli } from '../../src/testing/temporal-cli';
import { ensureBuilt, runFh } from '../support/fh-cli';

const ROOT = path.resolve(__dirname, '../..');

function demoEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  for (const k of ['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'ANTHROPIC_MODEL', 'OPENAI_API_KEY', 'OPENAI_BASE_URL', 'OPENAI_MODEL', 'GEMINI_API_KEY', 'GOOGLE_API_KEY', 'GOOGLE_GEMINI_BASE_URL', 'GEMINI_MODEL', 'TEMPORAL_ADDRESS', 'TEMPORAL_NAMESPACE']) delete env[k];
  const cli = findTemporalCli({ projectDir: ROOT });
  if (cli) env.TEMPORAL_CLI_PATH = cli;
  return env;
}

describe('fh demo and the confinement of bash', () => {
  beforeAll(() => ensureBuilt(), 120_000);

  it('without confinement: one line says what to do, and the demo still reaches its result with the file tools', async () => {
    const r = await runFh(['demo', '--exit'], demoEnv({ FH_BWRAP_PATH: '/nonexistent/fh-bwrap', FH_SANDBOX_EXEC_PATH: '/nonexistent/sandbox-exec' }), { timeoutMs: 150_000 });
    expect({ code: r.code, stderr: r.code ? r.stderr : '' }).toEqual({ code: 0, stderr: '' });
    const hint = r.stdout.split('\n').filter((l) => /confinement/i.test(l));
    expect(hint).toHaveLength(1);
    expect(hint[0]).toMatch(/^No confinement for bash here \(bubblewrap \(bwrap\) is not installed\): .*apt-get install bubblewrap.*sandbox-exec is built in.*toolSandbox: \{ wrapper: 'none' \}.*The demo goes on without bash\.$/);
    expect(r.stdout).not.toContain('→ tool bash');
    expect(r.stdout).not.toContain('SANDBOX_UNAVAILABLE');
    expect(r.stdout).toMatch(/→ tool write_file[\s\S]*→ tool edit_file[\s\S]*→ tool read_file/);
    expect(r.stdout).toMatch(/Result: notes\.md has a heading and three bullet points; I fixed/);
    expect(r.stdout).toContain('runs are reliable and auditable'); // the file the agent wrote and fixed
  }, 160_000);

  it('with bubblewrap: no such line, and bash counts the lines', async () => {
    const r = await runFh(['demo', '--exit'], demoEnv(), { timeoutMs: 150_000 });
    expect({ code: r.code, stderr: r.code ? r.stderr : '' }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout).not.toMatch(/No confinement/);
    expect(r.stdout).toMatch(/→ tool bash \{"command":"wc -l notes\.md"\}\n {2}← ok: exit code 0 .*4 notes\.md/);
    expect(r.stdout).toMatch(/Result: notes\.md has a heading and three bullet points \(4 lines\)/);
  }, 160_000);

  // No ANTHROPIC_API_KEY here (demoEnv removes it): a call on the default connection would fail with
  // MISSING_API_KEY, so these runs pass only by naming their provider's connection, as a user's run does.
  it('--provider openai: the same run on the OpenAI connection, against the scripted fake Responses API', async () => {
    const r = await runFh(['demo', '--provider', 'openai', '--exit'], demoEnv(), { timeoutMs: 150_000 });
    expect({ code: r.code, stderr: r.code ? r.stderr : '' }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(/uses the SCRIPTED fake OpenAI Responses server\n {7}\(http:\/\/127\.0\.0\.1:\d+\/v1\)/);
    expect(r.stdout).toMatch(/Started workflow demo-notes-keeper-\d+ \(agent notes-keeper, connection openai, model gpt-5\.1, sandbox /);
    expect(r.stdout).toMatch(/→ tool write_file[\s\S]*→ tool edit_file[\s\S]*→ tool read_file/);
    expect(r.stdout).toMatch(/Result: notes\.md has a heading and three bullet points/);
    expect(r.stdout).toContain('runs are reliable and auditable');
    // Usage as the Responses API reported it (the fake counts every call's input).
    expect(r.stdout).toMatch(/Usage: [45] model calls, [1-9]\d* input \/ [1-9]\d* output tokens/);
  }, 160_000);

  it('--provider google: the same run on the Gemini connection, against the scripted fake Gemini server', async () => {
    const r = await runFh(['demo', '--provider', 'google', '--exit'], demoEnv(), { timeoutMs: 150_000 });
    expect({ code: r.code, stderr: r.code ? r.stderr : '' }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(/uses the SCRIPTED fake Gemini server\n {7}\(http:\/\/127\.0\.0\.1:\d+/);
    expect(r.stdout).toMatch(/Started workflow demo-notes-keeper-\d+ \(agent notes-keeper, connection google, model gemini-2\.5-flash, sandbox /);
    expect(r.stdout).toMatch(/→ tool write_file[\s\S]*→ tool edit_file[\s\S]*→ tool read_file/);
    expect(r.stdout).toMatch(/Result: notes\.md has a heading and three bullet points/);
    expect(r.stdout).toContain('runs are reliable and auditable');
  }, 160_000);

  it('--provider openai without the openai package says to install it, before starting anything', async () => {
    // A preload that makes `openai` unresolvable, as in a project that did not install the optional peer.
    const hide = path.join(os.tmpdir(), `fh-hide-openai-${process.pid}.js`);
    await fs.writeFile(
      hide,
      "const M = require('module'); const r = M._resolveFilename; M._resolveFilename = function (req, ...a) { if (req === 'openai' || req.startsWith('openai/')) { const e = new Error(`Cannot find module '${req}'`); e.code = 'MODULE_NOT_FOUND'; throw e; } return r.call(this, req, ...a); };",
    );
    try {
      const r = await runFh(['demo', '--provider', 'openai', '--exit'], demoEnv({ NODE_OPTIONS: `--require ${hide}` }), { timeoutMs: 60_000 });
      expect(r.code).toBe(1);
      expect(r.stderr.trim()).toBe('fh: --provider openai needs the openai package, an optional dependency: install it with `npm install openai`, then run the demo again.');
      expect(r.stdout).not.toContain('Temporal dev server');
    } finally {
      await fs.rm(hide, { force: true });
    }
  }, 70_000);
});
