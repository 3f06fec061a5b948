/**
 * Sessions on the real dev server: a conversation that is one workflow, answering queued prompts in
 * order, moving through statuses, asking for approvals, interruptible, listed through visibility,
 * continuing as new without losing anything, forked by reference, cleared, archived and deleted.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  getSession,
  listSessions,
  sendPrompt,
  startSession,
  type SessionHandle,
  type SessionInfo,
} from '@fabric-harness/sdk/client';
import { callTools, type FakeAnthropicServer, say } from '@fabric-harness/sdk/testing';
import { isTitleRequest, lastUserText, SCRIPTED_TITLE, startSessionFake } from '../support/session-fake';
import type { Entry } from '@fabric-harness/sdk';
import { assistant, longAssistant } from '../fixtures/session-agents';
import { startTestWorker, type TestWorker } from '../support/test-worker';
import { rejection, until } from '../support/waiting';

const TITLE = SCRIPTED_TITLE;




describe('sessions', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;
  let dir: string;
  let n = 0;
  const sid = (p: string) => `${p}-${process.pid}-${Date.now() % 100000}-${n++}`;

  beforeAll(async () => {
    fake = await startSessionFake();
    w = await startTestWorker({ name: 'sessions', baseURL: fake.url });
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-session-cwd-'));
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  const conversation = () => fake.messageRequests().filter((r) => !isTitleRequest(r));

  async function start(extra: Parameters<typeof startSession>[2] = {}): Promise<SessionHandle> {
    return startSession(w.client, assistant, {
      id: sid('s'),
      taskQueue: w.taskQueue,
      settings: { workingDirectory: dir },
      ...extra,
    });
  }

  it('answers queued messages in order, moves statuses, titles itself and is listed by status and label', async () => {
    const s = await start({ labels: { area: 'garden', urgent: null } });
    expect((await s.info()).status).toBe('todo');
    fake.enqueue(callTools({ name: 'bash', input: { command: 'sleep 2; echo slept' } }), say('one done'), say('two done'), say('three done'));
    const before = conversation().length;
    const first = await s.send('plan one');
    const second = await s.send('plan two');
    const third = await s.send('plan three');
    const running: SessionInfo = await until('a running turn', async () => {
      const i = await s.info();
      return i.processing && i.queued.length === 2 ? i : undefined;
    });
    expect(running.status).toBe('in-progress');
    expect(running.queued.map((m) => m.text)).toEqual(['plan two', 'plan three']);
    expect(await s.reply(third.messageId)).toBe('three done');
    expect(await s.reply(first.messageId)).toBe('one done');
    expect(await s.reply(second.messageId)).toBe('two done');
    const asked = conversation().slice(before).map(lastUserText);
    expect(asked.filter((t) => t.startsWith('plan'))).toEqual(['plan one', 'plan two', 'plan three']);

    const info = await until('the generated title', async () => {
      const i = await s.info();
      return i.title ? i : undefined;
    });
    expect(info.title).toBe(TITLE);
    expect(info.titleSource).toBe('generated');
    expect(info.status).toBe('needs-review');
    expect(info.messageCount).toBe(3);
    expect(info.lastMessageAt).toBeGreaterThan(info.createdAt - 1);

    const listed = await until('visibility to list it', async () => {
      const l = await listSessions(w.client, { agent: 'assistant', status: 'needs-review', labels: ['area=garden'] });
      return l.find((x) => x.id === s.id && x.title === TITLE);
    });
    expect(listed.labels).toEqual({ area: 'garden', urgent: null });
    expect(listed.status).toBe('needs-review');
    // A manual status sticks: the next turn does not move it.
    await s.setStatus('blocked');
    fake.enqueue(say('four done'));
    expect(await s.prompt('plan four')).toBe('four done');
    expect((await s.info()).status).toBe('blocked');
    await until('the status change in visibility', async () => {
      const l = await listSessions(w.client, { agent: 'assistant', status: 'blocked' });
      return l.some((x) => x.id === s.id);
    });
    await s.end();
  });

  it('keeps a title the user set first, and refuses bad edits with typed errors leaving the session as it was', async () => {
    const s = await start({ title: 'My own title' });
    fake.enqueue(say('hi'));
    expect(await s.prompt('hello there')).toBe('hi');
    // Whether to generate a title is decided as the first turn starts, in the workflow task that
    // schedules the turn's model call: by the reply, a title request would be in history. There is none
    // (so nothing can overwrite the user's title later), and the title is the user's.
    const history = await s.workflow.fetchHistory();
    const scheduled = history.events!.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter(Boolean);
    expect(scheduled).toContain('fhModel');
    expect(scheduled).not.toContain('fhSummarize');
    expect(fake.messageRequests().filter((r) => isTitleRequest(r) && JSON.stringify(r.body.messages).includes('hello there'))).toEqual([]);
    expect((await s.info()).title).toBe('My own title');

    expect((await rejection(s.setStatus('nonsense'))).code).toBe('INVALID_STATUS');
    expect((await rejection(s.label('bad label!'))).code).toBe('INVALID_LABEL');
    expect((await rejection(s.updateSettings({ connection: 'other' }))).code).toBe('CONNECTION_LOCKED');
    // Connections are the worker's: it refuses one it lacks as the session opens (test/integration/connections.test.ts).
    expect((await rejection(startSession(w.client, assistant, { taskQueue: w.taskQueue, settings: { connection: 'azure' } }).then((other) => other.prompt('hi')))).code).toBe('UNKNOWN_CONNECTION');
    expect((await rejection(s.updateSettings({ permissionMode: 'sometimes' as never }))).code).toBe('INVALID_INPUT');
    expect((await rejection(s.fork({ atMessage: 99 }))).code).toBe('INVALID_FORK_POINT');
    expect((await rejection(s.approve('toolu_nope'))).code).toBe('UNKNOWN_TOOL_CALL');
    const info = await s.info();
    expect(info.status).toBe('needs-review');
    expect(info.settings.connection).toBe('anthropic');
    fake.enqueue(say('still here'));
    expect(await s.prompt('are you there?')).toBe('still here');

    await s.end();
    expect((await rejection(s.prompt('after the end'))).code).toBe('SESSION_CLOSED');
    expect((await rejection(getSession(w.client, sid('never')).prompt('hi'))).code).toBe('SESSION_NOT_FOUND');
  });

  it('bad wait and stream options are refused naming the field before anything is sent; the session stays usable', async () => {
    const s = await start();
    fake.enqueue(say('first'));
    expect(await s.prompt('one')).toBe('first');
    const before = (await s.messages()).length;
    const asked = conversation().length;
    // Each was used in arithmetic or a timer: '5s' made the wait's deadline NaN, -1 polled without pause.
    for (const [call, field] of [
      [() => s.prompt('two', { timeoutMs: '5s' as never }), 'timeoutMs'],
      [() => s.send('two', { timeoutMs: -1 }), 'timeoutMs'],
      [() => s.prompt('two', { signal: 'stop' as never }), 'signal'],
      [() => s.reply('nope', { timeoutMs: Number.NaN }), 'timeoutMs'],
      // A misspelt key is named, not ignored: `timeout` was a wait with no bound.
      [() => s.prompt('two', { timeout: 5_000 } as never), 'timeout'],
      [() => s.send('two', { messageID: 'm-1' } as never), 'messageID'],
      [() => s.send('two', { messageId: '' }), 'messageId'],
      [() => s.promptStream('two', { timeout: 5_000 } as never), 'timeout'],
      [() => startSession(w.client, assistant, { taskQueue: w.taskQueue, tittle: 'x' } as never), 'tittle'],
      [() => sendPrompt(w.client, assistant, 'two', { id: s.id, timeout: 5_000 } as never), 'timeout'],
    ] as const) {
      expect(await rejection(call())).toMatchObject({ code: 'INVALID_INPUT', field });
    }
    for (const [options, field] of [
      [{ livePollMs: -1 }, 'livePollMs'],
      [{ from: 'latest' }, 'from'],
      [{ from: 1.5 }, 'from'],
      [{ signal: {} }, 'signal'],
    ] as const) {
      let thrown: unknown;
      try {
        s.stream(options as never);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toMatchObject({ code: 'INVALID_INPUT', field });
    }
    let misspelt: unknown;
    try {
      s.stream({ fromm: 3 } as never);
    } catch (err) {
      misspelt = err;
    }
    expect(misspelt).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('Unrecognized key: "fromm"') });
    expect(await rejection(s.promptStream('two', { livePollMs: 0 }))).toMatchObject({ code: 'INVALID_INPUT', field: 'livePollMs' });
    // Nothing was queued or sent to the model, and the session answers the next message.
    expect((await s.messages()).length).toBe(before);
    expect(conversation().length).toBe(asked);
    fake.enqueue(say('second'));
    expect(await s.prompt('two', { timeoutMs: 60_000 })).toBe('second');
  });

  it('ask mode: a write waits for approval; approve runs it, deny tells the model why; reads never wait', async () => {
    const s = await start({ settings: { workingDirectory: dir, permissionMode: 'ask' } });
    const file = `approved-${n}.txt`;
    fake.enqueue(callTools({ name: 'write_file', input: { path: file, content: 'yes' } }), say('written'));
    const reply = s.prompt('write it');
    const pending = await until('a pending approval', async () => {
      const p = await s.pendingApprovals();
      return p.length === 1 ? p[0] : undefined;
    });
    expect(pending.tool).toBe('write_file');
    expect(pending.input).toEqual({ path: file, content: 'yes' });
    await expect(fs.stat(path.join(dir, file))).rejects.toThrow();
    await s.approve(pending.callId);
    expect(await reply).toBe('written');
    expect(await fs.readFile(path.join(dir, file), 'utf8')).toBe('yes');
    expect((await rejection(s.approve(pending.callId))).code).toBe('ALREADY_DECIDED');
    const events = await s.events();
    expect(events.some((e) => e.type === 'approval_requested')).toBe(true);

    const denied = `denied-${n}.txt`;
    fake.enqueue(callTools({ name: 'write_file', input: { path: denied, content: 'no' } }), say('understood'));
    const second = s.prompt('write another');
    const p2 = await until('the second approval', async () => (await s.pendingApprovals())[0]);
    await s.deny(p2.callId, 'not that file');
    expect(await second).toBe('understood');
    await expect(fs.stat(path.join(dir, denied))).rejects.toThrow();
    const last = conversation().at(-1)!;
    expect(JSON.stringify(last.body.messages)).toContain('not that file');

    await fs.writeFile(path.join(dir, 'readme.txt'), 'read me');
    fake.enqueue(callTools({ name: 'read_file', input: { path: 'readme.txt' } }), say('read it'));
    expect(await s.prompt('read it')).toBe('read it');
    // Explore mode: writes are refused (the model is told), reads run.
    await s.updateSettings({ permissionMode: 'explore' });
    fake.enqueue(callTools({ name: 'bash', input: { command: 'touch nope' } }), say('cannot'));
    expect(await s.prompt('run something')).toBe('cannot');
    expect(JSON.stringify(conversation().at(-1)!.body.messages)).toMatch(/explore/i);
    await expect(fs.stat(path.join(dir, 'nope'))).rejects.toThrow();
    await s.end();
  });

  it('interrupt mid-tool cancels the turn, keeps the history valid and hints the next message', async () => {
    const s = await start();
    fake.enqueue(callTools({ name: 'bash', input: { command: 'sleep 60' } }));
    const reply = s.prompt('take your time');
    await until('the tool to run', async () => (await s.events()).some((e) => e.type === 'tool_call'));
    await new Promise((r) => setTimeout(r, 500));
    const started = Date.now();
    expect((await s.interrupt()).interrupted).toBe(true);
    const err = await rejection(reply);
    expect(err.code).toBe('INTERRUPTED');
    expect(Date.now() - started).toBeLessThan(15_000);
    const messages: Entry[] = await s.messages();
    expect(messages.map((m) => m.type)).toEqual(['user', 'assistant', 'tool_results']);
    fake.enqueue(say('ok, something else'));
    expect(await s.prompt('do something else')).toBe('ok, something else');
    expect(lastUserText(conversation().at(-1)!)).toMatch(/interrupted/i);
    expect((await s.interrupt()).interrupted).toBe(false);
    await s.end();
  });

  it('a queued message can be cancelled; the others run', async () => {
    const s = await start();
    fake.enqueue(callTools({ name: 'bash', input: { command: 'sleep 2' } }), say('first'), say('third'));
    const a = await s.send('first');
    const b = await s.send('second');
    const c = await s.send('third');
    await s.cancelMessage(b.messageId);
    expect((await rejection(s.reply(b.messageId))).code).toBe('MESSAGE_CANCELLED');
    expect(await s.reply(a.messageId)).toBe('first');
    expect(await s.reply(c.messageId)).toBe('third');
    expect((await rejection(s.cancelMessage(a.messageId))).code).toBe('UNKNOWN_MESSAGE');
    await s.end();
  });

  it('more prompts waiting at once than Temporal lets updates be in flight (10) are all answered, in order', async () => {
    const s = await start();
    fake.enqueue(callTools({ name: 'bash', input: { command: 'sleep 2' } }));
    for (let i = 0; i < 15; i++) fake.enqueue(say(`reply ${i}`));
    const first = s.prompt('first');
    await until('the first turn to run', async () => (await s.info()).processing);
    const replies = await Promise.all([first, ...Array.from({ length: 14 }, (_, i) => s.prompt(`p${i + 1}`))]);
    expect(new Set(replies).size).toBe(15);
    // The follow-up after the tool result is a request of its own, with no user text.
    const order = conversation().slice(-16).map(lastUserText).filter(Boolean);
    expect(order[0]).toBe('first');
    expect(order.slice(1).sort()).toEqual(Array.from({ length: 14 }, (_, i) => `p${i + 1}`).sort());
    expect((await s.info()).messageCount).toBe(15);
    await s.end();
  });

  it('sendPrompt starts the session if needed (update-with-start) and prompts it', async () => {
    const id = sid('uws');
    fake.enqueue(say('hello new'), say('hello again'));
    const first = await sendPrompt(w.client, assistant, 'hi', { id, taskQueue: w.taskQueue, settings: { workingDirectory: dir } });
    expect(first.reply).toBe('hello new');
    const second = await sendPrompt(w.client, assistant, 'hi again', { id, taskQueue: w.taskQueue });
    expect(second.reply).toBe('hello again');
    expect((await first.session.info()).messageCount).toBe(2);
    await first.session.end();
  });

  it('sendPrompt honours timeoutMs and signal: WAIT_ENDED naming the message, which a worker that comes later answers once', async () => {
    const id = sid('uws-wait');
    const queue = `${w.taskQueue}-later`;
    // Refused before anything starts.
    expect(await rejection(sendPrompt(w.client, assistant, 'hi', { id, taskQueue: queue, timeoutMs: '5s' as never }))).toMatchObject({ code: 'INVALID_INPUT', field: 'timeoutMs' });
    expect(await rejection(getSession(w.client, id).workflow.describe())).toMatchObject({ name: 'WorkflowNotFoundError' });

    // No worker polls the queue: the session starts, the message waits, and the caller stops waiting.
    const started = Date.now();
    const ended = await rejection(sendPrompt(w.client, assistant, 'are you there?', { id, taskQueue: queue, timeoutMs: 1_500, messageId: 'm-later' }));
    expect(ended).toMatchObject({ code: 'WAIT_ENDED', reason: 'timeout', messageId: 'm-later', noWorker: { taskQueue: queue } });
    expect(Date.now() - started).toBeLessThan(15_000);
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 500);
    expect(await rejection(sendPrompt(w.client, assistant, 'are you there?', { id, taskQueue: queue, signal: abort.signal, messageId: 'm-later' }))).toMatchObject({ code: 'WAIT_ENDED', reason: 'aborted' });
    expect((await getSession(w.client, id).workflow.describe()).status.name).toBe('RUNNING');
    // A read the caller bounds ends at its bound, typed, not with a bare gRPC error (nor asked again past it).
    const session = getSession(w.client, id);
    let t0 = Date.now();
    expect(await rejection(w.client.withDeadline(Date.now() + 1_000, () => session.info()))).toMatchObject({ code: 'WAIT_ENDED', reason: 'timeout', sessionId: id, noWorker: { taskQueue: queue } });
    expect(Date.now() - t0).toBeLessThan(5_000);
    const gone = new AbortController();
    setTimeout(() => gone.abort(), 300);
    t0 = Date.now();
    expect(await rejection(w.client.withAbortSignal(gone.signal, () => session.messages()))).toMatchObject({ code: 'WAIT_ENDED', reason: 'aborted' });
    expect(Date.now() - t0).toBeLessThan(5_000);
    // A fork reads what it keeps from the session (a query): within its own bound; a misspelt option is named.
    t0 = Date.now();
    expect(await rejection(session.fork({ atMessage: 0, timeoutMs: 1_000 }))).toMatchObject({ code: 'WAIT_ENDED', reason: 'timeout', sessionId: id });
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(await rejection(session.fork({ atMessage: 0, titel: 'x' } as never))).toMatchObject({ code: 'INVALID_INPUT', field: 'titel' });
    expect(await rejection(session.fork({ atMessage: 0, timeoutMs: '1s' } as never))).toMatchObject({ code: 'INVALID_INPUT', field: 'timeoutMs' });
    // A read only a worker answers: NO_WORKER naming the queue, not the server's bare FAILED_PRECONDITION.
    expect(await rejection(session.info())).toMatchObject({ code: 'NO_WORKER', taskQueue: queue, message: expect.stringContaining(`task queue ${queue}`) });

    // A worker comes; the same message, reattached, is answered once.
    const later = await startTestWorker({ name: 'sessions-later', baseURL: fake.url, taskQueue: queue });
    try {
      const asked = conversation().length;
      fake.enqueue(say('here now'));
      const again = await sendPrompt(w.client, assistant, 'are you there?', { id, taskQueue: queue, messageId: 'm-later', timeoutMs: 60_000 });
      expect(again.reply).toBe('here now');
      expect(conversation().length - asked).toBe(1);
      expect((await again.session.info()).messageCount).toBe(1);
      await again.session.end();
    } finally {
      await later.stop();
    }
  });

  it('approve, deny, interrupt, cancelMessage, the plan decisions, the edits, reset and end take a wait bound: WAIT_ENDED at it, bad options named', async () => {
    // A queue no worker ever polls: each change waits for a worker to take it, and the caller stops waiting.
    const queue = `${w.taskQueue}-never`;
    const s = await startSession(w.client, assistant, { id: sid('bounded-changes'), taskQueue: queue });
    try {
      const ends = async (call: () => Promise<unknown>, reason: 'timeout' | 'aborted'): Promise<void> => {
        const t0 = Date.now();
        expect(await rejection(call())).toMatchObject({ code: 'WAIT_ENDED', reason, sessionId: s.id, noWorker: { taskQueue: queue } });
        // Unbounded, a change on a queue no worker polls never ends; bounded, each ends within about a second
        // (0.6 s on average alone). 20 s: a loaded CI machine once took 13.5 s for the first of them.
        expect(Date.now() - t0).toBeLessThan(20_000);
      };
      await ends(() => s.approve('call-1', { note: 'go ahead', timeoutMs: 1_000 }), 'timeout');
      await ends(() => s.deny('call-2', { timeoutMs: 500 }), 'timeout');
      await ends(() => s.interrupt({ timeoutMs: 500 }), 'timeout');
      await ends(() => s.cancelMessage('m-1', { timeoutMs: 500 }), 'timeout');
      await ends(() => s.approvePlan('plan-1', { mode: 'execute', timeoutMs: 500 }), 'timeout');
      const gone = new AbortController();
      setTimeout(() => gone.abort(), 300);
      await ends(() => s.declinePlan('plan-1', { note: 'no', signal: gone.signal }), 'aborted');
      // A streamed prompt reads where the stream stands first (a query): within the same bound, nothing sent.
      await ends(() => s.promptStream('hello?', { timeoutMs: 1_000 }), 'timeout');
      // The edits and reset too.
      await ends(() => s.setTitle('Bounded', { timeoutMs: 500 }), 'timeout');
      await ends(() => s.archive({ timeoutMs: 500 }), 'timeout');
      await ends(() => s.label('team', 'infra', { timeoutMs: 500 }), 'timeout');
      await ends(() => s.reset({ transferSummary: false, timeoutMs: 500 }), 'timeout');
      await ends(() => s.end({ timeoutMs: 500 }), 'timeout');
      // Refused before anything is sent, naming the field.
      expect(await rejection(s.approve('call-1', { timeout: 5 } as never))).toMatchObject({ code: 'INVALID_INPUT', field: 'timeout' });
      expect(await rejection(s.deny('call-1', { timeoutMs: '5s' } as never))).toMatchObject({ code: 'INVALID_INPUT', field: 'timeoutMs' });
      expect(await rejection(s.interrupt({ signal: 'stop' } as never))).toMatchObject({ code: 'INVALID_INPUT', field: 'signal' });
      expect(await rejection(s.cancelMessage('m-1', { timeout: 5 } as never))).toMatchObject({ code: 'INVALID_INPUT', field: 'timeout' });
      expect(await rejection(s.approvePlan('plan-1', { mdoe: 'execute' } as never))).toMatchObject({ code: 'INVALID_INPUT', field: 'mdoe' });
      expect(await rejection(s.archive({ timeout: 5 } as never))).toMatchObject({ code: 'INVALID_INPUT', field: 'timeout' });
      expect(await rejection(s.reset({ timeoutMs: -1 }))).toMatchObject({ code: 'INVALID_INPUT', field: 'timeoutMs' });
      expect(await rejection(s.end({ timeout: 5 } as never))).toMatchObject({ code: 'INVALID_INPUT', field: 'timeout' });
    } finally {
      await s.workflow.terminate('test over: no worker polls its queue');
    }
  });

  it('forks at a message by reference to the stored transcript, clears, archives, deletes', async () => {
    const s = await start();
    fake.enqueue(say('a1'), say('a2'), say('a3'));
    await s.prompt('q1');
    await s.prompt('q2');
    await s.prompt('q3');
    const before = await storeBytes(w.storeDir);
    const fork = await s.fork({ atMessage: 3 });
    const forked = await until('the fork to load', async () => {
      const m = await fork.messages().catch(() => []);
      return m.length === 4 ? m : undefined;
    });
    expect(forked.map((m) => (m.type === 'user' ? m.text : m.type))).toEqual(['q1', 'assistant', 'q2', 'assistant']);
    // No copy of the shared prefix: the fork refers to the stored transcript.
    const after = await storeBytes(w.storeDir);
    expect(after - before).toBeLessThan(1024);
    fake.enqueue(say('fork reply'));
    expect(await fork.prompt('q3 in the fork')).toBe('fork reply');
    expect((await s.messages()).length).toBe(6);
    expect((await fork.info()).forkedFrom).toEqual({ sessionId: s.id, atMessage: 3 });

    await s.label('keep', 'me');
    const cleared = await s.clear();
    expect(cleared.labels).toEqual({ keep: 'me' });
    expect(await s.messages()).toEqual([]);

    await s.archive();
    await until('archived sessions hidden', async () => {
      const visible = await listSessions(w.client, { agent: 'assistant' });
      const all = await listSessions(w.client, { agent: 'assistant', includeArchived: true });
      return !visible.some((x) => x.id === s.id) && all.some((x) => x.id === s.id && x.archived);
    });
    await s.unarchive();
    expect((await s.info()).archived).toBe(false);

    const deleted = await s.delete();
    expect(deleted.runs).toBeGreaterThanOrEqual(1);
    const gone = await rejection(s.info());
    expect(gone.code).toBe('SESSION_NOT_FOUND');
    // The fork lives on.
    fake.enqueue(say('fork still here'));
    expect(await fork.prompt('hello')).toBe('fork still here');
    await fork.end();
  });

  it('auto-archives a session idle past the threshold; a flagged one is exempt', async () => {
    const idle = await start({ autoArchiveAfterMs: 1500 });
    const flagged = await start({ autoArchiveAfterMs: 1500 });
    await flagged.flag();
    await until('auto-archive', async () => (await idle.info()).archived, 15_000);
    expect((await flagged.info()).archived).toBe(false);
    await idle.end();
    await flagged.end();
  });

  it('continues as new across 3 boundaries keeping id, conversation, queue, pending approval and queries', async () => {
    const s = await startSession(w.client, longAssistant, {
      id: sid('can'),
      taskQueue: w.taskQueue,
      historyLimit: 40,
      settings: { permissionMode: 'ask', workingDirectory: dir },
    });
    const runIds = new Set<string>();
    for (let i = 0; i < 8; i++) {
      fake.enqueue(say(`answer ${i}`));
      expect(await s.prompt(`question ${i}`)).toBe(`answer ${i}`);
      runIds.add((await s.info()).runId);
    }
    const info = await s.info();
    expect(info.continuedRuns).toBeGreaterThanOrEqual(3);
    expect(runIds.size).toBeGreaterThanOrEqual(3);
    expect(info.messageCount).toBe(8);
    const all = await s.messages();
    const texts = all.filter((m) => m.type === 'user').map((m) => (m as { text: string }).text);
    expect(texts.at(-1)).toBe('question 7');

    // A pending approval and queued messages survive the next boundary.
    await fs.writeFile(path.join(dir, 'x.txt'), 'x');
    fake.enqueue(callTools({ name: 'read_file', input: { path: 'x.txt' } }), say('read'));
    expect(await s.prompt('read x')).toBe('read');
    const runBefore = (await s.info()).runId;
    fake.enqueue(callTools({ name: 'write_file', input: { path: `can-${n}.txt`, content: 'c' } }), say('wrote it'));
    const writing = s.prompt('write it');
    const pending = await until('the approval', async () => (await s.pendingApprovals())[0]);
    // The list tells a session waiting for a person from one working (its memo, from visibility alone).
    const listed = () => listSessions(w.client, { query: `WorkflowId = '${s.workflow.workflowId}'` }).then((rows) => rows[0]);
    const waitingRow = await until('the list shows the approval', async () => ((await listed())?.waitingApprovals ? listed() : undefined));
    expect(waitingRow?.waitingApprovals).toEqual([{ callId: pending.callId, tool: 'write_file' }]);
    const queued: string[] = [];
    for (let i = 0; i < 12; i++) queued.push((await s.send(`queued ${i}`)).messageId);
    const moved = await until('a continue-as-new while waiting', async () => {
      const i = await s.info();
      return i.runId !== runBefore ? i : undefined;
    });
    expect(moved.pendingApprovals.map((p) => p.callId)).toEqual([pending.callId]);
    expect(moved.queued.length).toBe(12);
    // The continued run still says so (its list row is the new run's).
    const movedRow = await until('the new run listed', async () => ((await listed())?.runId === moved.runId ? listed() : undefined));
    expect(movedRow?.waitingApprovals).toEqual([{ callId: pending.callId, tool: 'write_file' }]);
    for (let i = 0; i < 12; i++) fake.enqueue(say(`q${i} answered`));
    await s.approve(pending.callId);
    expect(await writing).toBe('wrote it');
    for (let i = 0; i < 12; i++) expect(await s.reply(queued[i]!)).toMatch(/answered/);
    await until('the list shows no approval', async () => { const row = await listed(); return row && !row.waitingApprovals ? row : undefined; });
    await s.end();
  });
});

async function storeBytes(dir: string): Promise<number> {
  let total = 0;
  const walk = async (d: string): Promise<void> => {
    for (const e of await fs.readdir(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else total += (await fs.stat(p)).size;
    }
  };
  await walk(dir);
  return total;
}
