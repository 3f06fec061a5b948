/**
 * The idle close of MCP connections, with a real stateful server (test/fixtures/mcp-counter-server.js,
 * stdio) and a short idle time: a call in flight is never cut, and the call after an idle close says
 * the server's state is gone (as a call after a lost worker does).
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { McpConnections } from '../../src/activities/mcp/connections';
import { resolveToolSandbox } from '../../src/activities/tools/tool-env';
import { until } from '../support/waiting';

const counter = { name: 'counter', command: process.execPath, args: [path.resolve(__dirname, '../fixtures/mcp-counter-server.js')], env: { FH_MARK_EXIT: '1' } };
const IDLE_MS = 400;

describe('MCP idle close', () => {
  let cwd: string;
  let mcp: McpConnections;
  beforeEach(async () => {
    cwd = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-mcp-idle-'));
    mcp = new McpConnections({ sandbox: resolveToolSandbox({ wrapper: 'none' }), idleMs: IDLE_MS });
  });
  afterEach(() => mcp.closeAll());

  const exited = async (connection: string) => (await fs.readdir(cwd)).includes(`exited-${connection}`);

  it('a call longer than the idle time is not cut, and the connection lives on after it', async () => {
    // Past the idle time and the 2 s the MCP client gives a closing server before it kills it.
    const long = await mcp.call(counter, 'run', cwd, 'count', { waitMs: IDLE_MS + 3_000 });
    expect(long).toEqual({ content: expect.stringMatching(/^\? \w+ 1$/), isError: false });
    const connection = long.content.split(' ')[1]!;
    // The idle clock started when the call ended: the next call, at once, is on the same connection.
    expect(await mcp.call(counter, 'run', cwd, 'count', {})).toEqual({ content: `? ${connection} 2`, isError: false });
  });

  it('the first call after an idle close carries the state-lost note; the next does not', async () => {
    const first = await mcp.call(counter, 'run', cwd, 'count', {});
    const connection = first.content.split(' ')[1]!;
    await until('the idle connection to be closed', () => exited(connection));
    const after = await mcp.call(counter, 'run', cwd, 'count', {});
    expect(after.isError).toBe(false);
    const [note, result] = after.content.split('\n');
    expect(note).toBe(
      "[MCP server 'counter': its connection was closed after 400 ms unused, so this call ran on a new connection; " +
        'state the server kept for the earlier calls (an open page, a session, counters) is lost.]',
    );
    expect(result).toMatch(/^\? \w+ 1$/);
    expect(result).not.toContain(connection);
    expect((await mcp.call(counter, 'run', cwd, 'count', {})).content).toBe(`? ${result!.split(' ')[1]} 2`);
  });

  it('a stateless server gets no note after an idle close (it kept no state)', async () => {
    const stateless = { ...counter, stateful: false };
    const connection = (await mcp.call(stateless, 'run', cwd, 'count', {})).content.split(' ')[1]!;
    await until('the idle connection to be closed', () => exited(connection));
    expect((await mcp.call(stateless, 'run', cwd, 'count', {})).content).toMatch(/^\? \w+ 1$/);
  });
});
