/**
 * Sessions across what happens to long conversations: a worker killed while an approval waits and
 * while a store call runs, an interrupt during a model call, deleting a session whose prefix a fork shares, and a
 * deploy of new agent code picked up at continue-as-new. Real dev server, real worker processes.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { startSession } from '@fabric-harness/sdk/client';
import { createWorker, FabricHarnessPlugin, FileTranscriptStore, bundleAgents } from '@fabric-harness/sdk/worker';
import { callTools, type FakeAnthropicServer, say, think } from '@fabric-harness/sdk/testing';
import { isTitleRequest, startSessionFake } from '../support/session-fake';
import { assistant } from '../fixtures/session-agents';
import { DEFAULT_MODEL } from '../../src/core/models';
import { startDelayProxy, type DelayProxy } from '../support/delay-proxy';
import { testConnection, type TestConnection } from '../support/temporal';
import { startTestWorker, type TestWorker } from '../support/test-worker';
import { killableWorkers, killHard } from '../support/worker-process-control';
import { rejection, until } from '../support/waiting';


const sid = (p: string) => `${p}-${process.pid}-${Date.now() % 1_000_000}`;

describe('a session whose worker process is SIGKILLed', () => {
  const workers = killableWorkers();

  it('while a call waits for approval (which holds no worker slot): approved on a new worker', async () => {
    const taskQueue = sid('approve-kill');
    const storeDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-store-'));
    const cwd = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-cwd-'));
    const { t, fake } = workers;
    const first = await workers.start({ taskQueue, fakeUrl: fake.url, storeDir });
    const client = new Client({ connection: t.connection, namespace: t.namespace, plugins: [new FabricHarnessPlugin({ store: new FileTranscriptStore(storeDir) })] });
    const s = await startSession(client, assistant, { id: sid('approval'), taskQueue, settings: { permissionMode: 'ask', workingDirectory: cwd } });
    fake.enqueue(callTools({ name: 'write_file', input: { path: 'after-kill.txt', content: 'survived' } }), say('written after the restart'));
    const reply = s.prompt('write the file');
    const pending = await until('the approval', async () => (await s.pendingApprovals())[0]);
    // Waiting is workflow state, not a running activity: nothing holds a worker slot.
    const desc = await s.workflow.describe();
    expect(desc.raw.pendingActivities ?? []).toHaveLength(0);

    await killHard(first);
    await workers.start({ taskQueue, fakeUrl: fake.url, storeDir });
    expect((await s.info()).pendingApprovals.map((p) => p.callId)).toEqual([pending.callId]);
    await s.approve(pending.callId);
    expect(await reply).toBe('written after the restart');
    expect(await fs.readFile(path.join(cwd, 'after-kill.txt'), 'utf8')).toBe('survived');
    await s.end();
  });

  it('killed during a store call (a continued run loading its transcript): noticed through heartbeats, not the two-minute start-to-close timeout', async () => {
    const taskQueue = sid('load-kill');
    const storeDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-store-'));
    const signal = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'fh-hang-')), 'hung');
    // The first worker's store never answers inside fhLoadTranscript: the next run's first activity.
    const { t, fake } = workers;
    const first = await workers.start({ taskQueue, fakeUrl: fake.url, storeDir, hangIn: { activity: 'fhLoadTranscript', signal } });
    const client = new Client({ connection: t.connection, namespace: t.namespace, plugins: [new FabricHarnessPlugin({ store: new FileTranscriptStore(storeDir) })] });
    const s = await startSession(client, assistant, { id: sid('load-kill'), taskQueue, historyLimit: 20 });
    // Prompts until a turn takes the run past its history limit: the next run hangs loading the transcript.
    // A prompt sent meanwhile waits for that run (it is answered after the kill, once).
    const HUNG = Symbol('hung');
    const hung = until('the continued run hangs loading its transcript', () => fs.readFile(signal, 'utf8').catch(() => undefined), 90_000).then(() => HUNG);
    const replies: Array<Promise<string>> = [];
    const expected: string[] = [];
    for (let i = 0; i < 6; i++) {
      fake.enqueue(say(`answer ${i}`));
      expected.push(`answer ${i}`);
      const reply = s.prompt(`question ${i}`);
      replies.push(reply);
      if ((await Promise.race([reply, hung])) === HUNG) break;
    }
    await hung;
    const hungRun = (await s.workflow.describe()).runId;
    await killHard(first);
    await workers.start({ taskQueue, fakeUrl: fake.url, storeDir });

    fake.enqueue(say('after the kill'));
    replies.push(s.prompt('after the kill'));
    expect(await Promise.all(replies)).toEqual([...expected, 'after the kill']);
    const asked = (await s.messages()).filter((m) => m.type === 'user').map((m) => (m as { text: string }).text);
    expect(asked).toEqual([...expected.map((_, i) => `question ${i}`), 'after the kill']);

    // The load that hung was retried after its heartbeat timed out: the retry's started event says so.
    const events = (await client.workflow.getHandle(s.workflow.workflowId, hungRun).fetchHistory()).events!;
    const load = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'fhLoadTranscript');
    expect(load?.activityTaskScheduledEventAttributes?.heartbeatTimeout).toBeDefined();
    const started = events.find((e) => e.activityTaskStartedEventAttributes?.scheduledEventId?.toString() === load!.eventId?.toString());
    expect(started?.activityTaskStartedEventAttributes?.attempt).toBe(2);
    expect(started?.activityTaskStartedEventAttributes?.lastFailure?.timeoutFailureInfo?.timeoutType).toBe(temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_HEARTBEAT);
    await s.end();
  }, 120_000);
});

describe('interrupt during a model call; delete with a fork sharing the prefix', () => {
  let fake: FakeAnthropicServer;
  let proxy: DelayProxy;
  let w: TestWorker;

  beforeAll(async () => {
    fake = await startSessionFake();
    proxy = await startDelayProxy(fake.url);
    w = await startTestWorker({ name: 'sessions-durable', baseURL: proxy.url });
  });
  afterAll(async () => {
    await w?.stop();
    await proxy?.stop();
    await fake?.stop();
  });

  it('interrupts a model call at once; the user message stays and the next one says it was interrupted', async () => {
    const s = await startSession(w.client, assistant, { id: sid('interrupt-model'), taskQueue: w.taskQueue });
    // Held until the proxy stops: the cancelled call never reaches the model's script.
    proxy.delayNext(120_000);
    const reply = s.prompt('a question the model is slow on');
    await proxy.held();
    const started = Date.now();
    expect(await s.interrupt()).toMatchObject({ interrupted: true });
    expect((await rejection(reply)).code).toBe('INTERRUPTED');
    expect(Date.now() - started).toBeLessThan(10_000);
    expect((await s.messages()).map((m) => m.type)).toEqual(['user']);
    expect((await s.events()).some((e) => e.type === 'interrupted' && e.data.during === 'model')).toBe(true);
    fake.enqueue(say('second answer'));
    expect(await s.prompt('another question')).toBe('second answer');
    const last = fake.messageRequests().filter((r) => !isTitleRequest(r)).at(-1)!;
    const text = JSON.stringify(last.body.messages);
    expect(text).toContain('a question the model is slow on');
    expect(text).toMatch(/interrupted/i);
    expect((await s.info()).status).toBe('needs-review');
    await s.end();
  });

  it('delete removes the session and the blobs only it used; the fork keeps the shared prefix', async () => {
    const s = await startSession(w.client, assistant, { id: sid('delete-gc'), taskQueue: w.taskQueue });
    const big = (tag: string) => `${tag} ${'x'.repeat(4000)}`;
    fake.enqueue(say(big('a1')), say(big('a2')), say(big('a3')));
    await s.prompt('q1');
    await s.prompt('q2');
    const fork = await s.fork({ atMessage: 1 });
    await s.prompt('q3 only in the original');
    fake.enqueue(say('fork answer'));
    expect(await fork.prompt('q2 in the fork')).toBe('fork answer');

    const result = await s.delete({ store: { dir: w.storeDir, olderThanMs: 0 } });
    expect(result.runs).toBe(1);
    expect(result.garbage!.removed.length).toBeGreaterThan(0);
    // What only the original referred to is gone (its last segments); the fork's prefix is not.
    expect((await rejection(s.info())).code).toBe('SESSION_NOT_FOUND');
    fake.enqueue(say('fork still answers'));
    expect(await fork.prompt('and again')).toBe('fork still answers');
    const lastReq = fake.messageRequests().filter((r) => !isTitleRequest(r)).at(-1)!;
    expect(JSON.stringify(lastReq.body.messages)).toContain('a1 xxx');
    await fork.end();
  });
});

describe('settings that change mid-session', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;

  beforeAll(async () => {
    fake = await startSessionFake({
      onlyListedModels: true,
      models: {
        [DEFAULT_MODEL]: { maxInputTokens: 200_000 },
        'claude-haiku-4-5': { maxInputTokens: 200_000 },
        'claude-opus-4-1': { maxInputTokens: 200_000 },
      },
    });
    w = await startTestWorker({ name: 'sessions-settings', baseURL: fake.url });
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  it('switches the model for the next call; an unknown model is refused and changes nothing', async () => {
    const s = await startSession(w.client, assistant, { id: sid('model'), taskQueue: w.taskQueue });
    fake.enqueue(say('from the default'), say('from opus'));
    expect(await s.prompt('hi')).toBe('from the default');
    expect(fake.messageRequests().filter((r) => !isTitleRequest(r)).at(-1)!.body.model).toBe(DEFAULT_MODEL);
    const before = fake.messageRequests().length;

    const err = await rejection(s.updateSettings({ model: 'claude-imaginary-9' }));
    expect(err.code).toBe('UNKNOWN_MODEL');
    expect((await s.info()).settings.model).toBe(DEFAULT_MODEL);

    const info = await s.updateSettings({ model: 'claude-opus-4-1', thinking: 'high' });
    expect(info.settings.model).toBe('claude-opus-4-1');
    expect(info.settings.thinking).toBe('high');
    expect(await s.prompt('and now?')).toBe('from opus');
    const after = fake.messageRequests().slice(before).filter((r) => r.path === '/v1/messages' && !isTitleRequest(r));
    expect(after.at(-1)!.body.model).toBe('claude-opus-4-1');
    // The conversation stayed: the new model sees the first turn.
    expect(JSON.stringify(after.at(-1)!.body.messages)).toContain('from the default');
    await s.end();
  });

  it("sends the session's thinking level from the next call; a signed thinking block and a tool call round-trip", async () => {
    const s = await startSession(w.client, assistant, { id: sid('thinking'), taskQueue: w.taskQueue });
    const calls = () => fake.messageRequests().filter((r) => r.path === '/v1/messages' && !isTitleRequest(r));
    fake.enqueue(say('no thinking yet'));
    expect(await s.prompt('hi')).toBe('no thinking yet');
    expect(calls().at(-1)!.body.thinking).toBeUndefined();

    expect((await s.updateSettings({ thinking: 'high' })).settings.thinking).toBe('high');
    const before = calls().length;
    fake.enqueue(
      callTools(think('I should read the notes first.'), { name: 'read_file', input: { path: 'notes.txt' } }),
      say('Read them.', { thinking: 'The read is done.' }),
    );
    expect(await s.prompt('read the notes')).toBe('Read them.');
    const [first, second] = calls().slice(before);
    expect(first!.body.thinking).toEqual({ type: 'enabled', budget_tokens: 16384 });
    expect(first!.body.max_tokens).toBe(16384 + 4096);
    // The follow-up (same turn) carries the signed block unchanged before the tool call; the fake verified it.
    const assistantTurn = second!.body.messages.at(-2);
    expect(assistantTurn.role).toBe('assistant');
    expect(assistantTurn.content[0]).toEqual({ type: 'thinking', thinking: 'I should read the notes first.', signature: expect.stringMatching(/^fake_sig_/) });
    expect(assistantTurn.content[1]).toMatchObject({ type: 'tool_use', name: 'read_file' });
    expect(fake.requests.filter((r) => r.path === '/v1/messages').length).toBe(fake.messageRequests().length); // none rejected
    await s.end();
  });
});

describe('a deploy of new agent code reaches a running session at continue-as-new', () => {
  let t: TestConnection;
  let fake: FakeAnthropicServer;

  beforeAll(async () => {
    t = await testConnection();
    fake = await startSessionFake();
  });
  afterAll(async () => {
    await fake?.stop();
    await t?.close();
  });

  async function worker(release: 'v1' | 'v2', taskQueue: string, storeDir: string): Promise<{ worker: Worker; running: Promise<void> }> {
    const module = path.resolve(__dirname, '../fixtures/upgrade', `${release}.ts`);
    const bundle = await bundleAgents([module], { logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: console.error } as never });
    const connection = await NativeConnection.connect({ address: t.address });
    const wk = await createWorker({
      agents: [module],
      connection,
      namespace: t.namespace,
      taskQueue,
      model: { apiKey: 'test-key', baseURL: fake.url },
      store: new FileTranscriptStore(storeDir),
      workflowBundle: { code: bundle.code },
    });
    const running = wk.run().finally(() => connection.close());
    return { worker: wk, running };
  }

  it('replays the old run on the new code (patched() false), then takes the new path after continue-as-new', async () => {
    const taskQueue = sid('upgrade');
    const storeDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-store-'));
    const client = new Client({ connection: t.connection, namespace: t.namespace, plugins: [new FabricHarnessPlugin({ store: new FileTranscriptStore(storeDir) })] });
    const v1 = await worker('v1', taskQueue, storeDir);
    const s = await startSession(client, 'upgrader', { id: sid('upgrade'), taskQueue, historyLimit: 60 });
    fake.enqueue(say('one'));
    expect(await s.prompt('first')).toBe('one');
    const firstRun = (await s.info()).runId;
    v1.worker.shutdown();
    await v1.running;

    const v2 = await worker('v2', taskQueue, storeDir);
    try {
      const systems: string[] = [];
      let i = 0;
      while ((await s.info()).runId === firstRun && i < 30) {
        fake.enqueue(say(`answer ${i}`));
        await s.prompt(`turn ${i++}`);
        systems.push(fake.messageRequests().filter((r) => !isTitleRequest(r)).at(-1)!.body.system);
      }
      // The run release 1 started kept release 1's path on release 2's code (a replay would have failed otherwise).
      expect(systems[0]).toBe('You are release one.');
      expect((await s.info()).runId).not.toBe(firstRun);
      fake.enqueue(say('after the upgrade'));
      expect(await s.prompt('and now?')).toBe('after the upgrade');
      expect(fake.messageRequests().filter((r) => !isTitleRequest(r)).at(-1)!.body.system).toBe('You are release two.');
      // The conversation came along.
      const users = (await s.messages()).filter((m) => m.type === 'user').map((m) => (m as { text: string }).text);
      expect(users[0]).toBe('first');
      await s.end();
    } finally {
      v2.worker.shutdown();
      await v2.running;
    }
  });
});
