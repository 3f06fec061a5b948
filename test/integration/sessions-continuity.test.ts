/**
 * What a session promises its clients across continue-as-new, on the real dev server: every reply
 * reaches its caller whatever run answers it (many clients at once, several boundaries), a reply stays
 * retrievable for the session's whole life, a message id is an idempotency key for the whole life (never
 * run twice; the same id with other text is refused), and a prompt whose caller stopped waiting is
 * reattached by its message id, not sent twice.
 */
import { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { getSession, startSession, type SessionHandle } from '@fabric-harness/sdk/client';
import { say, type FakeAnthropicServer } from '@fabric-harness/sdk/testing';
import { isTitleRequest, lastUserText, startSessionFake } from '../support/session-fake';
import { assistant } from '../fixtures/session-agents';
import { startTestWorker, type TestWorker } from '../support/test-worker';
import { rejection } from '../support/waiting';

describe('session continuity across continue-as-new', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;
  let n = 0;
  const sid = (p: string) => `${p}-${process.pid}-${Date.now() % 100000}-${n++}`;

  beforeAll(async () => {
    // Every turn answers its own message, so a reply shows which message it belongs to.
    fake = await startSessionFake({ route: (req) => (isTitleRequest(req) ? undefined : say(`answer to ${lastUserText(req)}`)) });
    w = await startTestWorker({ name: 'continuity', baseURL: fake.url });
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  const turnsFor = (text: string) => fake.messageRequests().filter((r) => !isTitleRequest(r) && lastUserText(r) === text).length;
  const userTexts = async (s: SessionHandle) => (await s.messages()).filter((m) => m.type === 'user').map((m) => (m as { text: string }).text);

  async function start(id: string): Promise<SessionHandle> {
    return startSession(w.client, assistant, { id, taskQueue: w.taskQueue, historyLimit: 40 });
  }

  it('60 messages sent at once by three clients: every reply() returns its answer, each message is in the conversation once', async () => {
    const id = sid('three-clients');
    await start(id);
    const clients = [0, 1, 2].map(() => new Client({ connection: w.client.connection, namespace: w.client.options.namespace }));
    const handles = clients.map((c) => getSession(c, id));
    const texts = Array.from({ length: 60 }, (_, i) => `message ${i}`);
    const sent = await Promise.all(texts.map((t, i) => handles[i % 3]!.send(t)));
    // Edits and queries from the same clients meanwhile: they cross the same boundaries.
    const sideCalls = Promise.allSettled(
      Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? handles[i % 3]!.label(`l${i}`) : handles[i % 3]!.info())),
    );
    const replies = await Promise.allSettled(sent.map((m, i) => handles[i % 3]!.reply(m.messageId)));
    const failed = replies.flatMap((r) => (r.status === 'rejected' ? [describeError(r.reason)] : []));
    expect(failed).toEqual([]);
    expect((await sideCalls).flatMap((r) => (r.status === 'rejected' ? [describeError(r.reason)] : []))).toEqual([]);
    expect(replies.map((r) => (r as PromiseFulfilledResult<string>).value)).toEqual(texts.map((t) => `answer to ${t}`));
    const s = handles[0]!;
    const info = await explained(s.info());
    expect(info.continuedRuns).toBeGreaterThanOrEqual(3);
    expect(info.messageCount).toBe(60);
    expect(Object.keys(info.labels).sort()).toEqual(Array.from({ length: 15 }, (_, i) => `l${2 * i}`).sort());
    const conversation = await explained(userTexts(s));
    for (const t of texts) expect(conversation.filter((c) => c === t)).toHaveLength(1);
    for (const t of texts) expect(turnsFor(t)).toBe(1);
    await s.end();
  });

  it('a reply stays retrievable for any message of the session, long after 50 later answers and several continue-as-new', async () => {
    const s = await start(sid('old-replies'));
    const texts = Array.from({ length: 60 }, (_, i) => `early ${i}`);
    const sent: string[] = [];
    for (const t of texts) sent.push((await s.send(t)).messageId);
    // One at a time, after sending all: what the docs recommend for a deep queue.
    for (let i = 0; i < sent.length; i++) expect(await s.reply(sent[i]!)).toBe(`answer to ${texts[i]}`);
    expect((await s.info()).continuedRuns).toBeGreaterThanOrEqual(3);
    // Asked again at the end: the first ones are 59 answers and several runs back.
    expect(await s.reply(sent[0]!)).toBe('answer to early 0');
    expect(await s.reply(sent[5]!)).toBe('answer to early 5');
    // A message the session never had is still refused at once.
    expect((await rejection(s.reply('never-sent'))).code).toBe('UNKNOWN_MESSAGE');
    await s.end();
    // What the archive costs in history: per run, its continue-as-new input and its archive activities.
    const runs: Array<{ events: number; carriedBytes: number; archives: number; lookups: number }> = [];
    for (let runId: string | undefined = (await s.workflow.describe()).runId; runId; ) {
      const history: temporal.api.history.v1.IHistory = await w.client.workflow.getHandle(s.id, runId).fetchHistory();
      const events = history.events ?? [];
      const scheduled = (name: string) => events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === name).length;
      const can = events.find((e) => e.workflowExecutionContinuedAsNewEventAttributes)?.workflowExecutionContinuedAsNewEventAttributes;
      const carriedBytes = (can?.input?.payloads ?? []).reduce((n, p) => n + (p.data?.length ?? 0), 0);
      runs.unshift({ events: events.length, carriedBytes, archives: scheduled('fhArchiveReplies'), lookups: scheduled('fhFindReply') });
      runId = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId ?? undefined;
    }
    console.log(`reply archive: per run ${JSON.stringify(runs)}`);
    expect(runs.reduce((n, r) => n + r.archives, 0)).toBeGreaterThan(0);
    // The carried state is bounded: 50 replies and a fixed-size filter, however many messages came before.
    expect(Math.max(...runs.map((r) => r.carriedBytes))).toBeLessThan(20_000);
  });

  it('a send repeated with an early messageId after 60 later messages and several continue-as-new is not run again', async () => {
    const s = await start(sid('idem'));
    expect(await s.prompt('the first one', { messageId: 'm-first' })).toBe('answer to the first one');
    for (let i = 0; i < 60; i++) expect(await s.prompt(`later ${i}`)).toBe(`answer to later ${i}`);
    expect((await s.info()).continuedRuns).toBeGreaterThanOrEqual(3);
    const again = await s.send('the first one', { messageId: 'm-first' });
    expect(again).toEqual({ messageId: 'm-first', position: -1 }); // answered already: not queued
    expect(await s.prompt('the first one', { messageId: 'm-first' })).toBe('answer to the first one');
    expect(await s.reply('m-first')).toBe('answer to the first one');
    expect(turnsFor('the first one')).toBe(1);
    expect((await s.info()).messageCount).toBe(61);
    await s.end();
  });

  it('a message id sent again with other text is refused as a reused key, in the same run and long after', async () => {
    const s = await start(sid('reused'));
    expect(await s.prompt('the first one', { messageId: 'm-first' })).toBe('answer to the first one');
    expect((await rejection(s.prompt('something else', { messageId: 'm-first' }))).code).toBe('IDEMPOTENCY_KEY_REUSED');
    // Queued but not run yet: the same.
    const queued = await s.send('queued text', { messageId: 'm-queued' });
    expect((await rejection(s.send('other queued text', { messageId: 'm-queued' }))).code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(await s.reply(queued.messageId)).toBe('answer to queued text');
    for (let i = 0; i < 60; i++) await s.send(`filler ${i}`);
    expect(await s.prompt('last filler')).toBe('answer to last filler');
    expect((await s.info()).continuedRuns).toBeGreaterThanOrEqual(3);
    expect((await rejection(s.send('other text', { messageId: 'm-first' }))).code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(turnsFor('something else') + turnsFor('other queued text') + turnsFor('other text')).toBe(0);
    await s.end();
  });

  it('a fork is a new session: its own createdAt and its own message count', async () => {
    const s = await start(sid('fork-parent'));
    expect(await s.prompt('one')).toBe('answer to one');
    expect(await s.prompt('two')).toBe('answer to two');
    const parent = await s.info();
    const fork = await s.fork({ atMessage: 1 });
    const child = await fork.info();
    expect(child.forkedFrom).toEqual({ sessionId: s.id, atMessage: 1 });
    expect(child.createdAt).toBeGreaterThan(parent.createdAt);
    expect(child.messageCount).toBe(0);
    expect(await fork.prompt('three')).toBe('answer to three');
    expect((await fork.info()).messageCount).toBe(1);
    expect((await s.info()).messageCount).toBe(2);
    await fork.end();
    await s.end();
  });
});

describe('a prompt whose caller stops waiting while no worker runs', () => {
  let fake: FakeAnthropicServer;
  const workers: TestWorker[] = [];
  afterAll(async () => {
    for (const w of workers) await w.stop();
    await fake?.stop();
  });

  it('ends the wait with WAIT_ENDED naming the message id and the idle task queue; retrying with that id reattaches (the prompt runs once)', async () => {
    fake = await startSessionFake({ route: (req) => (isTitleRequest(req) ? undefined : say(`answer to ${lastUserText(req)}`)) });
    const client = await startTestWorker({ name: 'deadline-client', baseURL: fake.url });
    workers.push(client);
    const taskQueue = `nobody-${process.pid}-${Date.now()}`;
    const s = await startSession(client.client, assistant, { id: `deadline-${process.pid}-${Date.now()}`, taskQueue });

    const byTimeout = await rejection(s.prompt('wait for me', { timeoutMs: 1_500 }));
    expect(byTimeout.code).toBe('WAIT_ENDED');
    expect(byTimeout.reason).toBe('timeout');
    expect(typeof byTimeout.messageId).toBe('string');
    expect(byTimeout.noWorker).toEqual({ taskQueue });
    expect(byTimeout.message).toContain(`no worker is polling task queue ${taskQueue}`);
    // The caller's own deadline (a connection deadline) ends it the same way.
    const byDeadline = await rejection(client.client.connection.withDeadline(Date.now() + 1_500, () => s.prompt('wait for me', { messageId: byTimeout.messageId })));
    expect(byDeadline.code).toBe('WAIT_ENDED');
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 1_000);
    const byAbort = await rejection(s.prompt('wait for me', { messageId: byTimeout.messageId, signal: controller.signal }));
    expect(byAbort).toMatchObject({ code: 'WAIT_ENDED', reason: 'aborted', messageId: byTimeout.messageId });

    const late = await startTestWorker({ name: 'deadline-late', baseURL: fake.url, taskQueue });
    workers.push(late);
    expect(await s.prompt('wait for me', { messageId: byTimeout.messageId })).toBe('answer to wait for me');
    const runs = fake.messageRequests().filter((r) => !isTitleRequest(r) && lastUserText(r) === 'wait for me');
    expect(runs).toHaveLength(1);
    expect((await s.info()).messageCount).toBe(1);
    await s.end();
  });
});

/** A call whose failure names its causes (the gRPC code and the server's words), not only the SDK's summary. */
async function explained<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    throw new Error(describeError(err), { cause: err });
  }
}

/** An error and its causes in one line (code, gRPC code, message), for a failure message that says why. */
function describeError(err: unknown): string {
  const parts: string[] = [];
  for (let e = err as { code?: unknown; message?: string; cause?: unknown } | undefined, depth = 0; e && depth < 6; e = e.cause as typeof e, depth++) {
    parts.push(`${e.code !== undefined ? `[${String(e.code)}] ` : ''}${e.message ?? String(e)}`);
  }
  return parts.join(' <- ');
}
