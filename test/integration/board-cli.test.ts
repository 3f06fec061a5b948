/**
 * `fh board` as a user runs it: it prints a URL with a token on 127.0.0.1, the page answers that URL and
 * refuses the same without the token, Ctrl-C stops it; and it refuses to bind beyond loopback unless
 * told so explicitly, with a token.
 */
import { spawn } from 'node:child_process';
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

  it('serves the page at the URL it prints, refuses it without the token, and stops on SIGINT', async () => {
    const child = spawn(process.execPath, [FH, 'board'], { cwd: ROOT, env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (d) => {
          stdout += d;
          const m = /open: (http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+)/.exec(stdout);
          if (m) resolve(m[1]!);
        });
        child.on('close', () => reject(new Error(`fh board exited\nstdout: ${stdout}\nstderr: ${stderr}`)));
      });
      const page = await fetch(url);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('/app.js?token=');
      const sessions = await fetch(url.replace('/?', '/api/sessions?'));
      expect(sessions.status).toBe(200);
      expect(((await sessions.json()) as { namespace: string }).namespace).toBe(process.env.FH_TEST_TEMPORAL_NAMESPACE);
      expect((await fetch(url.replace(/\?token=.*/, ''))).status).toBe(401);
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
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
