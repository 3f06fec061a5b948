/**
 * Streaming on the real dev server: a session's (and a served agent's) stream of typed events, with
 * deltas from the model activity's heartbeat details, reconnection by offset, honest retries (a worker
 * killed mid-stream, an overloaded_error mid-stream), continue-as-new, thinking and tool_use deltas.
 * The fake model pauses its stream at gates the test releases, so nothing here depends on timing.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@temporalio/client';
import {
  CallAssembly,
  startAgent,
  startSession,
  type SessionHandle,
  type StreamEnvelope,
  type StreamEvent,
} from '@fabric-harness/sdk/client';
import { FabricHarnessPlugin, FileTranscriptStore } from '@fabric-harness/sdk/worker';
import { callTools, say, think, type FakeAnthropicServer, type FakeToolUseStep } from '@fabric-harness/sdk/testing';
import type { Entry } from '@fabric-harness/sdk';
import { assistant } from '../fixtures/session-agents';
import { chatter } from '../fixtures/compaction-agents';
import { isTitleRequest, startSessionFake } from '../support/session-fake';
import { startTestWorker, type TestWorker } from '../support/test-worker';
import { killableWorkers, killHard } from '../support/worker-process-control';

/** Reads `it` until `stop` says so (inclusive); returns what was read. */
async function readUntil(it: AsyncIterator<StreamEnvelope>, stop: (e: StreamEnvelope) => boolean): Promise<StreamEnvelope[]> {
  const out: StreamEnvelope[] = [];
  for (;;) {
    const next = await it.next();
    if (next.done) return out;
    out.push(next.value);
    if (stop(next.value)) return out;
  }
}

/** The text of the last assistant entry of a conversation: the reply as history holds it. */
function lastReply(entries: Entry[]): string {
  const last = [...entries].reverse().find((e) => e.type === 'assistant') as Extract<Entry, { type: 'assistant' }>;
  return last.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
}

/** Assembles each model call's reply from live events, as a client does (a newer attempt voids the older). */
function assemble(envs: StreamEnvelope[]): Map<string, CallAssembly> {
  const calls = new Map<string, CallAssembly>();
  for (const { event } of envs) {
    if (!event.callId || event.type === 'message_end' || event.type.startsWith('tool_') || event.type.startsWith('approval')) continue;
    if (!calls.has(event.callId)) calls.set(event.callId, new CallAssembly());
    calls.get(event.callId)!.apply(event);
  }
  return calls;
}

const isType =
  <K extends StreamEvent['type']>(type: K) =>
  (e: StreamEnvelope): boolean =>
    e.event.type === type;

describe('streaming', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;
  let dir: string;
  let n = 0;
  const sid = (p: string) => `${p}-${process.pid}-${Date.now() % 100000}-${n++}`;

  beforeAll(async () => {
    fake = await startSessionFake();
    w = await startTestWorker({ name: 'streaming', baseURL: fake.url });
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-stream-cwd-'));
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  const start = (extra: Parameters<typeof startSession>[2] = {}): Promise<SessionHandle> =>
    startSession(w.client, assistant, { id: sid('stream'), taskQueue: w.taskQueue, settings: { workingDirectory: dir }, ...extra });

  it('delivers deltas to a subscriber before the turn ends; the assembled reply is the reply in history', async () => {
    const s = await start();
    const text = 'The garden needs water twice a week in summer.';
    fake.enqueue(say(text, { stream: { pauseAfterDeltas: 2, gate: 'before-end' } }));
    const p = await s.promptStream('How often should I water?');
    let settled = false;
    void p.reply.then(() => (settled = true), () => (settled = true));
    const it = p[Symbol.asyncIterator]();
    const first = await readUntil(it, isType('text_delta'));
    // The model is held mid-reply by the fake: the turn cannot have ended.
    expect(settled).toBe(false);
    expect((await s.info()).processing).toBe(true);
    expect(first.some(isType('turn_started'))).toBe(true);
    expect(first.find(isType('attempt_started'))!.event).toMatchObject({ kind: 'model', attempt: 1, messageId: p.messageId });
    fake.release('before-end');
    const rest = await readUntil(it, isType('turn_ended'));
    const all = [...first, ...rest];
    const offsets = all.map((e) => e.offset);
    expect([...offsets].sort((a, b) => a - b)).toEqual(offsets);
    expect(new Set(offsets).size).toBe(offsets.length);
    expect(await p.reply).toBe(text);
    expect(p.text()).toBe(text);
    const end = all.find(isType('message_end'))!.event as Extract<StreamEvent, { type: 'message_end' }>;
    expect(end.content).toEqual([{ type: 'text', text }]);
    expect(end.usage.outputTokens).toBeGreaterThan(0);
    expect(lastReply(await s.messages())).toBe(text);
    // Events every one of them says whose it is.
    for (const e of all) expect(e.event.messageId).toBe(p.messageId);
  }, 60_000);

  it('a subscriber that reconnects from an offset misses nothing and sees nothing twice', async () => {
    const s = await start();
    const text = 'Reconnecting readers get every delta exactly once, in order, from where they stopped.';
    fake.enqueue(say(text, { stream: { chunkChars: 4, pauseAfterDeltas: 6, gate: 'reconnect' } }));
    const from = 0;
    const abort = new AbortController();
    const first = s.stream({ from, signal: abort.signal })[Symbol.asyncIterator]();
    const reply = s.prompt('Tell me about reconnecting.');
    // Read up to the third delta, then drop the connection mid-reply.
    let deltas = 0;
    const before = await readUntil(first, (e) => e.event.type === 'text_delta' && ++deltas === 3);
    abort.abort();
    await first.return?.();
    const last = before[before.length - 1]!.offset;
    const second = s.stream({ from: last + 1 })[Symbol.asyncIterator]();
    // The new connection reads the deltas published while it was away (the model is held at the sixth)…
    const caught = await readUntil(second, (e) => e.event.type === 'text_delta' && ++deltas === 6);
    fake.release('reconnect');
    // …and the rest as they come.
    const after = [...caught, ...(await readUntil(second, isType('turn_ended')))];
    await second.return?.();
    const all = [...before, ...after];
    const offsets = all.map((e) => e.offset);
    expect(new Set(offsets).size).toBe(offsets.length);
    expect([...offsets].sort((a, b) => a - b)).toEqual(offsets);
    expect(all.filter(isType('turn_started'))).toHaveLength(1);
    expect(all.filter(isType('message_end'))).toHaveLength(1);
    const calls = [...assemble(all).values()];
    expect(calls).toHaveLength(1);
    expect(calls[0]!.text()).toBe(text);
    expect(await reply).toBe(text);
    expect(lastReply(await s.messages())).toBe(text);
  }, 60_000);

  it('streams thinking and tool_use input as deltas, with tool start and end', async () => {
    await fs.writeFile(path.join(dir, 'notes.txt'), 'water on tuesdays');
    const s = await start({ settings: { workingDirectory: dir, thinking: 'low' } });
    const thought = 'The user asks about notes; read the file before answering.';
    fake.enqueue(
      // Held after 8 thinking deltas, the signature and 2 of 3 input deltas: the client sees them live.
      { ...(callTools(think(thought), { name: 'read_file', input: { path: 'notes.txt' }, id: 'toolu_stream_1' }) as FakeToolUseStep), stream: { pauseAfterDeltas: 11, gate: 'tool-input' } },
      say('Your notes say: water on tuesdays.', { thinking: 'The file answers it.' }),
    );
    const p = await s.promptStream('What do my notes say?');
    const it = p[Symbol.asyncIterator]();
    let inputs = 0;
    const all = await readUntil(it, (e) => e.event.type === 'tool_input_delta' && ++inputs === 2);
    fake.release('tool-input');
    all.push(...(await readUntil(it, isType('turn_ended'))));
    expect(await p.reply).toBe('Your notes say: water on tuesdays.');
    const firstCall = all.find(isType('attempt_started'))!.event.callId!;
    const thinking = all.filter((e) => e.event.type === 'thinking_delta' && e.event.callId === firstCall).map((e) => (e.event as { thinking: string }).thinking);
    expect(thinking.length).toBeGreaterThan(1);
    expect(thinking.join('')).toBe(thought);
    const json = all.filter(isType('tool_input_delta')).map((e) => (e.event as { partialJson: string }).partialJson);
    expect(json.length).toBeGreaterThan(1);
    expect(JSON.parse(json.join(''))).toEqual({ path: 'notes.txt' });
    const started = all.find(isType('block_started') as (e: StreamEnvelope) => boolean);
    expect(started).toBeDefined();
    expect(all.find((e) => e.event.type === 'block_started' && e.event.block.type === 'tool_use')!.event).toMatchObject({ block: { type: 'tool_use', id: 'toolu_stream_1', name: 'read_file' } });
    const types = all.map((e) => e.event.type);
    expect(types.indexOf('tool_started')).toBeGreaterThan(types.indexOf('message_end'));
    expect(all.find(isType('tool_ended'))!.event).toMatchObject({ callId: 'toolu_stream_1', name: 'read_file', isError: false, content: 'water on tuesdays' });
    expect(p.text()).toBe('Your notes say: water on tuesdays.');
  }, 60_000);

  it("streams a bash tool's output lines as they come, before the tool ends", async () => {
    const s = await start();
    const go = path.join(dir, `go-${n}`);
    const wait = (f: string) => `while [ ! -f '${f}' ]; do sleep 0.1; done`;
    fake.enqueue(callTools({ name: 'bash', input: { command: `echo line-one; ${wait(`${go}-1`)}; echo line-two; ${wait(`${go}-2`)}` } }), say('Ran it.'));
    const p = await s.promptStream('Run the script.');
    const it = p[Symbol.asyncIterator]();
    const first = await readUntil(it, (e) => e.event.type === 'tool_output' && e.event.line === 'line-one');
    // The command waits for a file after each line: the tool is still running when the line arrives.
    await fs.writeFile(`${go}-1`, '');
    const second = await readUntil(it, (e) => e.event.type === 'tool_output' && e.event.line === 'line-two');
    const all = [...first, ...second];
    expect(all.some(isType('tool_ended'))).toBe(false);
    expect(all.filter(isType('tool_output')).map((e) => (e.event as { line: string }).line)).toEqual(['line-one', 'line-two']);
    const toolUseId = all.find(isType('tool_started'))!.event.callId;
    for (const e of all.filter(isType('tool_output'))) expect(e.event).toMatchObject({ callId: toolUseId, stream: 'stdout', messageId: p.messageId });
    await fs.writeFile(`${go}-2`, '');
    const rest = await readUntil(it, isType('turn_ended'));
    expect(rest.find(isType('tool_ended'))!.event).toMatchObject({ callId: toolUseId, isError: false });
    expect(await p.reply).toBe('Ran it.');
    expect(p.text()).toBe('Ran it.');
  }, 60_000);

  it('an overloaded_error mid-stream is retried: the client drops the failed attempt and assembles the reply once', async () => {
    const s = await start();
    fake.enqueue(
      say('This first attempt is cut off by the provider', { stream: { chunkChars: 5, pauseAfterDeltas: 2, gate: 'overload', errorAfterDeltas: 3 } }),
      say('The second attempt answers in full.'),
    );
    const p = await s.promptStream('Answer despite an overload.');
    const it = p[Symbol.asyncIterator]();
    const before = await readUntil(it, (e) => e.event.type === 'text_delta' && e.event.attempt === 1);
    fake.release('overload');
    const after = await readUntil(it, isType('turn_ended'));
    const all = [...before, ...after];
    expect(all.filter(isType('attempt_started')).map((e) => e.event.attempt)).toEqual([1, 2]);
    expect(all.some((e) => e.event.type === 'text_delta' && e.event.attempt === 1)).toBe(true);
    expect(await p.reply).toBe('The second attempt answers in full.');
    expect(p.text()).toBe('The second attempt answers in full.');
    expect(all.find(isType('message_end'))!.event.attempt).toBe(2);
    expect(lastReply(await s.messages())).toBe('The second attempt answers in full.');
  }, 60_000);

  it('keeps streaming across continue-as-new, offsets still growing', async () => {
    const s = await start({ historyLimit: 20 });
    const reader = s.stream()[Symbol.asyncIterator]();
    const seen: StreamEnvelope[] = [];
    let runs = 0;
    for (let i = 0; runs === 0 && i < 12; i++) {
      fake.enqueue(say(`reply number ${i}`));
      await s.prompt(`message ${i}`);
      seen.push(...(await readUntil(reader, isType('turn_ended'))));
      runs = (await s.info()).continuedRuns;
    }
    expect(runs).toBeGreaterThan(0);
    fake.enqueue(say('streamed in the next run', { stream: { pauseAfterDeltas: 1, gate: 'after-can' } }));
    const p = await s.promptStream('and now?');
    const it = p[Symbol.asyncIterator]();
    const first = await readUntil(it, isType('text_delta'));
    fake.release('after-can');
    const rest = await readUntil(it, isType('turn_ended'));
    expect(p.text()).toBe('streamed in the next run');
    // The long-lived reader saw the new run's turn too, after everything of the old one.
    const next = await readUntil(reader, (e) => e.event.type === 'turn_ended' && e.event.messageId === p.messageId);
    await reader.return?.();
    const offsets = [...seen, ...next].map((e) => e.offset);
    expect([...offsets].sort((a, b) => a - b)).toEqual(offsets);
    expect(new Set(offsets).size).toBe(offsets.length);
    expect(next.filter((e) => e.event.type === 'text_delta').map((e) => (e.event as { text: string }).text).join('')).toBe('streamed in the next run');
    expect(first[0]!.offset).toBeGreaterThan(seen[seen.length - 1]!.offset);
    expect(rest.some(isType('message_end'))).toBe(true);
  }, 120_000);

  it("a served agent's handle streams a prompt the same way", async () => {
    const handle = await startAgent(w.client, chatter, { prompts: [], serveMs: 60_000, compaction: { enabled: false } }, { workflowId: sid('served'), taskQueue: w.taskQueue });
    fake.enqueue(say('Served agents stream too.', { stream: { pauseAfterDeltas: 1, gate: 'served' } }));
    const p = await handle.promptStream('Do you stream?');
    const it = p[Symbol.asyncIterator]();
    const first = await readUntil(it, isType('text_delta'));
    expect(first.some(isType('turn_started'))).toBe(true);
    fake.release('served');
    await readUntil(it, isType('turn_ended'));
    expect(await p.reply).toBe('Served agents stream too.');
    expect(p.text()).toBe('Served agents stream too.');
    await handle.close();
  }, 60_000);
});

describe('streaming, a worker killed mid-stream', () => {
  const workers = killableWorkers();

  it('leaves the assembled reply equal to the reply in history, once', async () => {
    const { t, fake } = workers;
    const storeDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-stream-kill-'));
    const taskQueue = `stream-kill-${process.pid}-${Date.now()}`;
    // The first attempt streams part of a reply and hangs; the retry (on the second worker) answers in full.
    fake.enqueue(
      say('PARTIAL text of an attempt whose worker dies', { stream: { pauseAfterDeltas: 3, gate: 'never' } }),
      say('The reply the second worker gave.'),
    );
    const first = await workers.start({ taskQueue, fakeUrl: fake.url, storeDir });
    const client = new Client({ connection: t.connection, namespace: t.namespace, plugins: [new FabricHarnessPlugin({ store: new FileTranscriptStore(storeDir) })] });
    const s = await startSession(client, assistant, { id: `stream-kill-${process.pid}-${Date.now()}`, taskQueue });
    const p = await s.promptStream('Say something.');
    const it = p[Symbol.asyncIterator]();
    // The client has seen the doomed attempt's partial text before the worker dies.
    const before = await readUntil(it, (e) => e.event.type === 'text_delta' && e.event.attempt === 1);
    await killHard(first);
    await workers.start({ taskQueue, fakeUrl: fake.url, storeDir });
    const after = await readUntil(it, isType('turn_ended'));
    const all = [...before, ...after];
    expect(all.some((e) => e.event.type === 'text_delta' && (e.event as { text: string }).text.startsWith('PARTIAL'))).toBe(true);
    expect(await p.reply).toBe('The reply the second worker gave.');
    const history = lastReply(await s.messages());
    expect(history).toBe('The reply the second worker gave.');
    expect(p.text()).toBe(history);
    expect(all.filter(isType('message_end'))).toHaveLength(1);
    expect(all.filter(isType('attempt_started')).map((e) => e.event.attempt)).toEqual([1, 2]);
    expect(fake.messageRequests().filter((r) => !isTitleRequest(r))).toHaveLength(2);
    await s.end();
  }, 120_000);
});
