/**
 * A stdio MCP server runs as bash does: the minimal environment, the sandbox directory, and inside the
 * worker's wrapper (here Debian's bubblewrap profile, 'bwrap': the root read-only, the sandbox directory
 * writable). The same server without a wrapper writes where it likes (the control).
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { McpConnections } from '../../src/activities/mcp/connections';
import { resolveToolSandbox } from '../../src/activities/tools/tool-env';

const server = { name: 't', command: process.execPath, args: [path.resolve(__dirname, '../fixtures/mcp-server.js')] };

describe('stdio MCP servers in the tool sandbox', () => {
  let cwd: string;
  let outside: string;
  beforeEach(async () => {
    cwd = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-mcp-sbx-'));
    outside = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-mcp-outside-'));
  });

  it("inside bwrap: writes in the sandbox directory, not outside it; the worker's variables stay out", async () => {
    process.env.FH_TEST_WORKER_SECRET = 'not-for-tools';
    const c = new McpConnections({ sandbox: resolveToolSandbox({ wrapper: 'bwrap' }) });
    try {
      expect(await c.call(server, 'run', cwd, 'touch', { path: path.join(cwd, 'in.txt') })).toEqual({ content: `wrote ${path.join(cwd, 'in.txt')}`, isError: false });
      const denied = await c.call(server, 'run', cwd, 'touch', { path: path.join(outside, 'out.txt') });
      expect(denied.isError).toBe(true);
      // Read-only root (EROFS), or not even visible (ENOENT: /tmp is private inside the sandbox).
      expect(denied.content).toMatch(/cannot write .*: (EROFS|EACCES|EPERM|ENOENT)/);
      await expect(fs.stat(path.join(outside, 'out.txt'))).rejects.toThrow();
      const env = JSON.parse((await c.call(server, 'run', cwd, 'env', {})).content) as { cwd: string; names: string[] };
      expect(env.cwd).toBe(cwd);
      expect(env.names).not.toContain('FH_TEST_WORKER_SECRET');
    } finally {
      delete process.env.FH_TEST_WORKER_SECRET;
      await c.closeAll();
    }
  });

  it("unconfined (wrapper: 'none', the explicit opt-out; the control) the same call writes outside", async () => {
    const c = new McpConnections({ sandbox: resolveToolSandbox({ wrapper: 'none' }) });
    try {
      expect((await c.call(server, 'run', cwd, 'touch', { path: path.join(outside, 'out.txt') })).isError).toBe(false);
      expect(await fs.readFile(path.join(outside, 'out.txt'), 'utf8')).toBe('touched');
    } finally {
      await c.closeAll();
    }
  });
});
