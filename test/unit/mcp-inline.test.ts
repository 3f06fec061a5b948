/**
 * MCP tools inline: the same connections code in-process. A real MCP server (the SDK's server API,
 * test/fixtures/mcp-server.js) over stdio; its process ends with the run.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { agent, schema } from '@fabric-harness/sdk';
import { FakeAnthropicServer, callTools, say } from '@fabric-harness/sdk/testing';
import { savedAnthropicEnv } from '../support/anthropic-env';

const SERVER = path.resolve(__dirname, '../fixtures/mcp-server.js');

const user = agent({
  name: 'mcp-inline',
  input: schema.object({ dir: schema.string() }),
  run: async ({ init, input }) => {
    const h = await init({ mcp: ['files'], sandbox: { type: 'local', cwd: input.dir }, compaction: { enabled: false } });
    return (await h.session()).prompt('go');
  },
});

describe('MCP tools inline', () => {
  let fake: FakeAnthropicServer;
  const env = savedAnthropicEnv();
  beforeAll(async () => {
    fake = await FakeAnthropicServer.start();
    env.pointAt(fake.url);
  });
  afterAll(async () => {
    await fake.stop();
    env.restore();
  });

  it('lists, calls on one connection, answers errors to the model', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-mcp-inline-'));
    fake.enqueue(
      callTools({ name: 'files__count', input: {} }, { name: 'files__fail', input: {} }),
      callTools({ name: 'files__count', input: {} }),
      say('done'),
    );
    const first = fake.messageRequests().length;
    const mcpServers = { files: { name: 'files', command: process.execPath, args: [SERVER] } };
    expect(await user.invoke({ dir }, { mcpServers })).toBe('done');
    const bodies = fake.messageRequests().slice(first).map((r) => r.body as { messages: Array<{ content: unknown }> });
    const results = (i: number) => (bodies[i]!.messages.at(-1)!.content as Array<{ content: string; is_error?: boolean }>).map((b) => [b.content, b.is_error === true]);
    expect(results(1)).toEqual([['1', false], ['deliberate failure: no reason', true]]);
    expect(results(2)).toEqual([['2', false]]);
  });

  it('an unknown server name is MCP_SERVER_UNKNOWN, at session creation', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-mcp-inline-'));
    await expect(user.invoke({ dir })).rejects.toMatchObject({ code: 'MCP_SERVER_UNKNOWN' });
  });

  it('a server listed twice is INVALID_INPUT naming it', async () => {
    const twice = agent({ name: 'twice', run: async ({ init }) => (await init({ mcp: ['a', 'a'] })).session() });
    await expect(twice.invoke(undefined)).rejects.toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining("'a'") });
  });
});
