/**
 * A session's connection and model from the terminal: the BUILT `fh` in subprocesses against the dev
 * server, with a worker that has two connections, each its own fake Anthropic server. `fh session new
 * --connection --model` starts the session there (its turns reach that connection's endpoint only),
 * `fh session show` prints both, `fh chat --new` takes the same flags, and in `fh chat` `/model` changes the
 * model while `/connection` after the first message prints the session's CONNECTION_LOCKED message.
 */
import { getSession } from '@fabric-harness/sdk/client';
import { say, type FakeAnthropicServer } from '@fabric-harness/sdk/testing';
import { ensureBuilt, runFh, type Ran } from '../support/fh-cli';
import { isTitleRequest, startSessionFake } from '../support/session-fake';
import { startTestWorker, type TestWorker } from '../support/test-worker';

const turns = (fake: FakeAnthropicServer) => fake.messageRequests().filter((r) => r.path === '/v1/messages' && !isTitleRequest(r));

describe('fh: a session on a named connection', () => {
  let fake1: FakeAnthropicServer;
  let fake2: FakeAnthropicServer;
  let w: TestWorker;
  let env: NodeJS.ProcessEnv;
  let n = 0;
  const sid = (p: string) => `cli-conn-${p}-${process.pid}-${Date.now() % 100000}-${n++}`;
  const fh = (args: string[], input?: string): Promise<Ran> => runFh(args, env, { timeoutMs: 60_000, ...(input !== undefined ? { input } : {}) });

  beforeAll(async () => {
    ensureBuilt();
    fake1 = await startSessionFake();
    fake2 = await startSessionFake({ apiKey: 'k' });
    w = await startTestWorker({ name: 'cli-conn', baseURL: fake1.url, connections: { alt: { provider: 'anthropic', baseURL: fake2.url, apiKey: 'k' } } });
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TEMPORAL_') && !k.startsWith('ANTHROPIC_') && k !== 'FH_AGENTS'));
    env = { ...clean, TEMPORAL_ADDRESS: w.t.address, TEMPORAL_NAMESPACE: w.t.namespace, FH_STORE_DIR: w.storeDir, NO_COLOR: '1' };
  });
  afterAll(async () => {
    await w?.stop();
    await fake1?.stop();
    await fake2?.stop();
  });

  it('session new --connection --model, show, prompt; then in fh chat /model changes it and /connection is CONNECTION_LOCKED', async () => {
    const id = sid('new');
    const created = await fh(['session', 'new', 'assistant', '--id', id, '--connection', 'alt', '--model', 'claude-haiku-4-5', '-q', w.taskQueue, '--json']);
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ id, settings: { connection: 'alt', model: 'claude-haiku-4-5' } });
    const shown = await fh(['session', 'show', id]);
    expect(shown.stdout).toMatch(/^model +claude-haiku-4-5 on connection alt$/m);

    const before1 = turns(fake1).length;
    fake2.enqueue(say('hello from alt'));
    expect(await fh(['session', 'prompt', id, 'hello'])).toMatchObject({ code: 0, stdout: 'hello from alt\n' });
    expect(turns(fake2).map((r) => r.body.model)).toEqual(['claude-haiku-4-5']);
    expect(turns(fake1)).toHaveLength(before1);
    expect((await fh(['session', 'show', id])).stdout).toMatch(/^model +claude-haiku-4-5 on connection alt \(connection locked\)$/m);

    // fh chat with its lines piped in: each is handled in order, then the chat quits at end of input.
    const chat = await fh(['chat', id], '/model claude-opus-4-1\n/connection anthropic\n/exit\n');
    expect(chat.code).toBe(0);
    expect(chat.stdout).toContain('model: claude-opus-4-1 (connection alt)');
    expect(chat.stdout).toContain(
      "! settings.connection: the session's connection is locked after its first message: it is 'alt' and cannot change to 'anthropic'. The model can change within 'alt'; start a new session to use 'anthropic' [CONNECTION_LOCKED]",
    );
    expect((await getSession(w.client, id).info()).settings).toMatchObject({ connection: 'alt', model: 'claude-opus-4-1' });
    await getSession(w.client, id).end();
  });

  it('fh chat --new takes --connection and --model; /connection before the first message sets it; a bad name is a one-line error', async () => {
    const id = sid('chat');
    const chat = await fh(['chat', '--new', 'assistant', '--id', id, '--connection', 'alt', '--model', 'claude-haiku-4-5', '-q', w.taskQueue], '/connection anthropic\n/exit\n');
    expect(chat.code).toBe(0);
    expect(chat.stdout).toContain('connection: anthropic · model claude-haiku-4-5');
    expect((await getSession(w.client, id).info()).settings).toMatchObject({ connection: 'anthropic', model: 'claude-haiku-4-5' });
    await getSession(w.client, id).end();

    const bad = await fh(['session', 'new', 'assistant', '--connection', 'no such', '-q', w.taskQueue]);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^fh: .*settings\.connection/)]);
  });
});
