/**
 * A session answered by Gemini on the real dev server: the worker's connections route the run's model
 * calls to the 'google' provider (the real @google/genai SDK against the fake Gemini server), and a
 * prompt that calls a tool and then streams its reply comes back as our entries and stream events,
 * the tool call's thought signature sent back on the next request as Gemini requires.
 *
 * Runs cannot name their connection yet on this branch (issue 30's threading is another change): the
 * worker gives its default connection ('anthropic', what every run uses) Gemini's settings, beside a
 * 'google' one, so every model call of the run goes to Gemini.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startSession, type StreamEnvelope, type StreamEvent } from '@fabric-harness/sdk/client';
import type { Entry } from '@fabric-harness/sdk';
import { callTools, say, FakeGeminiServer, signFunctionCall } from '@fabric-harness/sdk/testing';
import { sideRequestRoute } from '../../src/cli/fake-script';
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

describe('a Gemini connection on the dev server', () => {
  let fake: FakeGeminiServer;
  let w: TestWorker;
  let dir: string;

  beforeAll(async () => {
    fake = await FakeGeminiServer.start({ apiKey: 'k' });
    // Session titles and summaries are answered aside; the script holds the conversation only.
    fake.setRoute(sideRequestRoute(() => fake.remaining()));
    const gemini = { provider: 'google' as const, baseURL: fake.url, apiKey: 'k' };
    w = await startTestWorker({ name: 'gemini', baseURL: 'http://127.0.0.1:9', apiKey: null, connections: { google: gemini, anthropic: gemini } });
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-gemini-cwd-'));
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  it('answers a prompt with a tool call and a streamed reply', async () => {
    await fs.writeFile(path.join(dir, 'notes.txt'), 'water on tuesdays');
    const text = 'Your notes say to water on tuesdays.';
    fake.enqueue(callTools({ name: 'read_file', input: { path: 'notes.txt' } }), say(text, { stream: { chunkChars: 5, pauseAfterDeltas: 2, gate: 'mid-reply' } }));
    const s = await startSession(w.client, assistant, { id: `gemini-${process.pid}-${Date.now()}`, taskQueue: w.taskQueue, settings: { workingDirectory: dir } });
    const p = await s.promptStream('What do my notes say?');
    const it = p[Symbol.asyncIterator]();
    // The reply is held by the fake after two pieces: these deltas arrived live, before the turn ended.
    const live = await readUntil(it, (e) => e.event.type === 'text_delta');
    fake.release('mid-reply');
    const all = [...live, ...(await readUntil(it, (e) => e.event.type === 'turn_ended'))];
    expect(await p.reply).toBe(text);

    const events = all.map((e) => e.event);
    const deltas = events.filter((e): e is Extract<StreamEvent, { type: 'text_delta' }> => e.type === 'text_delta');
    expect(deltas.length).toBeGreaterThan(2);
    expect(deltas.map((d) => d.text).join('')).toBe(text);
    expect(events.some((e) => e.type === 'block_started' && (e as { block: { type: string } }).block.type === 'tool_use')).toBe(true);
    expect(events.some((e) => e.type === 'tool_input_delta')).toBe(true);

    // History holds our entries: the call (its signature kept), the result the worker's tool gave, the reply.
    const messages: Entry[] = await s.messages();
    const call = messages.find((e) => e.type === 'assistant' && e.content.some((b) => b.type === 'tool_use')) as Extract<Entry, { type: 'assistant' }>;
    const sig = signFunctionCall({ name: 'read_file', args: { path: 'notes.txt' } });
    expect(call.content).toEqual([{ type: 'redacted_thinking', data: sig }, { type: 'tool_use', id: expect.stringMatching(/^fake_call_/), name: 'read_file', input: { path: 'notes.txt' } }]);
    const results = messages.find((e) => e.type === 'tool_results') as Extract<Entry, { type: 'tool_results' }>;
    expect(results.results[0]!.content).toContain('water on tuesdays');

    // The second request carried the call back with its signature and answered it as a functionResponse.
    const sent = fake.generateRequests().map((r) => r.body).filter((b) => !JSON.stringify(b.systemInstruction ?? '').includes('You name conversations.'));
    expect(sent).toHaveLength(2);
    const contents = sent[1].contents as Array<{ role: string; parts: Array<Record<string, any>> }>;
    expect(contents.at(-2)).toMatchObject({ role: 'model', parts: [{ functionCall: { name: 'read_file', args: { path: 'notes.txt' } }, thoughtSignature: sig }] });
    expect(contents.at(-1)!.parts[0]!.functionResponse).toMatchObject({ name: 'read_file', response: { output: expect.stringContaining('water on tuesdays') } });
    expect(sent[0].tools[0].functionDeclarations.map((d: { name: string }) => d.name)).toEqual(expect.arrayContaining(['read_file', 'write_file', 'bash']));
    expect(fake.remaining()).toBe(0);
  }, 90_000);
});
