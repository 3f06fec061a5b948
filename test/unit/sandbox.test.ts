/**
 * src/activities/tools/sandbox/sandbox.ts, the one module bash (and MCP stdio servers, sub-agents) start processes
 * through: the minimal environment, bubblewrap confinement by default, network only when asked, extra
 * read-only paths, the process group killed on abort, and no silent fallback when bubblewrap is missing.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { agent, schema } from '../../src';
import { bwrapArgs, confinedSpawn, probeBwrap, requireBwrap, sandboxEnv, SandboxUnavailableError } from '../../src/activities/tools/sandbox/sandbox';
import { FakeAnthropicServer, callTools, say } from '../../src/testing';

function output(child: ChildProcess): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d) => (stdout += d));
  child.stderr?.on('data', (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('sandbox.ts', () => {
  let base: string;
  let root: string;
  beforeEach(async () => {
    base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'fh-sbx-')));
    root = path.join(base, 'root');
    await fs.mkdir(root);
    await fs.writeFile(path.join(base, 'outside.txt'), 'OUTSIDE');
  });
  afterEach(() => fs.rm(base, { recursive: true, force: true }));

  it('sandboxEnv is the whole environment: system PATH, HOME = root, nothing of the worker unless named', () => {
    process.env.FH_SBX_SECRET = 'worker-secret';
    try {
      expect(sandboxEnv('/r')).toEqual({ PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', HOME: '/r', LANG: expect.any(String), TERM: 'dumb', TMPDIR: '/tmp' });
      expect(sandboxEnv('/r', { passEnv: ['FH_SBX_SECRET'], env: { TOKEN: 't' } })).toMatchObject({ FH_SBX_SECRET: 'worker-secret', TOKEN: 't' });
    } finally {
      delete process.env.FH_SBX_SECRET;
    }
  });

  it('confines by default: the root read-write, outside unreadable, the top level read-only', async () => {
    const r = await output(confinedSpawn('bash', ['-c', 'cat ../outside.txt; echo "read=$?"; echo hi > mine.txt; echo "mine=$?"; : > /x 2>/dev/null; echo "top=$?"'], { root }));
    expect(r.stdout).not.toContain('OUTSIDE');
    expect(r.stdout).toContain('read=1');
    expect(r.stdout).toContain('mine=0');
    expect(r.stdout).toContain('top=1');
    expect(await fs.readFile(path.join(root, 'mine.txt'), 'utf8')).toBe('hi\n');
  });

  it('reaches the network only with network: true', async () => {
    const server = http.createServer((_req, res) => res.end('pong'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const probe = `(exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null && echo open || echo closed`;
    try {
      expect((await output(confinedSpawn('bash', ['-c', probe], { root }))).stdout.trim()).toBe('closed');
      expect((await output(confinedSpawn('bash', ['-c', probe], { root, network: true }))).stdout.trim()).toBe('open');
    } finally {
      server.close();
    }
  });

  it('readOnly paths are visible and not writable', async () => {
    const tool = path.join(base, 'server');
    await fs.mkdir(tool);
    await fs.writeFile(path.join(tool, 'main.sh'), 'echo served');
    const r = await output(confinedSpawn('bash', ['-c', `bash ${tool}/main.sh; : > ${tool}/x 2>/dev/null; echo "w=$?"`], { root, readOnly: [tool] }));
    expect(r.stdout).toBe('served\nw=1\n');
  });

  it.each(['bwrap', 'none'] as const)('aborting the signal kills the whole process group (%s)', async (confinement) => {
    const stamp = `77${String(process.pid).padStart(7, '0').slice(-7)}.${confinement.length}`;
    const ac = new AbortController();
    const child = confinedSpawn('bash', ['-c', `sleep ${stamp} & sleep ${stamp} & echo up; wait`], { root, signal: ac.signal, confinement });
    const done = output(child);
    await new Promise<void>((r) => child.stdout!.once('data', () => r()));
    const count = () => {
      try {
        return execFileSync('pgrep', ['-f', `^sleep ${stamp}$`], { encoding: 'utf8' }).trim().split('\n').length;
      } catch {
        return 0;
      }
    };
    expect(count()).toBe(2);
    ac.abort();
    await done;
    for (let i = 0; i < 100 && count() > 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(count()).toBe(0);
  });

  it("'none' runs unconfined (an explicit opt-out); a missing bubblewrap is SANDBOX_UNAVAILABLE, not a silent fallback", async () => {
    const r = await output(confinedSpawn('bash', ['-c', 'cat ../outside.txt'], { root, confinement: 'none' }));
    expect(r.stdout).toBe('OUTSIDE');
    // Where bwrap is missing, the probe says so and the error says how to fix it or opt out.
    const missing = probeBwrap('fh-no-such-bwrap');
    expect(missing).toEqual({ ok: false, reason: 'bubblewrap (bwrap) is not installed' });
    expect(() => requireBwrap(missing)).toThrow(SandboxUnavailableError);
    expect(() => requireBwrap(missing)).toThrow(/not installed.*apt-get install bubblewrap.*wrapper: 'none'/s);
    expect(probeBwrap()).toEqual({ ok: true }); // and here it is installed (scripts/bubblewrap.js)
  });

  it('binds nothing of the worker: no /root, /home, /work, /opt, /var in the profile', () => {
    const args = bwrapArgs(root);
    const bound = args.flatMap((a, i) => (['--bind', '--ro-bind', '--ro-bind-try'].includes(a) ? [args[i + 1]!] : []));
    expect(bound.filter((p) => !p.startsWith('/usr') && !p.startsWith('/etc/') && p !== root)).toEqual([]);
  });
});

describe('inline runs confine bash the same way', () => {
  let fake: FakeAnthropicServer;
  beforeAll(async () => {
    fake = await FakeAnthropicServer.start();
  });
  afterAll(() => fake.stop());

  const shell = agent({
    name: 'inline-shell',
    input: schema.object({ dir: schema.string() }),
    run: async ({ init, input }) => {
      const fabric = await init({ tools: ['bash'], sandbox: { type: 'local', cwd: input.dir }, compaction: { enabled: false } });
      return (await fabric.session()).prompt<string>('go');
    },
  });

  it('cat ../secret reads nothing by default; toolSandbox: { wrapper: none } is the explicit opt-out', async () => {
    const base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'fh-inline-sbx-')));
    const dir = path.join(base, 'root');
    await fs.mkdir(dir);
    await fs.writeFile(path.join(base, 'secret.txt'), 'INLINE-SECRET');
    const opts = { apiKey: 'k', baseURL: fake.url };
    const lastToolResult = () => fake.messageRequests().at(-1)!.body.messages.at(-1).content[0].content as string;
    try {
      fake.enqueue(callTools({ name: 'bash', input: { command: 'cat ../secret.txt' } }), say('done'));
      expect(await shell.invoke({ dir }, opts)).toBe('done');
      expect(lastToolResult()).not.toContain('INLINE-SECRET');
      fake.enqueue(callTools({ name: 'bash', input: { command: 'cat ../secret.txt' } }), say('done'));
      expect(await shell.invoke({ dir }, { ...opts, toolSandbox: { wrapper: 'none' } })).toBe('done');
      expect(lastToolResult()).toContain('INLINE-SECRET');
    } finally {
      await fs.rm(base, { recursive: true, force: true });
    }
  });
});
