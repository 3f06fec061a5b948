/**
 * Approvals as events: `for await (const req of session.approvals())` on the real dev server. The call
 * already waiting when the loop starts is yielded; approve() lets the turn finish and deny(reason)
 * reaches the model; each call is yielded once, and not at all when another client decided it first;
 * an abort ends the loop at once, the session's end ends it too; a continue-as-new or a worker killed
 * mid-wait changes nothing.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@temporalio/client';
import { getSession, startAgent, startSession, FabricHarnessPlugin, FileTranscriptStore, type ApprovalRequest, type SessionHandle } from '@fabric-harness/sdk/client';
import { callTools, type FakeAnthropicServer, say } from '@fabric-harness/sdk/testing';
import { isTitleRequest, startSessionFake } from '../support/session-fake';
import { gatekeeper } from '../fixtures/agents';
import { startTestWorker, type TestWorker } from '../support/test-worker';
import { killableWorkers, killHard } from '../support/worker-process-control';
import { until } from '../support/waiting';

let n = 0;
const sid = (p: string) => `${p}-${process.pid}-${Date.now() % 1_000_000}-${n++}`;

/** The next request, or `undefined` once the iterator ended. */
async function nextOf(it: AsyncIterator<ApprovalRequest>): Promise<ApprovalRequest | undefined> {
  const r = await it.next();
  return r.done ? undefined : r.value;
}

/** The tool_result contents of the model's last request (what the model read of its calls). */
function lastToolResults(fake: FakeAnthropicServer): string[] {
  const msgs = fake.messageRequests().filter((r) => !isTitleRequest(r)).at(-1)!.body.messages as Array<{ content: Array<{ type: string; content?: string }> }>;
  return msgs.at(-1)!.content.filter((b) => b.type === 'tool_result').map((b) => String(b.content));
}

describe('session.approvals()', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;

  beforeAll(async () => {
    fake = await startSessionFake();
    w = await startTestWorker({ name: 'approvals-iter', baseURL: fake.url });
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  const start = (): Promise<SessionHandle> =>
    startSession(w.client, 'gated-assistant', { id: sid('appr'), title: 'Approvals', settings: { permissionMode: 'execute' }, taskQueue: w.taskQueue });

  it('yields the call that was already waiting when it started; approve() lets the turn finish', async () => {
    const s = await start();
    fake.enqueue(callTools({ name: 'deploy', input: { service: 'web' } }), say('Web is deployed.'));
    const { messageId } = await s.send('deploy web');
    // The call waits before anyone iterates: the loop must not start from "now" and miss it.
    await until('the call to wait', async () => (await s.pendingApprovals()).length === 1);
    // A bound on the wait, so an iterator that missed the call ends (and the test says so) instead of hanging.
    const it = s.approvals({ signal: AbortSignal.timeout(20_000) })[Symbol.asyncIterator]();
    const req = await nextOf(it);
    expect(req).toMatchObject({ tool: 'deploy', input: { service: 'web' }, messageId });
    expect(typeof req!.requestedAt).toBe('number');
    await req!.approve();
    expect(await s.reply(messageId)).toBe('Web is deployed.');
    expect(lastToolResults(fake)).toEqual(['deployed web']);
    await it.return!();
    await s.end();
  });

  it('deny(reason) reaches the model as the note; the request is also an approval_requested stream event', async () => {
    const s = await start();
    const it = s.approvals()[Symbol.asyncIterator]();
    const first = nextOf(it); // iterating before anything was sent: the request comes through the stream
    fake.enqueue(callTools({ name: 'deploy', input: { service: 'db' } }), say('Not deployed, as you said.'));
    const { messageId } = await s.send('deploy the db');
    const req = (await first)!;
    expect(req).toMatchObject({ tool: 'deploy', input: { service: 'db' } });
    // The request's decisions take the handle's options: a misspelt key is named, nothing is decided.
    await expect(req.deny({ reason: 'not on a Friday' } as never)).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'reason' });
    await req.deny({ note: 'not on a Friday', timeoutMs: 10_000 });
    expect(await s.reply(messageId)).toBe('Not deployed, as you said.');
    expect(lastToolResults(fake)).toEqual([expect.stringContaining('not on a Friday')]);
    const events: string[] = [];
    for await (const env of s.stream({ signal: AbortSignal.timeout(10_000) })) {
      if (env.event.type === 'approval_requested' || env.event.type === 'approval_decided') events.push(`${env.event.type}:${env.event.callId}`);
      if (env.event.type === 'message_end' && events.length === 2) break;
    }
    expect(events).toEqual([`approval_requested:${req.callId}`, `approval_decided:${req.callId}`]);
    await it.return!();
    await s.end();
  });

  it('two calls of one round are each yielded once; a call another client decided first is not yielded; the session end ends the loop', async () => {
    const s = await start();
    const it = s.approvals()[Symbol.asyncIterator]();
    const yielded: string[] = [];
    const take = async () => {
      const r = await nextOf(it);
      if (r) yielded.push(r.callId);
      return r;
    };
    const firstTaken = take();
    fake.enqueue(callTools({ name: 'deploy', input: { service: 'api' } }, { name: 'deploy', input: { service: 'web' } }), say('round one done'));
    const one = await s.send('deploy both');
    const a = (await firstTaken)!;
    const b = (await take())!;
    expect([a.input, b.input]).toEqual([{ service: 'api' }, { service: 'web' }]);
    await a.approve();
    await b.deny('web is frozen');
    expect(await s.reply(one.messageId)).toBe('round one done');

    // Round two: while the consumer handles the first call, another client approves the second.
    const thirdTaken = take();
    fake.enqueue(callTools({ name: 'deploy', input: { service: 'queue' } }, { name: 'deploy', input: { service: 'cache' } }), say('round two done'));
    const two = await s.send('deploy two more');
    const c = (await thirdTaken)!;
    expect(c.input).toEqual({ service: 'queue' });
    const other = getSession(w.client, s.id);
    const cache = await until('the second call to wait', async () => (await other.pendingApprovals()).find((p) => p.callId !== c.callId));
    await other.approve(cache.callId);
    await c.approve();
    expect(await s.reply(two.messageId)).toBe('round two done');
    expect(lastToolResults(fake)).toEqual(['deployed queue', 'deployed cache']);

    const after = take(); // the loop goes on past round two: the cache call must not come out of it
    await s.end();
    expect(await after).toBeUndefined(); // the session ended: so did the loop
    expect(yielded).toEqual([a.callId, b.callId, c.callId]);
    expect(new Set(yielded).size).toBe(3);
  });

  it('an aborted signal ends the loop promptly while it waits', async () => {
    const s = await start();
    const ctl = new AbortController();
    const it = s.approvals({ signal: ctl.signal })[Symbol.asyncIterator]();
    const waiting = it.next();
    // It waits on a long poll of the session's history (tens of seconds); the abort must cut it short.
    fake.enqueue(say('nothing to approve'));
    expect(await s.prompt('just talk')).toBe('nothing to approve');
    const aborted = Date.now();
    ctl.abort();
    // Bounded, so a loop that ignores the abort fails here rather than at jest's timeout.
    const stillWaiting = new Promise((r) => setTimeout(() => r('still waiting 5 s after the abort'), 5_000).unref());
    expect(await Promise.race([waiting, stillWaiting])).toEqual({ done: true, value: undefined });
    expect(Date.now() - aborted).toBeLessThan(2_000);
    // An iterator made with an aborted signal yields nothing.
    expect(await s.approvals({ signal: ctl.signal })[Symbol.asyncIterator]().next()).toEqual({ done: true, value: undefined });
    await s.end();
  });

  it('with no worker, an abort ends the loop at once while it reads where the stream is (a query nothing answers)', async () => {
    // A session on a queue no worker polls: the first reads wait for the server's ~30 s query timeout.
    const idle = await startSession(w.client, 'gated-assistant', { id: sid('appr-idle'), taskQueue: `nobody-${process.pid}-${n++}` });
    const ctl = new AbortController();
    const waiting = idle.approvals({ signal: ctl.signal })[Symbol.asyncIterator]().next();
    await new Promise((r) => setTimeout(r, 1_000));
    const aborted = Date.now();
    ctl.abort();
    const stillWaiting = new Promise((r) => setTimeout(() => r('still waiting 5 s after the abort'), 5_000).unref());
    expect(await Promise.race([waiting, stillWaiting])).toEqual({ done: true, value: undefined });
    expect(Date.now() - aborted).toBeLessThan(2_000);
    await idle.workflow.terminate('test over');
  });

  it('goes on across continue-as-new: the call carried into the next run is not yielded again, the next one is', async () => {
    const s = await startSession(w.client, 'gated-assistant', {
      id: sid('appr-can'),
      title: 'Continued',
      historyLimit: 20,
      settings: { permissionMode: 'execute' },
      taskQueue: w.taskQueue,
    });
    const it = s.approvals()[Symbol.asyncIterator]();
    fake.enqueue(callTools({ name: 'deploy', input: { service: 'x' } }), say('x deployed'));
    fake.enqueue(callTools({ name: 'deploy', input: { service: 'y' } }), say('y deployed'));
    for (let i = 1; i < 12; i++) fake.enqueue(say(`queued ${i} answered`));
    const { messageId } = await s.send('deploy x');
    const x = (await nextOf(it))!;
    expect(x.input).toEqual({ service: 'x' });
    const runBefore = (await s.info()).runId;
    // Messages queued behind the waiting call take the run past its history limit: it continues as new while x waits.
    const queued: string[] = [];
    for (let i = 0; i < 12; i++) queued.push((await s.send(`queued ${i}`)).messageId);
    const moved = await until('a continue-as-new while x waits', async () => {
      const i = await s.info();
      return i.runId !== runBefore ? i : undefined;
    });
    expect(moved.pendingApprovals.map((p) => p.callId)).toEqual([x.callId]);
    const next = nextOf(it);
    await x.approve();
    expect(await s.reply(messageId)).toBe('x deployed');
    const y = (await next)!;
    expect(y.input).toEqual({ service: 'y' });
    await y.approve();
    for (const id of queued) expect(await s.reply(id)).toMatch(/deployed|answered/);
    const after = nextOf(it);
    await s.end();
    expect(await after).toBeUndefined();
  });

  it('AgentHandle.approvals(): the same requests for a plain agent run', async () => {
    fake.enqueue(callTools({ name: 'deploy', input: { service: 'api' } }, { name: 'refund', input: { amount: 500 } }), say('Deployed; no refund.'));
    const handle = await startAgent(w.client, gatekeeper, { task: 'deploy and refund' }, { workflowId: sid('gate'), taskQueue: w.taskQueue });
    const seen: string[] = [];
    for await (const req of handle.approvals()) {
      seen.push(req.tool);
      if (req.tool === 'deploy') await req.approve();
      else await req.deny('too large');
    }
    // The loop ended with the run.
    expect(seen).toEqual(['deploy', 'refund']);
    expect(await handle.result()).toEqual({ reply: 'Deployed; no refund.' });
  });
});

describe('session.approvals() across a worker killed mid-wait', () => {
  const workers = killableWorkers();

  it('yields each call once: the one waiting through the restart, then the next', async () => {
    const taskQueue = sid('appr-kill');
    const storeDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-store-'));
    const { t, fake } = workers;
    const first = await workers.start({ taskQueue, fakeUrl: fake.url, storeDir });
    const client = new Client({ connection: t.connection, namespace: t.namespace, plugins: [new FabricHarnessPlugin({ store: new FileTranscriptStore(storeDir) })] });
    const s = await startSession(client, 'gated-assistant', { id: sid('appr-kill'), title: 'Restart', settings: { permissionMode: 'execute' }, taskQueue });
    const it = s.approvals()[Symbol.asyncIterator]();
    fake.enqueue(callTools({ name: 'deploy', input: { service: 'one' } }), callTools({ name: 'deploy', input: { service: 'two' } }), say('both deployed'));
    const { messageId } = await s.send('deploy one, then two');
    const one = (await nextOf(it))!;
    expect(one.input).toEqual({ service: 'one' });
    // The loop waits for the next call while its worker dies and another takes over.
    const next = nextOf(it);
    await killHard(first);
    await workers.start({ taskQueue, fakeUrl: fake.url, storeDir });
    await one.approve();
    const two = (await next)!;
    expect(two.input).toEqual({ service: 'two' });
    expect(two.callId).not.toBe(one.callId);
    await two.approve();
    expect(await s.reply(messageId)).toBe('both deployed');
    const after = nextOf(it);
    await s.end();
    expect(await after).toBeUndefined();
  });
});
