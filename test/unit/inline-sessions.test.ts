/** openSession: an agent that serves, run inline, its conversation saved to a JSONL file and resumed. */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { agent, listInlineSessions, openSession, schema } from '@fabric-harness/sdk';
import { FakeAnthropicServer, fail, say } from '@fabric-harness/sdk/testing';
import { savedAnthropicEnv } from '../support/anthropic-env';

const helper = agent({
  name: 'helper',
  run: async ({ init }) => {
    const fabric = await init({ system: 'You help.', contextWindowTokens: 100_000 });
    await fabric.session();
    return fabric.serve();
  },
});

/** The user texts of a recorded request, in order. */
function userTexts(body: any): string[] {
  return body.messages
    .filter((m: any) => m.role === 'user')
    .map((m: any) => (typeof m.content === 'string' ? m.content : m.content.map((b: any) => b.text ?? '').join('')));
}

describe('inline sessions (openSession)', () => {
  let fake: FakeAnthropicServer;
  let dir: string;
  const env = savedAnthropicEnv();

  beforeAll(async () => {
    fake = await FakeAnthropicServer.start();
    env.pointAt(fake.url);
  });
  afterAll(async () => {
    await fake.stop();
    env.restore();
  });
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-inline-sessions-'));
  });
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('saves every answered turn, and a new openSession with the id continues the conversation', async () => {
    const first = await openSession(helper, { dir });
    expect(first.id).toMatch(/^\d{6}-[a-z]+-[a-z]+$/);
    expect(first.header()).toMatchObject({ agent: 'helper', status: 'todo', messageCount: 0 });

    fake.enqueue(say('Paris.'), say('About 2.1 million.'));
    expect(await first.prompt('What is the capital of France?')).toBe('Paris.');
    expect(first.header()).toMatchObject({ title: 'What is the capital of', status: 'needs-review', messageCount: 1, entryCount: 2 });
    expect(await first.prompt('How many people live there?')).toBe('About 2.1 million.');
    await first.close();
    await expect(first.prompt('still there?')).rejects.toMatchObject({ code: 'NOT_SERVING' });

    // The file: the header, then the four entries.
    const lines = (await fs.readFile(path.join(dir, `${first.id}.jsonl`), 'utf8')).trimEnd().split('\n');
    expect(JSON.parse(lines[0]!)).toMatchObject({ id: first.id, messageCount: 2, entryCount: 4, status: 'needs-review' });
    expect(lines.slice(1).map((l) => JSON.parse(l).type)).toEqual(['user', 'assistant', 'user', 'assistant']);

    // Another process (here: another openSession) continues it; the model sees the earlier turns.
    const again = await openSession(helper, { dir, id: first.id });
    expect(again.messages()).toHaveLength(4);
    fake.enqueue(say('Yes, the Seine.'));
    const before = fake.messageRequests().length;
    expect(await again.prompt('Does a river run through it?')).toBe('Yes, the Seine.');
    const request = fake.messageRequests()[before]!;
    expect(userTexts(request.body)).toEqual(['What is the capital of France?', 'How many people live there?', 'Does a river run through it?']);
    expect(JSON.stringify(request.body.messages)).toContain('About 2.1 million.');
    await again.close();

    const listed = await listInlineSessions({ dir });
    expect(listed).toHaveLength(1);
    // The title came from the first message and is kept; the count covers all three messages (one meaning with Temporal's).
    expect(listed[0]).toMatchObject({ id: first.id, title: 'What is the capital of', messageCount: 3, entryCount: 6 });
  });

  it('a prompt sent before the run reaches serve() waits for it; a given title is kept', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slow = agent({
      name: 'slow',
      input: schema.object({ topic: schema.string() }),
      run: async ({ init, input }) => {
        const fabric = await init({ system: `Talk about ${input.topic}.`, contextWindowTokens: 100_000 });
        await gate;
        return fabric.serve();
      },
    });
    const session = await openSession(slow, { dir, id: 'my-chat', title: 'Chosen title', input: { topic: 'cats' } });
    fake.enqueue(say('Meow.'));
    const reply = session.prompt('Say something');
    let settled = false;
    void reply.then(() => (settled = true));
    await new Promise((r) => setTimeout(r, 50));
    expect(settled).toBe(false);
    release();
    expect(await reply).toBe('Meow.');
    expect(fake.messageRequests().at(-1)!.body.system).toContain('Talk about cats.');
    await session.close();
    expect((await listInlineSessions({ dir }))[0]).toMatchObject({ id: 'my-chat', title: 'Chosen title', agent: 'slow' });
  });

  it('a run that returns without serving rejects the prompts with NOT_SERVING; a run that throws, with its error', async () => {
    const once = agent({ name: 'once', run: async ({ init }) => (await (await init({ contextWindowTokens: 100_000 })).session()).id });
    const s1 = await openSession(once, { dir });
    await expect(s1.prompt('hello')).rejects.toMatchObject({ code: 'NOT_SERVING', reason: 'never-served' });
    await s1.close();

    const broken = agent({ name: 'broken', run: async () => { throw new Error('no luck'); } });
    const s2 = await openSession(broken, { dir });
    await expect(s2.prompt('hello')).rejects.toThrow('no luck');
    await expect(s2.close()).rejects.toThrow('no luck');
  });

  it('a failed prompt is rolled back, saved as such, and the session goes on', async () => {
    const session = await openSession(helper, { dir, id: 'flaky' });
    fake.enqueue(fail(400, { message: 'bad request' }), say('fine now'));
    await expect(session.prompt('first try')).rejects.toMatchObject({ code: 'MODEL_INVALID_REQUEST' });
    expect(await session.prompt('second try')).toBe('fine now');
    await session.close();
    const lines = (await fs.readFile(path.join(dir, 'flaky.jsonl'), 'utf8')).trimEnd().split('\n');
    expect(lines.slice(1).map((l) => JSON.parse(l).text ?? 'reply')).toEqual(['second try', 'reply']);
  });

  it('refuses bad ids, a blank prompt, and resuming with another agent, with typed errors', async () => {
    await expect(openSession(helper, { dir, id: '../outside' })).rejects.toMatchObject({ code: 'INVALID_SESSION_ID', field: 'id' });
    await expect(openSession(helper, { dir, id: 'Upper' })).rejects.toMatchObject({ code: 'INVALID_SESSION_ID' });
    const session = await openSession(helper, { dir, id: 'mine' });
    await expect(session.prompt('   ')).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'text' });
    await session.close();
    const other = agent({ name: 'other', run: async ({ init }) => (await init()).serve() });
    await expect(openSession(other, { dir, id: 'mine' })).rejects.toMatchObject({ code: 'SESSION_AGENT_MISMATCH', savedAgent: 'helper' });
    expect(await fs.readdir(dir)).toEqual(['mine.jsonl']);
  });
});
