/**
 * Tools from MCP servers on the real dev server: a real MCP server (test/fixtures/mcp-server.js, the
 * SDK's server API) over stdio and streamable HTTP; the list recorded once per run, each call an
 * activity, a stateful server's connection kept for the run (pinned to one worker: mcp-pinning.test.ts), error results and a server that dies
 * mid-call answered to the model, and a replay after the server's tool list changed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Worker } from '@temporalio/worker';
import { decodeFailure, startAgent } from '@fabric-harness/sdk/client';
import { FabricHarnessPlugin, FileTranscriptStore } from '@fabric-harness/sdk/worker';
import { Client } from '@temporalio/client';
import { killHard, startWorkerProcess } from '../support/worker-process-control';
import { callTools, FakeAnthropicServer, say, type RecordedRequest } from '@fabric-harness/sdk/testing';
import { mcpUser } from '../fixtures/ecosystem-agents';
import { testBundle } from '../support/bundle';
import { startTestWorker, type TestWorker } from '../support/test-worker';

const SERVER = path.resolve(__dirname, '../fixtures/mcp-server.js');
const stdio = (extra: Record<string, unknown> = {}) => ({ name: 't', command: process.execPath, args: [SERVER], ...extra });

type Block = { type: string; tool_use_id?: string; content?: unknown; is_error?: boolean };
/** The tool results the model was sent in a request's last message, in order. */
const toolResults = (req: RecordedRequest): Array<{ content: string; isError: boolean }> => {
  const last = (req.body.messages as Array<{ content: Block[] | string }>).at(-1)!;
  return (Array.isArray(last.content) ? last.content : [])
    .filter((b) => b.type === 'tool_result')
    .map((b) => ({ content: typeof b.content === 'string' ? b.content : JSON.stringify(b.content), isError: b.is_error === true }));
};
const scheduled = (history: { events?: Array<{ activityTaskScheduledEventAttributes?: { activityType?: { name?: string | null } | null } | null }> | null }) =>
  (history.events ?? []).flatMap((e) => (e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes.activityType!.name!] : []));

async function startHttpServer(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [SERVER, '--http'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /PORT (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`MCP HTTP server exited with ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}/mcp`, child };
}

describe('MCP tools', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;
  let dir: string;
  let http: { url: string; child: ChildProcess } | undefined;

  beforeAll(async () => {
    fake = await FakeAnthropicServer.start();
    w = await startTestWorker({
      name: 'mcp',
      baseURL: fake.url,
      // A server the worker registers: its env (a token, say) stays on the worker.
      mcpServers: { registered: { command: process.execPath, args: [SERVER], env: { MCP_SECRET_TOKEN: 'worker-only-secret' } } },
    });
  });
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-mcp-'));
  });
  afterAll(async () => {
    http?.child.kill('SIGKILL');
    await w?.stop();
    await fake?.stop();
  });

  it('stdio: lists once (recorded), calls as activities, keeps one connection for the run, errors go back to the model', async () => {
    fake.enqueue(
      callTools({ name: 't__echo', input: { text: 'hello' } }, { name: 't__count', input: {} }),
      callTools({ name: 't__count', input: {} }, { name: 't__fail', input: { why: 'asked to' } }),
      callTools({ name: 't__add', input: { a: 'not a number' } }, { name: 't__env', input: {} }),
      say('done'),
    );
    const start = fake.messageRequests().length;
    const handle = await startAgent(w.client, mcpUser, { task: 'use them', dir, servers: [stdio()] }, { workflowId: `mcp-stdio-${Date.now()}`, taskQueue: w.taskQueue });
    expect((await handle.result()).reply).toBe('done');
    const requests = fake.messageRequests().slice(start);
    expect(requests[0]!.body.tools.map((t: { name: string }) => t.name)).toEqual(['t__echo', 't__add', 't__count', 't__fail', 't__env', 't__die', 't__touch', 't__slow']);
    // The server's own JSON schema is what the model sees.
    expect(requests[0]!.body.tools[0].input_schema).toMatchObject({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] });
    expect(toolResults(requests[1]!)).toEqual([{ content: 'hello', isError: false }, { content: '1', isError: false }]);
    // The same connection: the server's per-connection counter goes on.
    expect(toolResults(requests[2]!)).toEqual([{ content: '2', isError: false }, { content: 'deliberate failure: asked to', isError: true }]);
    const [badArgs, env] = toolResults(requests[3]!);
    expect(badArgs!.isError).toBe(true);
    expect(badArgs!.content).toMatch(/Invalid arguments for tool add/);
    // The bash tool's minimal environment, in the sandbox directory.
    const seen = JSON.parse(env!.content) as { cwd: string; names: string[] };
    expect(seen.cwd).toBe(dir);
    expect(seen.names.filter((n) => !['HOME', 'LANG', 'PATH', 'TERM', 'TMPDIR', 'PWD', 'SHLVL', '_'].includes(n))).toEqual([]);
    const history = await handle.fetchHistory();
    const types = scheduled(history);
    expect(types.filter((t) => t === 'fhMcpList')).toHaveLength(1);
    expect(types.filter((t) => t === 'fhTool')).toHaveLength(6);
  });

  it('a worker-registered server: named by the agent, its env stays on the worker and out of history', async () => {
    fake.enqueue(callTools({ name: 'registered__env', input: {} }), say('ok'));
    const start = fake.messageRequests().length;
    const handle = await startAgent(w.client, mcpUser, { task: 'env', dir, servers: ['registered'] }, { workflowId: `mcp-registered-${Date.now()}`, taskQueue: w.taskQueue });
    expect((await handle.result()).reply).toBe('ok');
    const seen = JSON.parse(toolResults(fake.messageRequests()[start + 1]!)[0]!.content) as { names: string[] };
    expect(seen.names).toContain('MCP_SECRET_TOKEN');
    expect(JSON.stringify((await handle.fetchHistory()).events)).not.toContain('worker-only-secret');
  });

  it('an unknown registered server fails the run with MCP_SERVER_UNKNOWN', async () => {
    const handle = await startAgent(w.client, mcpUser, { task: 'x', dir, servers: ['nope'] }, { workflowId: `mcp-unknown-${Date.now()}`, taskQueue: w.taskQueue });
    const err = await handle.result().then(() => undefined, (e: unknown) => e);
    expect(decodeFailure(err)).toMatchObject({ code: 'MCP_SERVER_UNKNOWN', server: 'nope', known: ['registered'] });
  });

  it('a server that dies mid-call: an error result for that call, a new connection for the next', async () => {
    fake.enqueue(
      callTools({ name: 't__count', input: {} }),
      callTools({ name: 't__die', input: {} }),
      callTools({ name: 't__count', input: {} }),
      say('survived'),
    );
    const start = fake.messageRequests().length;
    const handle = await startAgent(w.client, mcpUser, { task: 'die', dir, servers: [stdio()] }, { workflowId: `mcp-die-${Date.now()}`, taskQueue: w.taskQueue });
    expect((await handle.result()).reply).toBe('survived');
    const requests = fake.messageRequests().slice(start);
    expect(toolResults(requests[1]!)).toEqual([{ content: '1', isError: false }]);
    const [died] = toolResults(requests[2]!);
    expect(died!.isError).toBe(true);
    expect(died!.content).toMatch(/closed the connection during the call/);
    // A fresh server process: its counter starts again.
    expect(toolResults(requests[3]!)).toEqual([{ content: '1', isError: false }]);
  });

  it('a worker lost mid-call: the run pins the server to another worker, which retries the call on its own connection and says the state was lost', async () => {
    const storeDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-mcp-kill-store-'));
    const taskQueue = `mcp-kill-${process.pid}-${Date.now()}`;
    fake.enqueue(callTools({ name: 't__slow', input: {} }), callTools({ name: 't__count', input: {} }), say('recovered'));
    const start = fake.messageRequests().length;
    const first = await startWorkerProcess({ taskQueue, fakeUrl: fake.url, storeDir });
    let second: ChildProcess | undefined;
    try {
      const client = new Client({ connection: w.t.connection, namespace: w.t.namespace, plugins: [new FabricHarnessPlugin({ store: new FileTranscriptStore(storeDir) })] });
      const handle = await startAgent(client, mcpUser, { task: 'slow', dir, servers: [stdio()] }, { workflowId: `mcp-kill-${Date.now()}`, taskQueue });
      for (let i = 0; i < 300 && !existsSync(path.join(dir, 'slow-once')); i++) await new Promise((r) => setTimeout(r, 100));
      await killHard(first); // SIGKILL mid-call: its connection (and server) is gone
      second = await startWorkerProcess({ taskQueue, fakeUrl: fake.url, storeDir });
      expect(await handle.result()).toMatchObject({ reply: 'recovered' });
      const requests = fake.messageRequests().slice(start);
      const [slowResult] = toolResults(requests[1]!);
      expect(slowResult).toEqual({ content: expect.stringMatching(/^\[MCP server 't': the worker that held this run's connection to it is gone.*is lost\.\]\nfinished$/s), isError: false });
      // The second worker's own connection: a new server process, its counter from 1.
      expect(toolResults(requests[2]!)).toEqual([{ content: '1', isError: false }]);
      // The call went to the dead worker's own queue (its retry there never started), then to the new owner's.
      const history = await handle.fetchHistory();
      const queues = history.events!.flatMap((e) => (e.activityTaskScheduledEventAttributes?.activityType?.name === 'fhTool' ? [e.activityTaskScheduledEventAttributes.taskQueue!.name!] : []));
      expect(queues).toHaveLength(3);
      expect(queues.every((q) => q.includes(':mcp-'))).toBe(true);
      expect(queues[1]).not.toBe(queues[0]);
      expect(queues[2]).toBe(queues[1]);
      expect(scheduled(history).filter((t) => t === 'fhMcpPin')).toHaveLength(2);
    } finally {
      await killHard(first);
      if (second) await killHard(second);
    }
  }, 120_000);

  it('streamable HTTP: list, call, an error result, state per connection', async () => {
    http = await startHttpServer();
    fake.enqueue(
      callTools({ name: 'h__add', input: { a: 2, b: 3 } }, { name: 'h__count', input: {} }),
      callTools({ name: 'h__count', input: {} }, { name: 'h__fail', input: {} }),
      say('over http'),
    );
    const start = fake.messageRequests().length;
    const handle = await startAgent(w.client, mcpUser, { task: 'http', dir, servers: [{ name: 'h', url: http.url }] }, { workflowId: `mcp-http-${Date.now()}`, taskQueue: w.taskQueue });
    expect((await handle.result()).reply).toBe('over http');
    const requests = fake.messageRequests().slice(start);
    expect(requests[0]!.body.tools.map((t: { name: string }) => t.name)).toContain('h__add');
    expect(toolResults(requests[1]!)).toEqual([{ content: '5', isError: false }, { content: '1', isError: false }]);
    expect(toolResults(requests[2]!)).toEqual([{ content: '2', isError: false }, { content: 'deliberate failure: no reason', isError: true }]);
  });

  it('a recorded run replays after the server changed its tool list (the list is in history)', async () => {
    await fs.writeFile(path.join(dir, 'toolset'), 'v1');
    fake.enqueue(callTools({ name: 't__echo', input: { text: 'hi' } }), say('v1 run'));
    const handle = await startAgent(w.client, mcpUser, { task: 'v1', dir, servers: [stdio()] }, { workflowId: `mcp-replay-${Date.now()}`, taskQueue: w.taskQueue });
    expect((await handle.result()).reply).toBe('v1 run');
    const history = await handle.fetchHistory();

    // The server now lists `shout` instead of `echo`: a new run sees that…
    await fs.writeFile(path.join(dir, 'toolset'), 'v2');
    fake.enqueue(say('v2 run'));
    const start = fake.messageRequests().length;
    const next = await startAgent(w.client, mcpUser, { task: 'v2', dir, servers: [stdio()] }, { workflowId: `mcp-replay-next-${Date.now()}`, taskQueue: w.taskQueue });
    expect((await next.result()).reply).toBe('v2 run');
    const names = fake.messageRequests()[start]!.body.tools.map((t: { name: string }) => t.name);
    expect(names).toContain('t__shout');
    expect(names).not.toContain('t__echo');

    // …and the recorded run still replays: its list comes from history, not from the server.
    await expect(
      Worker.runReplayHistory({ workflowBundle: await testBundle(), plugins: [new FabricHarnessPlugin()], replayName: 'mcp-replay' }, history, handle.workflowId),
    ).resolves.toBeUndefined();
  });
});
