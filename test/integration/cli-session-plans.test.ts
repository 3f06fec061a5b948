/**
 * Plans from the terminal: `fh session plans|approve-plan|decline-plan` and `fh chat` (a tmux pane) on a
 * session in explore mode whose agent (the scripted fake) calls submit_plan. The BUILT binary against the
 * integration dev server, with an in-process worker.
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
import { isTitleRequest } from '../support/session-fake';

const ROOT = path.resolve(__dirname, '../..');
const PLAN = '# Plan\n1. write plan.txt\n2. report';

describe('plans from fh', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;
  let env: NodeJS.ProcessEnv;
  let n = 0;
  const sid = (p: string) => `cli-plan-${p}-${process.pid}-${Date.now() % 100000}-${n++}`;
  const fh = (args: string[]): Promise<Ran> => runFh(args, env, { timeoutMs: 60_000 });
  async function ok<T = any>(args: string[]): Promise<T> {
    const r = await fh([...args, '--json']);
    if (r.code !== 0) throw new Error(`fh ${args.join(' ')} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    return JSON.parse(r.stdout) as T;
  }
  async function newSession(prefix: string): Promise<{ id: string; dir: string }> {
    const id = sid(prefix);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fh-cli-plan-'));
    await ok(['session', 'new', 'assistant', '--id', id, '--mode', 'explore', '--cwd', dir, '-q', w.taskQueue]);
    return { id, dir };
  }

  beforeAll(async () => {
    ensureBuilt();
    fake = await FakeAnthropicServer.start({ route: (req) => (req.path === '/v1/messages' && isTitleRequest(req) ? say('Plan Title') : undefined) });
    w = await startTestWorker({ name: 'cli-plans', baseURL: fake.url });
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TEMPORAL_') && !k.startsWith('ANTHROPIC_') && k !== 'FH_AGENTS'));
    env = { ...clean, TEMPORAL_ADDRESS: w.t.address, TEMPORAL_NAMESPACE: w.t.namespace, FH_STORE_DIR: w.storeDir, NO_COLOR: '1' };
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  it('fh session plans lists and prints a plan; approve-plan --mode execute runs the write; decline-plan sends the note; bad input is a one-line error', async () => {
    const { id, dir } = await newSession('a');
    expect((await fh(['session', 'approve-plan', id])).stderr).toMatch(new RegExp(`^fh: session ${id} has no plan waiting for a decision`));
    fake.enqueue(callTools({ name: 'submit_plan', input: { plan: PLAN } }), callTools({ name: 'write_file', input: { path: 'plan.txt', content: 'ok' } }), say('Done.'));
    const sent = await ok(['session', 'prompt', id, 'make', 'plan.txt', '--no-wait']);
    const plan = await until('the plan', async () => (await ok<any[]>(['session', 'plans', id])).find((p) => p.status === 'pending'));
    expect(plan.markdown).toBe(PLAN);
    expect((await fh(['session', 'plans', id])).stdout).toMatch(new RegExp(`^${plan.id}  pending .* # Plan\\n$`));
    expect((await fh(['session', 'plans', id, plan.id])).stdout).toContain('\n\n# Plan\n1. write plan.txt\n2. report\n');
    const bad = await fh(['session', 'approve-plan', id, '--mode', 'explore']);
    expect({ code: bad.code, stderr: bad.stderr }).toEqual({ code: 2, stderr: "fh: --mode must be one of ask, execute; got 'explore'\n" });

    expect(await ok(['session', 'approve-plan', id, '--mode', 'execute'])).toMatchObject({ id, plan: { id: plan.id, status: 'approved', mode: 'execute' } });
    expect(await getSession(w.client, id).reply(sent.messageId)).toBe('Done.');
    expect(fs.readFileSync(path.join(dir, 'plan.txt'), 'utf8')).toBe('ok');
    const twice = await fh(['session', 'approve-plan', id, plan.id]);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toMatch(/^fh: planId: plan \S+ was already approved or declined \[ALREADY_DECIDED\]\n$/);
    const unknown = await fh(['session', 'decline-plan', id, 'toolu_nope']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^fh: planId: no plan toolu_nope waits for a decision .*\[UNKNOWN_PLAN\]/);

    // A second session: declined with a note, which the model reads.
    const second = await newSession('b');
    fake.enqueue(callTools({ name: 'submit_plan', input: { plan: PLAN } }), say('Revising.'));
    const before = fake.messageRequests().filter((r) => !isTitleRequest(r)).length;
    const sent2 = await ok(['session', 'prompt', second.id, 'plan', '--no-wait']);
    await until('the plan', async () => (await ok<any[]>(['session', 'plans', second.id])).find((p) => p.status === 'pending'));
    expect((await fh(['session', 'decline-plan', second.id, '--note', 'smaller steps'])).stdout).toMatch(/^declined plan \S+\n$/);
    expect(await getSession(w.client, second.id).reply(sent2.messageId)).toBe('Revising.');
    const after = fake.messageRequests().filter((r) => !isTitleRequest(r))[before + 1]!;
    expect(JSON.stringify(after.body.messages.at(-1))).toContain('The user said: smaller steps');
  });

  describe('fh chat in a terminal (tmux)', () => {
    const socket = path.join(os.tmpdir(), `fh-cli-plan-${process.pid}.tmux`);
    const pane = 'plan';
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

    it('shows the plan as text (escape sequences removed) and approves it with a mode switch', async () => {
      const { id, dir } = await newSession('chat');
      // An escape sequence in the model's plan must not reach the terminal as one.
      fake.enqueue(callTools({ name: 'submit_plan', input: { plan: '# Chat plan\n1. write chat.txt \u001b]0;pwned\u0007done' } }), callTools({ name: 'write_file', input: { path: 'chat.txt', content: 'planned' } }), say('All written.'));
      const vars = Object.entries({ TEMPORAL_ADDRESS: env.TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE: env.TEMPORAL_NAMESPACE, FH_STORE_DIR: env.FH_STORE_DIR })
        .map(([k, v]) => `${k}='${v}'`)
        .join(' ');
      tmux('new-session', '-d', '-s', pane, '-x', '140', '-y', '40', `cd '${ROOT}' && env -u NO_COLOR ${vars} '${process.execPath}' dist/cli/main.js chat ${id}; echo "[fh exited $?]"; sleep 120`);
      await shows(/^you ›/m);
      type('please plan it');
      await shows('plan submitted for your approval:');
      await shows('│ # Chat plan');
      await shows('│ 1. write chat.txt ]0;pwneddone');
      await shows('? approve the plan? [y / y ask / y execute / N / note]');
      type('y execute');
      await shows('approved the plan; the session is now in execute mode');
      await shows(/^All written\.$/m);
      expect(fs.readFileSync(path.join(dir, 'chat.txt'), 'utf8')).toBe('planned');
      expect((await getSession(w.client, id).plans())[0]).toMatchObject({ status: 'approved', mode: 'execute' });
    });
  });
});
