/**
 * A session on an OpenAI connection, on the real dev server: the worker's connection speaks the
 * Responses API to the fake Responses server (the official openai SDK parses its stream), and the
 * session's turn makes a tool call and streams its reply exactly as on Anthropic: live text and tool
 * input deltas, tool start and end, the reply in history, the tool result sent back as a
 * function_call_output.
 *
 * The session names its connection (`connection: 'openai'`, `local`) and a model in it; the worker's
 * default connection ('anthropic') points nowhere, so a call that went there would fail, not pass.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startSession, type StreamEnvelope } from '@fabric-harness/sdk/client';
import { callTools, FakeOpenAIChatServer, FakeOpenAIResponsesServer, say, type RecordedRequest } from '@fabric-harness/sdk/testing';
import { assistant } from '../fixtures/session-agents';
import { startTestWorker, type TestWorker } from '../support/test-worker';

async function readUntil(it: AsyncIterator<StreamEnvelope>, stop: (e: StreamEnvelope) => boolean): Promise<StreamEnvelope[]> {
  const out: StreamEnvelope[] = [];
  for (;;) {
    const next = await it.next();
    if (next.done) return out;
    out.push(next.value);
    if (stop(next.value)) return out;
  }
}

const isTitleRequest = (req: RecordedRequest): boolean => typeof req.body?.instructions === 'string' && /title/i.test(req.body.instructions);

describe('a session on the OpenAI connection (Responses API)', () => {
  let fake: FakeOpenAIResponsesServer;
  let w: TestWorker;
  let dir: string;

  beforeAll(async () => {
    fake = await FakeOpenAIResponsesServer.start({ apiKey: 'k', route: (req) => (isTitleRequest(req) ? say('Notes On Watering') : undefined) });
    const openai = { provider: 'openai' as const, baseURL: fake.url, apiKey: 'k' };
    // The Anthropic settings point nowhere useful: a call that reached them would fail, not pass.
    w = await startTestWorker({ name: 'openai-conn', baseURL: 'http://127.0.0.1:9', connections: { openai } });
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-openai-cwd-'));
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  it('makes a tool call and streams its reply, live, with the tool result sent back as a function_call_output', async () => {
    await fs.writeFile(path.join(dir, 'notes.txt'), 'water on tuesdays');
    const s = await startSession(w.client, assistant, { id: `openai-${process.pid}-${Date.now()}`, taskQueue: w.taskQueue, connection: 'openai', model: 'gpt-5.1', settings: { workingDirectory: dir } });
    fake.enqueue(
      callTools({ name: 'read_file', input: { path: 'notes.txt' }, id: 'call_notes_1' }),
      say('Your notes say: water on tuesdays.', { stream: { chunkChars: 6, pauseAfterDeltas: 2, gate: 'mid-reply' } }),
    );
    const p = await s.promptStream('What do my notes say?');
    let settled = false;
    void p.reply.then(() => (settled = true), () => (settled = true));
    const it = p[Symbol.asyncIterator]();
    let deltas = 0;
    const live = await readUntil(it, (e) => e.event.type === 'text_delta' && ++deltas === 2);
    // The fake holds the reply after two deltas: they reached the client while the turn was still running.
    expect(settled).toBe(false);
    fake.release('mid-reply');
    const all = [...live, ...(await readUntil(it, (e) => e.event.type === 'turn_ended'))];
    expect(await p.reply).toBe('Your notes say: water on tuesdays.');

    const json = all.flatMap((e) => (e.event.type === 'tool_input_delta' ? [e.event.partialJson] : []));
    expect(JSON.parse(json.join(''))).toEqual({ path: 'notes.txt' });
    expect(all.find((e) => e.event.type === 'block_started' && e.event.block.type === 'tool_use')!.event).toMatchObject({ block: { type: 'tool_use', id: 'call_notes_1', name: 'read_file' } });
    expect(all.find((e) => e.event.type === 'tool_ended')!.event).toMatchObject({ callId: 'call_notes_1', name: 'read_file', isError: false, content: 'water on tuesdays' });
    const text = all.flatMap((e) => (e.event.type === 'text_delta' ? [e.event.text] : []));
    expect(text.length).toBeGreaterThan(2);
    expect(text.join('')).toBe('Your notes say: water on tuesdays.');

    const turns = fake.acceptedRequests().filter((r) => !isTitleRequest(r));
    expect(turns).toHaveLength(2);
    expect(turns[0]!.body).toMatchObject({ model: 'gpt-5.1', stream: true, store: false });
    expect(turns[0]!.body.tools.map((t: { name: string }) => t.name)).toEqual(expect.arrayContaining(['read_file', 'write_file', 'bash']));
    expect(turns[1]!.body.input.slice(-2)).toEqual([
      { type: 'function_call', call_id: 'call_notes_1', name: 'read_file', arguments: '{"path":"notes.txt"}' },
      { type: 'function_call_output', call_id: 'call_notes_1', output: expect.stringContaining('water on tuesdays') },
    ]);
  }, 90_000);
});

const isChatTitleRequest = (req: RecordedRequest): boolean => req.body?.messages?.[0]?.role === 'system' && /title/i.test(String(req.body.messages[0].content));

describe('a session on an OpenAI-compatible connection (Chat Completions)', () => {
  let fake: FakeOpenAIChatServer;
  let w: TestWorker;
  let dir: string;

  beforeAll(async () => {
    fake = await FakeOpenAIChatServer.start({ keyless: true, models: ['llama3.2'], route: (req) => (isChatTitleRequest(req) ? say('Notes On Watering') : undefined) });
    const local = { provider: 'openai-compatible' as const, baseURL: fake.url };
    w = await startTestWorker({ name: 'openai-compat', baseURL: 'http://127.0.0.1:9', connections: { local } });
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-compat-cwd-'));
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  it('makes a tool call and streams its reply, the result sent back as a tool message', async () => {
    await fs.writeFile(path.join(dir, 'notes.txt'), 'water on tuesdays');
    const s = await startSession(w.client, assistant, { id: `compat-${process.pid}-${Date.now()}`, taskQueue: w.taskQueue, connection: 'local', model: 'llama3.2', settings: { workingDirectory: dir } });
    fake.enqueue(callTools({ name: 'read_file', input: { path: 'notes.txt' }, id: 'call_local_1' }), say('Your notes say: water on tuesdays.', { stream: { chunkChars: 6 } }));
    const p = await s.promptStream('What do my notes say?');
    const all = await readUntil(p[Symbol.asyncIterator](), (e) => e.event.type === 'turn_ended');
    expect(await p.reply).toBe('Your notes say: water on tuesdays.');
    // Deltas that arrive together are published together: what matters is that they add up to the reply.
    expect(all.flatMap((e) => (e.event.type === 'text_delta' ? [e.event.text] : [])).join('')).toBe('Your notes say: water on tuesdays.');
    expect(all.find((e) => e.event.type === 'tool_ended')!.event).toMatchObject({ callId: 'call_local_1', isError: false, content: 'water on tuesdays' });
    const turns = fake.acceptedRequests().filter((r) => !isChatTitleRequest(r));
    expect(turns[0]!.body).toMatchObject({ model: 'llama3.2', stream: true, stream_options: { include_usage: true } });
    expect(turns[0]!.headers['authorization']).toBeUndefined();
    expect(turns[1]!.body.messages.slice(-2)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_local_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"notes.txt"}' } }] },
      { role: 'tool', tool_call_id: 'call_local_1', content: expect.stringContaining('water on tuesdays') },
    ]);
  }, 90_000);
});
