/**
 * Model connections end to end, on the real dev server and inline: a worker with two connections that
 * both speak Anthropic's protocol, each to its own fake. A session on `alt` reaches alt's fake and no
 * other, its activity inputs name the connection, its model changes within it, its connection is
 * locked after the first message (CONNECTION_LOCKED, the session still usable), and a connection the
 * worker lacks is UNKNOWN_CONNECTION naming the worker's own, answered to every prompt the run accepted.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { defaultPayloadConverter } from '@temporalio/common';
import { startSession } from '@fabric-harness/sdk/client';
import { startFlow } from '../../src/client/flows';
import { agent, agentAsTool } from '@fabric-harness/sdk';
import { callTools, FakeAnthropicServer, say } from '@fabric-harness/sdk/testing';
import { isTitleRequest, SCRIPTED_TITLE, startSessionFake } from '../support/session-fake';
import { assistant, longAssistant } from '../fixtures/session-agents';
import { helpedSession } from '../fixtures/ecosystem-agents';
import { startTestWorker, type TestWorker } from '../support/test-worker';
import { rejection, until } from '../support/waiting';
import { auditTranscript, type ModelCallRecord } from '@fabric-harness/sdk/audit';

const conversationRequests = (fake: FakeAnthropicServer) => fake.messageRequests().filter((r) => r.path === '/v1/messages' && !isTitleRequest(r));

describe('model connections', () => {
  let fake1: FakeAnthropicServer;
  let fake2: FakeAnthropicServer;
  let w: TestWorker;
  let n = 0;
  const sid = (p: string) => `${p}-${process.pid}-${Date.now() % 100000}-${n++}`;

  beforeAll(async () => {
    fake1 = await startSessionFake();
    fake2 = await startSessionFake({ apiKey: 'k' });
    w = await startTestWorker({ name: 'connections', baseURL: fake1.url, connections: { alt: { provider: 'anthropic', baseURL: fake2.url, apiKey: 'k' } } });
  });
  afterAll(async () => {
    await w?.stop();
    await fake1?.stop();
    await fake2?.stop();
  });

  it("sends a session on 'alt' to alt's endpoint, names it in each model call's input, changes the model within it and locks it", async () => {
    // `connection` beside `settings` is settings.connection; the two must agree.
    expect((await rejection(startSession(w.client, assistant, { taskQueue: w.taskQueue, connection: 'alt', settings: { connection: 'anthropic' } }))).code).toBe('INVALID_INPUT');
    const s = await startSession(w.client, assistant, { id: sid('alt'), taskQueue: w.taskQueue, connection: 'alt' });
    const before1 = conversationRequests(fake1).length;
    fake2.enqueue(say('from alt'));
    expect(await s.prompt('hello there')).toBe('from alt');
    expect(conversationRequests(fake2)).toHaveLength(1);
    expect(conversationRequests(fake1)).toHaveLength(before1);
    // Its title too went through its own connection.
    expect(fake2.messageRequests().some(isTitleRequest)).toBe(true);
    expect((await s.info()).title).toBe(SCRIPTED_TITLE);

    // The model changes within the connection, from the next call on, and the change is recorded.
    const info = await s.updateSettings({ model: 'claude-opus-4-1' });
    expect(info.settings).toMatchObject({ model: 'claude-opus-4-1', connection: 'alt' });
    fake2.enqueue(say('opus on alt'));
    expect(await s.prompt('and now?')).toBe('opus on alt');
    expect(conversationRequests(fake2).at(-1)!.body.model).toBe('claude-opus-4-1');

    // The connection cannot change after the first message; the session stays usable.
    const locked = await rejection(s.updateSettings({ connection: 'anthropic' }));
    expect(locked.code).toBe('CONNECTION_LOCKED');
    expect(locked.message).toMatch(/'alt'.*'anthropic'/);
    fake2.enqueue(say('still on alt'));
    expect(await s.prompt('still there?')).toBe('still on alt');
    expect(conversationRequests(fake1)).toHaveLength(before1);

    // History: every model call names its connection and model; the model lookup too.
    const events = (await s.workflow.fetchHistory()).events!;
    const inputs = (type: string) =>
      events
        .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === type)
        .map((e) => defaultPayloadConverter.fromPayload<{ model?: string; connection?: string }>(e.activityTaskScheduledEventAttributes!.input!.payloads![0]!));
    const models = inputs('fhModel');
    expect(models.map((i) => i.connection)).toEqual(['alt', 'alt', 'alt']);
    expect(models.map((i) => i.model)).toEqual([expect.any(String), 'claude-opus-4-1', 'claude-opus-4-1']);
    expect(inputs('fhResolveModel').every((i) => i.connection === 'alt')).toBe(true);
    expect(inputs('fhSummarize').map((i) => i.connection)).toEqual(['alt']);

    // The audit transcript says which connection and model answered each call.
    const audit = await auditTranscript(await s.workflow.fetchHistory());
    const calls = audit.json.records.filter((r): r is ModelCallRecord => r.type === 'model_call');
    expect(calls.map((c) => [c.connection, c.model])).toEqual([['alt', expect.any(String)], ['alt', 'claude-opus-4-1'], ['alt', 'claude-opus-4-1']]);
    expect(audit.markdown.match(/^- Connection: alt · model claude-opus-4-1$/gm)).toHaveLength(2);
    await s.end();
  });

  it("asks a session's title of its own model on a named connection, of Claude Haiku on the default, of the agent's titleModel on both", async () => {
    // Haiku's id is Anthropic's: on OpenAI or Gemini it does not exist, on Bedrock or Vertex it is spelled
    // otherwise. So without the agent's `sessions.titleModel` (longAssistant names none), a named
    // connection's title comes from the session's own model, which it has.
    const titles = (fake: FakeAnthropicServer) => fake.messageRequests().filter(isTitleRequest).map((r) => r.body.model as string);
    const before2 = titles(fake2).length;
    const onAlt = await startSession(w.client, longAssistant, { id: sid('title-alt'), taskQueue: w.taskQueue, connection: 'alt', model: 'claude-opus-4-1' });
    fake2.enqueue(say('titled on alt'));
    expect(await onAlt.prompt('plan a garden trip')).toBe('titled on alt');
    expect(await until('the title on alt', async () => ((await onAlt.info()).title === SCRIPTED_TITLE ? true : undefined))).toBe(true);
    expect(titles(fake2).slice(before2)).toEqual(['claude-opus-4-1']);
    await onAlt.end();

    const before1 = titles(fake1).length;
    const onDefault = await startSession(w.client, longAssistant, { id: sid('title-default'), taskQueue: w.taskQueue });
    fake1.enqueue(say('titled on the default'));
    expect(await onDefault.prompt('plan a garden trip')).toBe('titled on the default');
    expect(await until('the title on the default', async () => ((await onDefault.info()).title === SCRIPTED_TITLE ? true : undefined))).toBe(true);
    expect(titles(fake1).slice(before1)).toEqual(['claude-haiku-4-5']);
    await onDefault.end();

    // The agent's titleModel (assistant's is claude-haiku-4-5) is asked on any connection.
    const configured = await startSession(w.client, assistant, { id: sid('title-configured'), taskQueue: w.taskQueue, connection: 'alt', model: 'claude-opus-4-1' });
    fake2.enqueue(say('titled by the agent\'s model'));
    expect(await configured.prompt('plan a garden trip')).toBe("titled by the agent's model");
    expect(await until('the configured title', async () => ((await configured.info()).title === SCRIPTED_TITLE ? true : undefined))).toBe(true);
    expect(titles(fake2).slice(before2)).toEqual(['claude-opus-4-1', 'claude-haiku-4-5']);
    await configured.end();
  });

  it('moves a session to another connection before its first message; one the worker lacks changes nothing', async () => {
    const s = await startSession(w.client, assistant, { id: sid('move'), taskQueue: w.taskQueue });
    const refused = await rejection(s.updateSettings({ connection: 'azure' }));
    expect(refused.code).toBe('UNKNOWN_CONNECTION');
    expect((await s.info()).settings.connection).toBe('anthropic');
    expect((await s.updateSettings({ connection: 'alt' })).settings.connection).toBe('alt');
    const before1 = conversationRequests(fake1).length;
    fake2.enqueue(say('moved to alt'));
    expect(await s.prompt('where are you?')).toBe('moved to alt');
    expect(conversationRequests(fake1)).toHaveLength(before1);
    expect((await rejection(s.updateSettings({ connection: 'anthropic' }))).code).toBe('CONNECTION_LOCKED');
    await s.end();
  });

  it('checks a connection edit that arrives before the session opened its conversation', async () => {
    // No worker on this queue yet: the edit reaches the run in its first task, before init() has run.
    const taskQueue = `connections-early-${process.pid}-${Date.now()}`;
    const s = await startSession(w.client, assistant, { id: sid('early'), taskQueue });
    const refused = rejection(s.updateSettings({ connection: 'azure' }));
    const late = await startTestWorker({ name: 'connections-early', taskQueue, baseURL: fake1.url, connections: { alt: { provider: 'anthropic', baseURL: fake2.url, apiKey: 'k' } } });
    try {
      expect((await refused).code).toBe('UNKNOWN_CONNECTION');
      expect((await s.info()).settings.connection).toBe('anthropic');
      fake1.enqueue(say('still on the default'));
      expect(await s.prompt('hello?')).toBe('still on the default');
      await s.end();
    } finally {
      await late.stop();
    }
  });

  it("runs a sub-agent (a child workflow) on its session's connection: the connection rides in the child's envelope", async () => {
    const s = await startSession(w.client, helpedSession, { id: sid('sub'), taskQueue: w.taskQueue, settings: { connection: 'alt' } });
    const before1 = conversationRequests(fake1).length;
    const before2 = conversationRequests(fake2).length;
    fake2.enqueue(callTools({ name: 'eco-helper', input: { task: 'help me' } }), say('helped'), say('the helper helped'));
    expect(await s.prompt('get help')).toBe('the helper helped');
    expect(conversationRequests(fake2).length - before2).toBe(3);
    expect(conversationRequests(fake1)).toHaveLength(before1);
    await s.end();
  });

  it('leaves the default connection unnamed: its inputs are what they were before connections existed', async () => {
    const s = await startSession(w.client, assistant, { id: sid('default'), taskQueue: w.taskQueue });
    fake1.enqueue(say('from the default'));
    expect(await s.prompt('hi')).toBe('from the default');
    const events = (await s.workflow.fetchHistory()).events!;
    const scheduled = events.filter((e) => ['fhModel', 'fhResolveModel', 'fhSummarize'].includes(e.activityTaskScheduledEventAttributes?.activityType?.name ?? ''));
    expect(scheduled.length).toBeGreaterThanOrEqual(2);
    for (const e of scheduled) expect(defaultPayloadConverter.fromPayload<object>(e.activityTaskScheduledEventAttributes!.input!.payloads![0]!)).not.toHaveProperty('connection');
    expect((await s.info()).settings.connection).toBe('anthropic');
    await s.end();
  });

  it("runs a flow stage on the connection its `connection` attribute names, the others on the default", async () => {
    const workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-conn-flow-'));
    const dot = `digraph {
      start [shape=Mdiamond]; exit [shape=Msquare]
      ask_alt [prompt="on alt", connection="alt", model="claude-opus-4-1"]
      ask_default [prompt="on the default"]
      start -> ask_alt -> ask_default -> exit
    }`;
    const before1 = conversationRequests(fake1).length;
    const before2 = conversationRequests(fake2).length;
    fake2.enqueue(say('alt answered'));
    fake1.enqueue(say('default answered'));
    const result = await (await startFlow(w.client, dot, { workDir, taskQueue: w.taskQueue, workflowId: sid('flow') })).result();
    expect(result.context).toMatchObject({ 'response.ask_alt': 'alt answered', 'response.ask_default': 'default answered' });
    expect(conversationRequests(fake2).slice(before2).map((r) => r.body.model)).toEqual(['claude-opus-4-1']);
    expect(conversationRequests(fake1).length - before1).toBe(1);
  });

  it("refuses a connection the worker lacks with UNKNOWN_CONNECTION naming the worker's, before any model call", async () => {
    const before = fake1.messageRequests().length + fake2.messageRequests().length;
    // On this worker, warm from the tests above, the run fails before the prompt arrives: the prompt is
    // still answered (with the run's failure), not left waiting for a turn that never comes.
    const s = await startSession(w.client, assistant, { id: sid('unknown'), taskQueue: w.taskQueue, settings: { connection: 'azure' } });
    const err = await rejection(s.prompt('hi'));
    expect(err.code).toBe('UNKNOWN_CONNECTION');
    expect(err.message).toMatch(/no connection 'azure'; this worker has: alt, anthropic/);
    const again = await rejection(s.prompt('hi again'));
    expect(again.code).toBe('UNKNOWN_CONNECTION'); // the failed run's error, at once
    expect(fake1.messageRequests().length + fake2.messageRequests().length).toBe(before);
  });
});

describe('model connections inline', () => {
  let fake1: FakeAnthropicServer;
  let fake2: FakeAnthropicServer;

  beforeAll(async () => {
    fake1 = await FakeAnthropicServer.start();
    fake2 = await FakeAnthropicServer.start({ apiKey: 'k' });
  });
  afterAll(async () => {
    await fake1?.stop();
    await fake2?.stop();
  });

  const onConnection = (connection: string) =>
    agent({
      name: `inline-${connection}`,
      run: async ({ init }) => {
        const fh = await init({ connection, compaction: { enabled: false }, contextWindowTokens: 200_000 });
        return (await fh.session()).prompt('hello');
      },
    });
  const options = () => ({ apiKey: 'test-key', baseURL: fake1.url, connections: { alt: { provider: 'anthropic', baseURL: fake2.url, apiKey: 'k' } } });

  it("sends init({ connection: 'alt' }) to alt's endpoint", async () => {
    fake2.enqueue(say('inline on alt'));
    expect(await onConnection('alt').invoke(undefined, options())).toBe('inline on alt');
    expect(fake2.messageRequests().filter((r) => r.path === '/v1/messages')).toHaveLength(1);
    expect(fake1.messageRequests()).toHaveLength(0);
  });

  it("runs a sub-agent on its parent's connection unless its own init names one", async () => {
    const child = (connection?: string) =>
      agent({
        name: `child-${connection ?? 'inherits'}`,
        run: async ({ init }) => (await (await init({ ...(connection ? { connection } : {}), compaction: { enabled: false }, contextWindowTokens: 200_000 })).session()).prompt('child task'),
      });
    const parent = (sub: ReturnType<typeof child>) =>
      agent({
        name: 'parent-on-alt',
        run: async ({ init }) => {
          const fh = await init({ connection: 'alt', tools: [agentAsTool(sub, { description: 'helps' })], compaction: { enabled: false }, contextWindowTokens: 200_000 });
          return (await fh.session()).prompt('delegate');
        },
      });
    const before2 = fake2.messageRequests().length;
    fake2.enqueue(callTools({ name: 'child-inherits', input: { task: 'x' } }), say('child on alt'), say('parent done'));
    expect(await parent(child()).invoke(undefined, options())).toBe('parent done');
    expect(fake2.messageRequests().length - before2).toBe(3);
    expect(fake1.messageRequests()).toHaveLength(0);

    fake2.enqueue(callTools({ name: 'child-anthropic', input: { task: 'x' } }), say('parent done again'));
    fake1.enqueue(say('child on the default'));
    expect(await parent(child('anthropic')).invoke(undefined, options())).toBe('parent done again');
    expect(fake1.messageRequests().map((r) => r.body.messages[0].content[0].text)).toEqual(['child task']);
  });

  it("refuses a connection the process lacks with UNKNOWN_CONNECTION naming its own", async () => {
    const err = await rejection(onConnection('azure').invoke(undefined, options()));
    expect(err.code).toBe('UNKNOWN_CONNECTION');
    expect(err.message).toMatch(/no connection 'azure'; this worker has: alt, anthropic/);
  });
});
