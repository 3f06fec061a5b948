/**
 * A stateful MCP server's connection pinned to the worker that owns it, on the real dev server: two
 * worker processes serve one run; the run's calls to a registered counter server (a real MCP server,
 * test/fixtures/mcp-counter-server.js, counting calls per connection) all land on one connection of one
 * worker. Then that worker is SIGKILLed: the run's next call waits on the dead worker's own queue, the
 * run pins the server again (the other worker), and the calls go on there on a new connection — the
 * first result after the loss says the state was lost. A session keeps its pin across continue-as-new.
 */
import type { ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { startAgent, startSession } from '@fabric-harness/sdk/client';
import { FabricHarnessPlugin, FileTranscriptStore } from '@fabric-harness/sdk/worker';
import { callTools, FakeAnthropicServer, say, type RecordedRequest } from '@fabric-harness/sdk/testing';
import { mcpSession, mcpUser } from '../fixtures/ecosystem-agents';
import { killHard, startWorkerProcess } from '../support/worker-process-control';
import { testConnection, type TestConnection } from '../support/temporal';
import { until } from '../support/waiting';

const COUNTER = path.resolve(__dirname, '../fixtures/mcp-counter-server.js');
const CALLS = 6;
const KILL_AFTER = 3;

type Block = { type: string; content?: unknown };
/** Every tool result the request carries, in conversation order, as text. */
const toolResults = (req: RecordedRequest): string[] =>
  (req.body.messages as Array<{ content: Block[] | string }>).flatMap((m) =>
    (Array.isArray(m.content) ? m.content : []).filter((b) => b.type === 'tool_result').map((b) => (typeof b.content === 'string' ? b.content : JSON.stringify(b.content))),
  );
/** `<owner> <connection> <n>` at the end of a counter result (a note may come first). */
const parse = (text: string) => {
  const m = /(\S+) (\S+) (\d+)"?\]?$/.exec(text.trim());
  if (!m) throw new Error(`not a counter result: ${text}`);
  return { owner: m[1]!, connection: m[2]!, n: Number(m[3]) };
};

describe('MCP: a stateful server pinned to its worker', () => {
  let fake: FakeAnthropicServer;
  let t: TestConnection;
  const workers = new Map<string, ChildProcess>();
  let killed: string | undefined;

  beforeAll(async () => {
    fake = await FakeAnthropicServer.start({
      // By the results so far (not a queue): a model call retried after a kill gets the same answer.
      route: (req) => {
        if (req.path !== '/v1/messages') return undefined;
        const results = toolResults(req);
        if (results.length === KILL_AFTER && killed === undefined) {
          killed = parse(results.at(-1)!).owner;
          void killHard(workers.get(killed)!); // the worker that owns the connection, SIGKILL
        }
        return results.length < CALLS ? callTools({ name: 'counter__count', input: {} }) : say('counted');
      },
    });
    t = await testConnection();
  });
  afterAll(async () => {
    for (const w of workers.values()) await killHard(w);
    await t?.close();
    await fake?.stop();
  });

  it('calls of one run share one connection on one worker; after that worker is killed, the run goes on on the other with a new connection', async () => {
    const storeDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-mcp-pin-store-'));
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-mcp-pin-'));
    const taskQueue = `mcp-pin-${process.pid}-${Date.now()}`;
    for (const identity of [`pin-a-${process.pid}`, `pin-b-${process.pid}`]) {
      workers.set(identity, await startWorkerProcess({ taskQueue, fakeUrl: fake.url, storeDir, identity, mcpCounter: COUNTER }));
    }
    const client = new Client({ connection: t.connection, namespace: t.namespace, plugins: [new FabricHarnessPlugin({ store: new FileTranscriptStore(storeDir) })] });
    const handle = await startAgent(client, mcpUser, { task: 'count', dir, servers: ['counter'] }, { workflowId: `mcp-pin-${Date.now()}`, taskQueue });
    expect((await handle.result()).reply).toBe('counted');

    const last = fake.requests.filter((r) => r.path === '/v1/messages' && toolResults(r).length === CALLS).at(-1)!;
    const results = toolResults(last);
    const counted = results.map(parse);
    const before = counted.slice(0, KILL_AFTER);
    const after = counted.slice(KILL_AFTER);
    // Each call was scheduled on the owner's own queue (the first three), then on the new owner's.
    const history = await handle.fetchHistory();
    const toolQueues = history.events!.flatMap((e) => (e.activityTaskScheduledEventAttributes?.activityType?.name === 'fhTool' ? [e.activityTaskScheduledEventAttributes.taskQueue!.name!] : []));
    expect(toolQueues).toHaveLength(CALLS + 1); // the call the dead worker never took, and its second scheduling
    expect(toolQueues.every((q) => q.includes(':mcp-'))).toBe(true);
    expect(new Set(toolQueues.slice(0, KILL_AFTER + 1)).size).toBe(1);
    expect(new Set(toolQueues.slice(KILL_AFTER + 1)).size).toBe(1);
    expect(toolQueues[KILL_AFTER + 1]).not.toBe(toolQueues[0]);
    // One connection on one worker: its counter goes 1, 2, 3.
    expect(before.map((c) => c.n)).toEqual([1, 2, 3]);
    expect(new Set(before.map((c) => `${c.owner} ${c.connection}`)).size).toBe(1);
    expect(before[0]!.owner).toBe(killed);
    // The other worker, a new connection: from 1 again, and the first result says what was lost.
    expect(after.map((c) => c.n)).toEqual([1, 2, 3]);
    expect(new Set(after.map((c) => `${c.owner} ${c.connection}`)).size).toBe(1);
    expect(after[0]!.owner).not.toBe(killed);
    expect(after[0]!.connection).not.toBe(before[0]!.connection);
    expect(results[KILL_AFTER]).toMatch(/MCP server 'counter': the worker that held this run's connection to it is gone.*state .* is lost/s);
    expect(results.filter((r) => r.includes('is gone'))).toHaveLength(1);

    // In history: the pin (answered by the owner, its own queue), the pin again after the loss.
    const scheduledTypes = history.events!.flatMap((e) => (e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes.activityType!.name!] : []));
    expect(scheduledTypes.filter((x) => x === 'fhMcpPin')).toHaveLength(2);
    expect(scheduledTypes.filter((x) => x === 'fhMcpList')).toHaveLength(1);
    const pinQueues = history.events!.flatMap((e) => {
      const q = e.activityTaskScheduledEventAttributes?.taskQueue?.name;
      return q && q.includes(':mcp-') ? [q] : [];
    });
    expect(new Set(pinQueues).size).toBe(2);
    expect(pinQueues[0]).toContain(killed!);
    // What a pin costs in history: its scheduled, started and completed events.
    const pinIds = new Set(history.events!.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'fhMcpPin').map((e) => String(e.eventId)));
    const pinEvents = history.events!.filter(
      (e) =>
        pinIds.has(String(e.eventId)) ||
        pinIds.has(String(e.activityTaskStartedEventAttributes?.scheduledEventId ?? '')) ||
        pinIds.has(String(e.activityTaskCompletedEventAttributes?.scheduledEventId ?? '')),
    );
    const pinBytes = pinEvents.reduce((n, e) => n + temporal.api.history.v1.HistoryEvent.encode(e).finish().length, 0);
    console.log(`mcp pin: ${pinIds.size} fhMcpPin activities, ${pinEvents.length} events, ${pinBytes} B of history (${Math.round(pinBytes / pinIds.size)} B per pin); pinned queues ${[...new Set(pinQueues)].join(', ')}`);
  }, 240_000);
});

describe('MCP: a session keeps its pinned connection across continue-as-new', () => {
  let fake: FakeAnthropicServer;
  let t: TestConnection;
  const workers: ChildProcess[] = [];

  beforeAll(async () => {
    fake = await FakeAnthropicServer.start({
      // "count" calls the counter once, and the reply is its result; anything else is answered "ok".
      route: (req) => {
        if (req.path !== '/v1/messages') return undefined;
        if (typeof req.body.system === 'string' && /title/i.test(req.body.system)) return say('MCP session');
        const messages = req.body.messages as Array<{ role: string; content: Block[] | string }>;
        const last = messages.at(-1)!;
        if (Array.isArray(last.content) && last.content.some((b) => b.type === 'tool_result')) return say(toolResults(req).at(-1)!);
        const text = typeof last.content === 'string' ? last.content : last.content.map((b) => (b as { text?: string }).text ?? '').join('');
        return text.includes('count') ? callTools({ name: 'counter__count', input: {} }) : say('ok');
      },
    });
    t = await testConnection();
  });
  afterAll(async () => {
    for (const w of workers) await killHard(w);
    await t?.close();
    await fake?.stop();
  });

  it('the continued run calls the same connection on the same worker, without pinning again', async () => {
    const storeDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-mcp-can-store-'));
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-mcp-can-'));
    const taskQueue = `mcp-can-${process.pid}-${Date.now()}`;
    // Two workers: without the carried pin, the next run's pin could land on either.
    for (const identity of [`can-a-${process.pid}`, `can-b-${process.pid}`]) workers.push(await startWorkerProcess({ taskQueue, fakeUrl: fake.url, storeDir, identity, mcpCounter: COUNTER }));
    const client = new Client({ connection: t.connection, namespace: t.namespace, plugins: [new FabricHarnessPlugin({ store: new FileTranscriptStore(storeDir) })] });
    // historyLimit 40: a run's start-up with an MCP server is 19 events (the model, the pin, the list), so a
    // run serves a few prompts before it continues as new (the test below takes the limit under it).
    const s = await startSession(client, mcpSession, { id: `mcp-can-${Date.now()}`, taskQueue, historyLimit: 40, input: { dir, servers: ['counter'] } });
    const firstRun = (await s.workflow.describe()).runId;
    const before = parse(await s.prompt('count'));
    for (let i = 0; i < 20 && (await s.info()).continuedRuns < 2; i++) expect(await s.prompt(`hello ${i}`)).toBe('ok');
    expect((await s.info()).continuedRuns).toBeGreaterThanOrEqual(2);
    const after = parse(await s.prompt('count'));
    // The same connection kept its state: the counter goes on.
    expect(after).toEqual({ owner: before.owner, connection: before.connection, n: before.n + 1 });

    // Of the runs that continued as new, only the first pinned; each listed the server's tools on the
    // owner's own queue. (The run going on now may not have listed them yet.)
    const scheduled: Array<{ run: number; type: string; queue: string }> = [];
    let runs = 0;
    for (let runId: string | undefined = firstRun; runId; ) {
      const events: temporal.api.history.v1.IHistoryEvent[] = (await client.workflow.getHandle(s.workflow.workflowId, runId).fetchHistory()).events ?? [];
      runId = events.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
      if (!runId) break;
      for (const e of events) {
        const a = e.activityTaskScheduledEventAttributes;
        if (a) scheduled.push({ run: runs, type: a.activityType!.name!, queue: a.taskQueue!.name! });
      }
      runs++;
    }
    expect(runs).toBeGreaterThanOrEqual(2);
    expect(scheduled.filter((x) => x.type === 'fhMcpPin').map((x) => x.run)).toEqual([0]);
    const lists = scheduled.filter((x) => x.type === 'fhMcpList');
    expect(lists.map((x) => x.run)).toEqual([...Array(runs).keys()]);
    expect(new Set(lists.map((x) => x.queue)).size).toBe(1);
    expect(lists[0]!.queue).toContain(`:mcp-${before.owner}`);
    await s.end();
  }, 240_000);

  it('a worker killed while it answers a pin costs seconds, not the minute the pin had to answer in', async () => {
    const storeDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-mcp-pinkill-store-'));
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-mcp-pinkill-'));
    const signal = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'fh-hang-')), 'hung');
    const taskQueue = `mcp-pinkill-${process.pid}-${Date.now()}`;
    // The only worker at first takes the pin and never answers it; it is killed, and another starts.
    const first = await startWorkerProcess({ taskQueue, fakeUrl: fake.url, storeDir, identity: `pinkill-a-${process.pid}`, mcpCounter: COUNTER, hangIn: { activity: 'fhMcpPin', signal } });
    workers.push(first);
    const client = new Client({ connection: t.connection, namespace: t.namespace, plugins: [new FabricHarnessPlugin({ store: new FileTranscriptStore(storeDir) })] });
    const s = await startSession(client, mcpSession, { id: `mcp-pinkill-${Date.now()}`, taskQueue, input: { dir, servers: ['counter'] } });
    const answer = s.prompt('hello');
    await until('the pin hangs on the first worker', () => fs.readFile(signal, 'utf8').catch(() => undefined), 60_000);
    await killHard(first);
    const killedAt = Date.now();
    workers.push(await startWorkerProcess({ taskQueue, fakeUrl: fake.url, storeDir, identity: `pinkill-b-${process.pid}`, mcpCounter: COUNTER }));
    expect(await answer).toBe('ok');

    // The pin was tried again once its attempt timed out, on the new worker, well inside the old minute.
    const events = (await s.workflow.fetchHistory()).events!;
    const pin = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'fhMcpPin')!;
    const started = events.find((e) => e.activityTaskStartedEventAttributes?.scheduledEventId?.toString() === pin.eventId?.toString())!;
    expect(started.activityTaskStartedEventAttributes!.attempt).toBe(2);
    expect(started.activityTaskStartedEventAttributes!.lastFailure?.timeoutFailureInfo?.timeoutType).toBe(temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_START_TO_CLOSE);
    const retriedAfterMs = Number(started.eventTime!.seconds) * 1000 + Math.floor((started.eventTime!.nanos ?? 0) / 1e6) - killedAt;
    expect(retriedAfterMs).toBeLessThan(30_000);
    await s.end();
  }, 180_000);

  it('a historyLimit below a run\'s start-up still answers every prompt: each run serves one before it continues as new', async () => {
    const storeDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-mcp-limit-store-'));
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-mcp-limit-'));
    const taskQueue = `mcp-limit-${process.pid}-${Date.now()}`;
    workers.push(await startWorkerProcess({ taskQueue, fakeUrl: fake.url, storeDir, identity: `limit-${process.pid}`, mcpCounter: COUNTER }));
    const client = new Client({ connection: t.connection, namespace: t.namespace, plugins: [new FabricHarnessPlugin({ store: new FileTranscriptStore(storeDir) })] });
    // 20, the lowest allowed: a continued run's start-up with one MCP server already passes it.
    const s = await startSession(client, mcpSession, { id: `mcp-limit-${Date.now()}`, taskQueue, historyLimit: 20, input: { dir, servers: ['counter'] } });
    const within = <T>(ms: number, p: Promise<T>, what: string) =>
      Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms).unref())]);
    const PROMPTS = 4;
    for (let i = 0; i < PROMPTS; i++) expect(await within(60_000, s.prompt(`hello ${i}`), `prompt ${i}`)).toBe('ok');
    const info = await s.info();
    // Every run past the first continued as new after its turn, and none before serving one.
    expect(info.continuedRuns).toBeGreaterThanOrEqual(PROMPTS - 1);
    expect(info.continuedRuns).toBeLessThanOrEqual(PROMPTS);
    await s.end();
  }, 240_000);
});
