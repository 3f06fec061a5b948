/**
 * `fh session …` and `fh chat` as users run them: the BUILT binary (dist/cli/main.js) in subprocesses, against
 * the integration dev server, with an in-process worker for the session test agents (test/fixtures/session-agents.ts)
 * whose model is the scripted fake of this process. `fh chat` runs in a real terminal: a tmux pane on its own socket.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { getSession } from '@fabric-harness/sdk/client';
import { callTools, FakeAnthropicServer, say } from '@fabric-harness/sdk/testing';
import { startTestWorker, type TestWorker } from '../support/test-worker';
import { until } from '../support/waiting';
import { ensureBuilt, runFh, type Ran } from '../support/fh-cli';
import { isTitleRequest, lastUserText } from '../support/session-fake';

const ROOT = path.resolve(__dirname, '../..');
const TITLE = 'Generated Session Title';

let env: NodeJS.ProcessEnv;

/** Runs `fh …` to completion (stdin is not a terminal). */
function fh(args: string[], timeoutMs = 60_000): Promise<Ran> {
  return runFh(args, env, { timeoutMs });
}

function json<T = any>(r: Ran): T {
  try {
    return JSON.parse(r.stdout) as T;
  } catch {
    throw new Error(`not JSON (exit ${r.code}):\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  }
}

/** Succeeds (exit 0) and prints JSON. */
async function ok<T = any>(args: string[]): Promise<T> {
  const r = await fh([...args, '--json']);
  if (r.code !== 0) throw new Error(`fh ${args.join(' ')} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return json<T>(r);
}

/** An error the way `fh` promises it: exactly one line on stderr, starting with `fh: `. */
function expectOneLineError(r: Ran, code: number, pattern: RegExp): void {
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code, stderr: expect.stringMatching(pattern) });
  const lines = r.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^fh: /);
}

describe('fh session', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;
  let dir: string;
  let n = 0;
  const sid = (p: string) => `cli-${p}-${process.pid}-${Date.now() % 100000}-${n++}`;

  beforeAll(async () => {
    ensureBuilt();
    fake = await FakeAnthropicServer.start({ route: (req) => (req.path === '/v1/messages' && isTitleRequest(req) ? say(TITLE) : undefined) });
    w = await startTestWorker({ name: 'cli-sessions', baseURL: fake.url });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fh-cli-session-'));
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TEMPORAL_') && !k.startsWith('ANTHROPIC_') && k !== 'FH_AGENTS'));
    env = { ...clean, TEMPORAL_ADDRESS: w.t.address, TEMPORAL_NAMESPACE: w.t.namespace, FH_STORE_DIR: w.storeDir, NO_COLOR: '1' };
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  const conversation = () => fake.messageRequests().filter((r) => !isTitleRequest(r));

  it('new, show, prompt, status, label, title, list, fork, archive, unarchive, delete: text and --json', async () => {
    const id = sid('a');
    const created = await ok(['session', 'new', 'assistant', '--id', id, '--title', 'Billing cleanup', '--label', 'area=billing', '--label', 'priority=2', '--cwd', dir, '-q', w.taskQueue]);
    expect(created).toMatchObject({ id, agent: 'assistant', taskQueue: w.taskQueue, labels: { area: 'billing', priority: 2 }, settings: { workingDirectory: dir } });
    const shown = await ok(['session', 'show', id]);
    expect(shown.info).toMatchObject({ id, agent: 'assistant', title: 'Billing cleanup', titleSource: 'user', status: 'todo', labels: { area: 'billing', priority: 2 }, messageCount: 0 });
    expect(shown.info.settings).toMatchObject({ permissionMode: 'execute', workingDirectory: dir });

    // The words after the id are the message; the reply is printed.
    fake.enqueue(say('Hello from the session.'));
    const prompted = await fh(['session', 'prompt', id, 'what', 'is', 'open?']);
    expect(prompted).toMatchObject({ code: 0, stdout: 'Hello from the session.\n' });
    expect(lastUserText(conversation().at(-1)!)).toBe('what is open?');
    fake.enqueue(say('Second answer.'));
    expect(await ok(['session', 'prompt', id, 'and then?'])).toEqual({ id, reply: 'Second answer.' });

    const text = await fh(['session', 'show', id]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^id +cli-a-/m);
    expect(text.stdout).toMatch(/^title +Billing cleanup$/m);
    expect(text.stdout).toMatch(/^status +needs-review$/m);
    expect(text.stdout).toMatch(/^labels +area=billing, priority=2$/m);
    expect(text.stdout).toMatch(/^#0 user +what is open\?$/m);
    expect(text.stdout).toMatch(/^#1 assistant +Hello from the session\.$/m);
    expect(text.stdout).toMatch(/^#3 assistant +Second answer\.$/m);
    const full = await ok(['session', 'show', id, '--messages']);
    expect(full.messages.map((m: any) => m.type)).toEqual(['user', 'assistant', 'user', 'assistant']);

    expect(await ok(['session', 'status', id, 'blocked'])).toMatchObject({ id, status: 'blocked', statusManual: true });
    expect((await ok(['session', 'label', id, 'urgent', 'priority=3', '--remove', 'area'])).labels).toEqual({ urgent: null, priority: 3 });
    expect(await ok(['session', 'title', id, 'Export', 'bug', 'triage'])).toMatchObject({ title: 'Export bug triage', titleSource: 'user' });
    const titled = await fh(['session', 'title', id, 'Export', 'bug', 'triage']);
    expect(titled).toMatchObject({ code: 0, stdout: `${id}: title Export bug triage\n` });

    // Listing reads visibility, which catches up a moment later.
    const listed = await until('the session listed with its new labels', async () => {
      const all = await ok<any[]>(['session', 'list', '--agent', 'assistant', '--label', 'priority=3', '--status', 'blocked']);
      return all.find((s) => s.id === id && s.title === 'Export bug triage');
    });
    expect(listed).toMatchObject({ status: 'blocked', labels: { urgent: null, priority: 3 }, archived: false, running: true });
    const table = await fh(['session', 'list', '--agent', 'assistant', '--label', 'priority=3']);
    expect(table.stdout).toMatch(/^ID +TITLE +STATUS +LABELS +LAST MESSAGE \(UTC\)$/m);
    expect(table.stdout).toMatch(new RegExp(`^${id} +Export bug triage +blocked +priority=3, urgent +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\dZ$`, 'm'));

    // Fork after the first answer: the fork has those two messages, the original keeps four.
    const forkId = `${id}-fork`;
    expect(await ok(['session', 'fork', id, '--at', '1', '--id', forkId, '--title', 'Other way'])).toEqual({ id: forkId, forkedFrom: { sessionId: id, atMessage: 1 } });
    const forked = await until('the fork to load', async () => {
      const f = await ok(['session', 'show', forkId, '--messages']);
      return f.messages.length === 2 ? f : undefined;
    });
    expect(forked.info).toMatchObject({ title: 'Other way', forkedFrom: { sessionId: id, atMessage: 1 }, status: 'todo' });
    expect(forked.messages[0]).toEqual({ type: 'user', text: 'what is open?' });
    expect((await ok(['session', 'show', id])).messageCount).toBe(4);

    expect(await ok(['session', 'archive', forkId])).toMatchObject({ id: forkId, archived: true });
    await until('the archived fork hidden from the default list and shown by --archived', async () => {
      const visible = await ok<any[]>(['session', 'list', '--agent', 'assistant']);
      const archived = await ok<any[]>(['session', 'list', '--agent', 'assistant', '--archived']);
      return !visible.some((s) => s.id === forkId) && archived.some((s) => s.id === forkId && s.archived);
    });
    expect(await ok(['session', 'unarchive', forkId])).toMatchObject({ archived: false });

    // Deleting asks first; with stdin not a terminal that is a usage error unless --yes.
    expectOneLineError(await fh(['session', 'delete', forkId]), 2, /asks for confirmation, and stdin is not a terminal: pass --yes/);
    const deleted = await ok(['session', 'delete', forkId, '--yes']);
    expect(deleted.id).toBe(forkId);
    expect(deleted.runs).toBeGreaterThanOrEqual(1);
    expectOneLineError(await fh(['session', 'show', forkId]), 3, new RegExp(`No session with id ${forkId} .*\\[SESSION_NOT_FOUND\\]; list sessions with`));
    // The original lives on.
    fake.enqueue(say('Still here.'));
    expect((await fh(['session', 'prompt', id, 'still there?'])).stdout).toBe('Still here.\n');
    expect(await ok(['session', 'end', id])).toEqual({ id, ended: true });
    expectOneLineError(await fh(['session', 'prompt', id, 'after the end']), 1, /\[SESSION_CLOSED\]/);
  });

  it('approve and deny from the command line: the one pending approval, or the one named; several pending is exit 2', async () => {
    const id = sid('ask');
    await ok(['session', 'new', 'assistant', '--id', id, '--mode', 'ask', '--cwd', dir, '-q', w.taskQueue]);
    expectOneLineError(await fh(['session', 'approve', id]), 2, new RegExp(`session ${id} has no tool call waiting for approval`));

    fake.enqueue(callTools({ name: 'write_file', input: { path: 'one.txt', content: '1' } }), say('Wrote one.'));
    const sent = await ok(['session', 'prompt', id, 'write', 'one', '--no-wait']);
    expect(sent).toMatchObject({ id, messageId: expect.any(String), position: expect.any(Number) });
    const pending = await until('an approval', async () => (await ok(['session', 'show', id])).info.pendingApprovals[0]);
    expect(pending).toMatchObject({ tool: 'write_file', input: { path: 'one.txt', content: '1' } });
    expect(fs.existsSync(path.join(dir, 'one.txt'))).toBe(false);
    expect(await ok(['session', 'approve', id])).toEqual({ id, callId: pending.callId, approved: true, tool: 'write_file' });
    expect(await getSession(w.client, id).reply(sent.messageId)).toBe('Wrote one.');
    expect(fs.readFileSync(path.join(dir, 'one.txt'), 'utf8')).toBe('1');
    expectOneLineError(await fh(['session', 'approve', id, pending.callId]), 1, /was already approved or denied \[ALREADY_DECIDED\]/);
    expectOneLineError(await fh(['session', 'deny', id, 'toolu_nope']), 2, /no tool call toolu_nope waits for approval .*\[UNKNOWN_TOOL_CALL\]/);

    // Two calls at once: the command names neither, so it lists them and exits 2.
    fake.enqueue(
      callTools({ name: 'write_file', input: { path: 'two.txt', content: '2' } }, { name: 'write_file', input: { path: 'three.txt', content: '3' } }),
      say('Did what I was allowed to.'),
    );
    const second = await ok(['session', 'prompt', id, 'write two and three', '--no-wait']);
    const both = await until('two approvals', async () => {
      const p = (await ok(['session', 'show', id])).info.pendingApprovals;
      return p.length === 2 ? p : undefined;
    });
    // The list says the session waits for a person, and for which tools.
    const row = await until('the list row waiting for approval', async () =>
      (await fh(['session', 'list', '--agent', 'assistant'])).stdout.split('\n').find((l) => l.includes(id) && l.includes('(approval:')),
    );
    expect(row).toMatch(/in-progress \(approval: write_file, write_file\)/);
    const many = await fh(['session', 'deny', id]);
    expect(many.code).toBe(2);
    expect(many.stderr).toContain(both[0].callId);
    expect(many.stderr).toContain(both[1].callId);
    expect(many.stderr.trim().split('\n').at(-1)).toMatch(new RegExp(`^fh: session ${id} has 2 tool calls waiting for approval .*fh session deny ${id} <callId>`));
    const two = both.find((a: any) => a.input.path === 'two.txt');
    const three = both.find((a: any) => a.input.path === 'three.txt');
    expect(await ok(['session', 'deny', id, three.callId, '--note', 'not three'])).toEqual({ id, callId: three.callId, approved: false, note: 'not three' });
    expect((await fh(['session', 'approve', id, two.callId])).stdout).toBe(`approved ${two.callId}\n`);
    expect(await getSession(w.client, id).reply(second.messageId)).toBe('Did what I was allowed to.');
    expect(fs.existsSync(path.join(dir, 'two.txt'))).toBe(true);
    expect(fs.existsSync(path.join(dir, 'three.txt'))).toBe(false);
    expect(JSON.stringify(conversation().at(-1)!.body.messages)).toContain('not three');
    await getSession(w.client, id).end();
  });

  it('prompt --start starts a missing session; interrupt; bad input is a typed error with its exit code', async () => {
    const id = sid('start');
    fake.enqueue(say('Started and answered.'));
    expect(await ok(['session', 'prompt', id, '--start', 'assistant', '-q', w.taskQueue, 'hello'])).toEqual({ id, reply: 'Started and answered.' });
    expect((await ok(['session', 'show', id])).info).toMatchObject({ agent: 'assistant', messageCount: 1 });

    expect(await ok(['session', 'interrupt', id])).toEqual({ id, interrupted: false });
    fake.enqueue(callTools({ name: 'bash', input: { command: 'sleep 60' } }));
    const sent = await ok(['session', 'prompt', id, 'take your time', '--no-wait']);
    await until('the tool to run', async () => (await getSession(w.client, id).events()).some((e) => e.type === 'tool_call'));
    expect(await ok(['session', 'interrupt', id])).toEqual({ id, interrupted: true, messageId: sent.messageId });
    await expect(getSession(w.client, id).reply(sent.messageId)).rejects.toMatchObject({ code: 'INTERRUPTED' });

    expectOneLineError(await fh(['session', 'status', id, 'nonsense']), 2, /Invalid status: 'nonsense' is not a status of this session\. Known statuses: .*blocked.* \[INVALID_STATUS\]/);
    expectOneLineError(await fh(['session', 'label', id, 'bad label!']), 2, /Invalid label: .*\[INVALID_LABEL\]/);
    expectOneLineError(await fh(['session', 'fork', id, '--at', '99']), 2, /cannot fork at message 99.*\[INVALID_FORK_POINT\]/);
    expectOneLineError(await fh(['session', 'fork', id]), 2, /needs --at <n>/);
    expectOneLineError(await fh(['session', 'new', 'assistant', '--mode', 'sometimes', '-q', w.taskQueue]), 2, /settings\.permissionMode.*\[INVALID_INPUT\]/);
    expectOneLineError(await fh(['session', 'new', 'assistant', '--auto-archive-after', 'soon']), 2, /--auto-archive-after must be a duration/);
    expectOneLineError(await fh(['session', 'new', 'assistant', '--id', id, '-q', w.taskQueue]), 1, new RegExp(`a session ${id} exists already.*\\[SESSION_EXISTS\\]`));
    expectOneLineError(await fh(['session', 'show', 'Not An Id']), 2, /\[INVALID_INPUT\]/);
    const missing = sid('missing');
    expectOneLineError(await fh(['session', 'show', missing]), 3, new RegExp(`No session with id ${missing}.*\\[SESSION_NOT_FOUND\\]`));
    expectOneLineError(await fh(['session', 'prompt', missing, 'hi']), 3, /\[SESSION_NOT_FOUND\]/);
    expectOneLineError(await fh(['session', 'status', id]), 2, /fh session status needs <status>/);
    expectOneLineError(await fh(['session', 'frob', id]), 2, /unknown command 'fh session frob'/);
    expectOneLineError(await fh(['session', 'list', '--archived', '--all']), 2, /--archived and --all exclude each other/);
    await getSession(w.client, id).end();
  });

  it('a session on a task queue no worker polls: new warns, show and approve say so at once (not "Failed to query Workflow" after --timeout)', async () => {
    const queue = `nobody-${process.pid}-${n++}`;
    const created = await fh(['session', 'new', 'assistant', '-q', queue]);
    expect(created.code).toBe(0);
    const id = created.stdout.trim();
    expect(created.stderr).toContain(`no worker polls task queue '${queue}'`);
    expect(created.stderr).toContain("only a worker can tell whether it serves agent 'assistant'");
    const noWorker = new RegExp(`session ${id} is running, but no worker polls task queue '${queue}': start one with \`fh worker --agents <module>\``);
    // --timeout 300: the answer must come from the poller check, not from the deadline.
    expectOneLineError(await fh(['session', 'show', id, '--timeout', '300']), 1, noWorker);
    expectOneLineError(await fh(['session', 'approve', id, '--timeout', '300']), 1, noWorker);
    // fh chat asks the session first (bounded at 15 s): when that goes unanswered it names the idle queue too.
    expectOneLineError(await fh(['chat', id]), 1, new RegExp(`session ${id} did not answer: no worker polls task queue '${queue}'`));
    expect((await fh(['session', 'delete', id, '--yes'])).code).toBe(0);
  });

  describe('fh chat in a terminal (tmux)', () => {
    // A server of our own (its socket in a temp dir): nothing of anyone else's tmux is touched.
    const socket = path.join(os.tmpdir(), `fh-cli-test-${process.pid}.tmux`);
    const pane = 'chat';
    const tmux = (...a: string[]) => execFileSync('tmux', ['-S', socket, ...a], { encoding: 'utf8' });
    const screen = () => tmux('capture-pane', '-p', '-J', '-t', pane, '-S', '-500');
    const type = (text: string) => {
      tmux('send-keys', '-t', pane, '-l', text);
      tmux('send-keys', '-t', pane, 'Enter');
    };
    const shows = (what: string | RegExp, ms = 30_000) =>
      until(`the pane to show ${what}`, async () => (typeof what === 'string' ? screen().includes(what) : what.test(screen())) || undefined, ms).catch((err) => {
        throw new Error(`${(err as Error).message}\n--- pane ---\n${screen()}`);
      });

    afterAll(() => {
      try {
        tmux('kill-server');
      } catch {
        // already gone
      }
      fs.rmSync(socket, { force: true });
    });

    it('asks for an approval in the pane, runs the tool once answered y, shows the reply; /mode, /status; Ctrl-C interrupts, then quits', async () => {
      const id = sid('chat');
      await ok(['session', 'new', 'assistant', '--id', id, '--mode', 'ask', '--cwd', dir, '-q', w.taskQueue]);
      fake.enqueue(callTools({ name: 'write_file', input: { path: 'chat.txt', content: 'from the chat' } }), say('The file is written.'));
      const vars = Object.entries({ TEMPORAL_ADDRESS: env.TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE: env.TEMPORAL_NAMESPACE, FH_STORE_DIR: env.FH_STORE_DIR })
        .map(([k, v]) => `${k}='${v}'`)
        .join(' ');
      // The pane stays after fh exits so its exit status can be read.
      const cmd = `cd '${ROOT}' && env -u NO_COLOR ${vars} '${process.execPath}' dist/cli/main.js chat ${id}; echo "[fh exited $?]"; sleep 120`;
      tmux('new-session', '-d', '-s', pane, '-x', '120', '-y', '40', cmd);
      await shows(`session ${id}`);
      await shows(/^you ›/m);

      type('please write the file');
      await shows('→ write_file {"path":"chat.txt","content":"from the chat"}');
      await shows(/\? write_file \{"path":"chat\.txt","content":"from the chat"\} — approve\? \[y\/N\/note\]/);
      expect(fs.existsSync(path.join(dir, 'chat.txt'))).toBe(false);
      type('y');
      await shows('approved write_file');
      await shows(/^The file is written\.$/m);
      expect(fs.readFileSync(path.join(dir, 'chat.txt'), 'utf8')).toBe('from the chat');
      // The reply is shown once (as the model's text), not again when the reply arrives.
      expect(screen().match(/The file is written\./g)).toHaveLength(1);

      type('/mode execute');
      await shows('mode: execute');
      type('/status blocked');
      await shows('status: blocked');
      type('/status nonsense');
      await shows(/! Invalid status: 'nonsense'.*\[INVALID_STATUS\]/);

      // Ctrl-C while a turn runs interrupts it; Ctrl-C at the idle prompt quits.
      // Typing while it runs queues the next message, answered after the interrupted one.
      fake.enqueue(callTools({ name: 'bash', input: { command: 'sleep 60; echo late' } }), say('Answering the queued one.'));
      type('take a long time');
      await shows('→ bash {"command":"sleep 60; echo late"}');
      type('and then this');
      await shows('(queued: answered after the running turn)');
      await new Promise((r) => setTimeout(r, 500));
      tmux('send-keys', '-t', pane, 'C-c');
      await shows('(interrupted)');
      await shows(/^Answering the queued one\.$/m);
      expect(lastUserText(conversation().at(-1)!)).toMatch(/and then this/);
      const info = await getSession(w.client, id).info();
      expect(info).toMatchObject({ status: 'blocked', settings: { permissionMode: 'execute' }, processing: false });
      tmux('send-keys', '-t', pane, 'C-c');
      await shows('[fh exited 0]');
      await getSession(w.client, id).end();
    });

    it('a reopened chat shows the earlier conversation; /status alone shows the status; Ctrl-C during an approval drops the question', async () => {
      const id = sid('chat-again');
      const chatPane = 'chat-again';
      const paneScreen = () => tmux('capture-pane', '-p', '-J', '-t', chatPane, '-S', '-500');
      const paneShows = (what: string | RegExp) =>
        until(`the pane to show ${what}`, async () => (typeof what === 'string' ? paneScreen().includes(what) : what.test(paneScreen())) || undefined, 30_000).catch((err) => {
          throw new Error(`${(err as Error).message}\n--- pane ---\n${paneScreen()}`);
        });
      const typeIn = (text: string) => {
        tmux('send-keys', '-t', chatPane, '-l', text);
        tmux('send-keys', '-t', chatPane, 'Enter');
      };
      await ok(['session', 'new', 'assistant', '--id', id, '--mode', 'ask', '--cwd', dir, '--title', 'Earlier talk', '-q', w.taskQueue]);
      fake.enqueue(say('The first answer.'));
      expect(await ok(['session', 'prompt', id, 'the first question'])).toMatchObject({ reply: 'The first answer.' });

      const vars = Object.entries({ TEMPORAL_ADDRESS: env.TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE: env.TEMPORAL_NAMESPACE, FH_STORE_DIR: env.FH_STORE_DIR })
        .map(([k, v]) => `${k}='${v}'`)
        .join(' ');
      tmux('new-session', '-d', '-s', chatPane, '-x', '120', '-y', '40', `cd '${ROOT}' && ${vars} '${process.execPath}' dist/cli/main.js chat ${id}; echo "[fh exited $?]"; sleep 120`);
      await paneShows(`session ${id}`);
      await paneShows(/#0 user +the first question/);
      await paneShows(/#1 assistant +The first answer\./);

      typeIn('/status');
      await paneShows('status: needs-review · turn idle · mode ask');

      fake.enqueue(callTools({ name: 'write_file', input: { path: 'again.txt', content: 'no' } }));
      typeIn('write it');
      await paneShows(/\? write_file .* — approve\? \[y\/N\/note\]/);
      tmux('send-keys', '-t', chatPane, 'C-c');
      await paneShows('write_file: no longer waiting (the turn was interrupted)');
      await paneShows('(interrupted)');
      // The prompt is the chat's again: Enter sends no answer for the call that no longer waits.
      await until('the prompt to be "you ›"', async () => /you › *$/.test(paneScreen().trimEnd()) || undefined, 10_000);
      tmux('send-keys', '-t', chatPane, 'Enter');
      await new Promise((r) => setTimeout(r, 500));
      expect(paneScreen()).not.toMatch(/denied write_file|UNKNOWN_TOOL_CALL/);
      expect(fs.existsSync(path.join(dir, 'again.txt'))).toBe(false);
      tmux('send-keys', '-t', chatPane, 'C-c');
      await paneShows('[fh exited 0]');
      await getSession(w.client, id).end();
    });
  });
});
