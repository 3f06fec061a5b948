/**
 * `fh board` as a user runs it: it prints a URL with a token on 127.0.0.1, the page answers that URL and
 * refuses the same without the token, Ctrl-C stops it; and it refuses to bind beyond loopback unless
 * told so explicitly, with a token. Bound to every interface with --public-url, it answers a browser
 * that reaches it by that address (127.0.0.2 stands for this machine's address on the network here) and
 * still refuses any Host or Origin it was not given.
 */
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { ensureBuilt, FH, runFh, type Ran } from '../support/fh-cli';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

const env = () => ({
  ...process.env,
  TEMPORAL_ADDRESS: process.env.FH_TEST_TEMPORAL_ADDRESS,
  TEMPORAL_NAMESPACE: process.env.FH_TEST_TEMPORAL_NAMESPACE,
  FH_BOARD_TOKEN: '',
});

function run(args: string[]): Promise<Ran> {
  return runFh(args, env());
}

describe('fh board', () => {
  beforeAll(() => ensureBuilt());

  /**
   * `fh board …` in a child process, with what it printed so far, and a wait for a pattern on either stream
   * (rejecting, with both streams, when it exits or `ms` pass first).
   */
  function startBoard(args: string[]) {
    const child = spawn(process.execPath, [FH, 'board', ...args], { cwd: ROOT, env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
    const out = { stdout: '', stderr: '' };
    const listeners = new Set<() => void>();
    child.stdout.on('data', (d) => ((out.stdout += d), listeners.forEach((l) => l())));
    child.stderr.on('data', (d) => ((out.stderr += d), listeners.forEach((l) => l())));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const waitFor = (stream: 'stdout' | 'stderr', pattern: RegExp, ms = 30_000) =>
      new Promise<RegExpExecArray>((resolve, reject) => {
        const check = () => {
          const m = pattern.exec(out[stream]);
          if (m) (listeners.delete(check), resolve(m));
        };
        listeners.add(check);
        check();
        void exited.then(() => reject(new Error(`fh board exited\nstdout: ${out.stdout}\nstderr: ${out.stderr}`)));
        setTimeout(() => reject(new Error(`no ${pattern} on ${stream} within ${ms} ms\nstdout: ${out.stdout}\nstderr: ${out.stderr}`)), ms).unref();
      });
    return { child, out, exited, waitFor };
  }

  const OPEN = /open: (http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+)/;

  it('serves the page at the URL it prints, refuses it without the token, and stops on SIGINT', async () => {
    const board = startBoard([]);
    try {
      const url = (await board.waitFor('stdout', OPEN))[1]!;
      const page = await fetch(url);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('/app.js?token=');
      const sessions = await fetch(url.replace('/?', '/api/sessions?'));
      expect(sessions.status).toBe(200);
      expect(((await sessions.json()) as { namespace: string }).namespace).toBe(process.env.FH_TEST_TEMPORAL_NAMESPACE);
      expect((await fetch(url.replace(/\?token=.*/, ''))).status).toBe(401);
    } finally {
      board.child.kill('SIGINT');
    }
    expect(await board.exited).toBe(0);
  });

  it('--live-broker with no Redis there: says so once on stderr and serves the page anyway (its readers ask Temporal)', async () => {
    const broker = `redis://127.0.0.1:${await freePort()}`; // nothing listens on it
    const board = startBoard(['--live-broker', broker]);
    try {
      const url = (await board.waitFor('stdout', OPEN))[1]!;
      // The connect gives up after 2 s; a board that stays quiet is the failure this test is for.
      await board.waitFor('stderr', /\n/, 10_000);
      expect(board.out.stderr).toContain(`fh: warning: the live broker at ${broker} did not answer`);
      expect(board.out.stderr).toContain('live text comes from Temporal until it does');
      expect((await fetch(url.replace('/?', '/api/sessions?'))).status).toBe(200);
    } finally {
      board.child.kill('SIGINT');
    }
    expect(await board.exited).toBe(0);
    expect(board.out.stderr.match(/warning/g)).toHaveLength(1);
  });

  /** A port free on every interface now, so the test can name it in --public-url before the board binds it. */
  const freePort = () =>
    new Promise<number>((resolve, reject) => {
      const probe = createServer();
      probe.once('error', reject);
      probe.listen(0, '0.0.0.0', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });

  /** A request to `address:port` with the Host (and other headers) given, as a browser elsewhere would send it. */
  const ask = (address: string, port: number, path: string, headers: Record<string, string>, method = 'GET', body?: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request({ host: address, port, path, method, headers }, (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      });
      req.on('error', reject);
      req.end(body);
    });

  it('bound to 0.0.0.0 with --public-url (several), answers at each public address and refuses a Host or Origin not named', async () => {
    const port = await freePort();
    const token = 'remote-board-token-0123456789';
    const publicUrl = `http://127.0.0.2:${port}`;
    const named = `devbox.invalid:${port}`;
    const child = spawn(
      process.execPath,
      [FH, 'board', '--host', '0.0.0.0', '--port', String(port), '--allow-remote', '--token', token, '--public-url', publicUrl, '--public-url', `http://${named}`],
      { cwd: ROOT, env: env(), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (d) => {
          stdout += d;
          if (/Press Ctrl\+C/.test(stdout)) resolve();
        });
        child.on('close', () => reject(new Error(`fh board exited\nstdout: ${stdout}\nstderr: ${stderr}`)));
      });
      // Both --public-url values were taken: the board prints the page at each.
      expect(stdout).toContain(`also: ${publicUrl}/?token=${token}`);
      expect(stdout).toContain(`also: http://${named}/?token=${token}`);
      const host = { host: `127.0.0.2:${port}` };
      // The page, an API call and a change, by the public address, as the browser there sends them.
      const page = await ask('127.0.0.2', port, `/?token=${token}`, host);
      expect(page.status).toBe(200);
      expect(page.body).toContain('/app.js?token=');
      const sessions = await ask('127.0.0.2', port, '/api/sessions', { ...host, 'x-fh-board-token': token });
      expect(sessions.status).toBe(200);
      expect((JSON.parse(sessions.body) as { namespace: string }).namespace).toBe(process.env.FH_TEST_TEMPORAL_NAMESPACE);
      const change = (headers: Record<string, string>) =>
        ask('127.0.0.2', port, '/api/sessions/no-such-session/actions', { 'content-type': 'application/json', 'x-fh-board-token': token, 'x-fh-board': '1', ...headers }, 'POST', '{"kind":"interrupt"}');
      // Past the guard: the change reaches Temporal, which has no such session.
      const allowed = await change({ ...host, origin: publicUrl, 'sec-fetch-site': 'same-origin' });
      expect({ status: allowed.status, code: (JSON.parse(allowed.body) as { error: { code: string } }).error.code }).toEqual({ status: 404, code: 'SESSION_NOT_FOUND' });
      // The second public name is accepted as well.
      expect((await ask('127.0.0.2', port, `/?token=${token}`, { host: named })).status).toBe(200);
      // Everything else is still refused: a Host not named (DNS rebinding), an Origin not named, no token.
      expect((await ask('127.0.0.2', port, `/?token=${token}`, { host: `rebound.example:${port}` })).status).toBe(421);
      expect((await ask('127.0.0.1', port, `/?token=${token}`, { host: `127.0.0.1:${port}` })).status).toBe(421);
      expect((await change({ ...host, origin: `http://127.0.0.1:${port}` })).status).toBe(403);
      expect((await change({ ...host, origin: 'https://evil.example' })).status).toBe(403);
      expect((await ask('127.0.0.2', port, '/', host)).status).toBe(401);
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
  });

  it('refuses a malformed --public-url, naming the flag, before connecting', async () => {
    for (const [url, why] of [
      ['ftp://devbox:21', /must be http:\/\/ or https:\/\//],
      ['http://devbox:8787/board', /no path, query or fragment/],
      ['devbox:8787', /must be http:\/\/ or https:\/\//],
      ['not a url', /is not a URL/],
    ] as const) {
      const bad = await run(['board', '--public-url', 'http://fine.example:8787', '--public-url', url, '--address', '127.0.0.1:1']);
      expect({ url, code: bad.code }).toEqual({ url, code: 2 });
      expect(bad.stderr.trim()).toMatch(/^fh: --public-url: /);
      expect(bad.stderr).toMatch(why);
    }
  });

  it('refuses a non-loopback address without --allow-remote, and with it but without a token', async () => {
    const bare = await run(['board', '--host', '0.0.0.0']);
    expect(bare.code).toBe(2);
    expect(bare.stderr.trim()).toMatch(/^fh: --host 0\.0\.0\.0 is not loopback: add --allow-remote/);
    const noToken = await run(['board', '--host', '0.0.0.0', '--allow-remote']);
    expect(noToken.code).toBe(2);
    expect(noToken.stderr.trim()).toMatch(/needs --token/);
    const shortToken = await run(['board', '--token', 'short']);
    expect(shortToken.code).toBe(2);
    expect(shortToken.stderr.trim()).toMatch(/--token must be at least 16 characters/);
  });
});
