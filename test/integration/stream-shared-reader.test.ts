/**
 * Readers of one session in one process share one upstream reader (client/stream/shared-transport.ts):
 * many watchers see every event, in order, each once, exactly as a lone reader does, while Temporal is
 * asked about as often as for one reader. Counted with a client interceptor on describe and query (the
 * two calls a reader makes while a call streams).
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, type WorkflowClientInterceptor } from '@temporalio/client';
import { startSession, getSession, TemporalStreamTransport, type StreamEnvelope } from '@fabric-harness/sdk/client';
import { FabricHarnessPlugin, FileTranscriptStore } from '@fabric-harness/sdk/worker';
import { say, type FakeAnthropicServer } from '@fabric-harness/sdk/testing';
import { assistant } from '../fixtures/session-agents';
import { startSessionFake } from '../support/session-fake';
import { startTestWorker, type TestWorker } from '../support/test-worker';
import { sharedHubCount } from '../../src/client/stream/shared-transport';
const WATCHERS = 20;
let hubsWhileReading = -1;
const REPLY = 'Water the tomatoes at dawn, twice a week, more in a heatwave. '.repeat(3);

describe('a shared reader per session per process', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;
  let dir: string;
  const calls = { describe: 0, query: 0 };
  let counted: Client;

  beforeAll(async () => {
    // Paced so the live phase lasts long enough for readers to poll it many times.
    fake = await startSessionFake({ stream: { chunkChars: 4, delayMs: 25 } });
    w = await startTestWorker({ name: 'shared-reader', baseURL: fake.url });
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-shared-reader-'));
    const counter: WorkflowClientInterceptor = {
      describe: (input, next) => (calls.describe++, next(input)),
      query: (input, next) => (calls.query++, next(input)),
    };
    counted = new Client({
      connection: w.client.connection,
      namespace: w.t.namespace,
      interceptors: { workflow: [counter] },
      plugins: [new FabricHarnessPlugin({ store: new FileTranscriptStore(w.storeDir) })],
    });
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  /** Runs one turn with `watchers` readers following from the turn's start; returns what each saw and the calls made. */
  async function turn(sessionId: string, watchers: number, own = false) {
    const s = getSession(counted, sessionId);
    // Each reader starts at the session's last event, so it is following (caught up, polling) once it has that.
    const from = (await new TemporalStreamTransport(counted, sessionId).snapshot(Number.MAX_SAFE_INTEGER)).page.next - 1;
    const abort = new AbortController();
    const seen: StreamEnvelope[][] = [];
    const arrived = new Map<StreamEnvelope, number>();
    let following = 0;
    let allFollowing!: () => void;
    const ready = new Promise<void>((resolve) => (allFollowing = resolve));
    const readers = Array.from({ length: watchers }, async (_, i) => {
      const mine: StreamEnvelope[] = (seen[i] = []);
      const options = { from, signal: abort.signal, ...(own ? { transport: new TemporalStreamTransport(counted, sessionId) } : {}) };
      for await (const env of s.stream(options)) {
        mine.push(env);
        arrived.set(env, Date.now());
        if (mine.length === 1 && ++following === watchers) allFollowing();
        if (env.event.type === 'message_end' && env.event.stopReason === 'end_turn') return;
      }
    });
    await ready;
    hubsWhileReading = sharedHubCount(counted);
    calls.describe = 0;
    calls.query = 0;
    fake.enqueue(say(REPLY));
    const reply = await s.prompt('When should I water?');
    await Promise.all(readers);
    abort.abort();
    // A delta seen live arrived before the call ended; one the reader only caught up on arrives with the end.
    const live = seen.map((envs) => {
      const end = arrived.get(envs.find((e) => e.event.type === 'message_end')!)!;
      const deltas = envs.filter((e) => e.event.type === 'text_delta');
      return deltas.filter((d) => arrived.get(d)! < end - 3).length / deltas.length;
    });
    return { reply, seen, live, describes: calls.describe, queries: calls.query };
  }

  it(`${WATCHERS} watchers each see the whole turn once, in order, with about one reader's calls to Temporal`, async () => {
    const id = `shared-${process.pid}-${Date.now() % 100000}`;
    await startSession(w.client, assistant, { id, taskQueue: w.taskQueue, settings: { workingDirectory: dir } });
    const lone = await turn(id, 1);
    expect(lone.reply).toBe(REPLY);
    // While the call streams a reader polls describe for the live deltas; it asks the workflow (the
    // stream query, which the worker answers) only when the run's history grew (it asked on every poll).
    expect(lone.queries).toBeLessThan(lone.describes / 2);
    const many = await turn(id, WATCHERS);
    expect(many.reply).toBe(REPLY);
    const text = (envs: StreamEnvelope[]) => envs.map((e) => (e.event.type === 'text_delta' ? e.event.text : '')).join('');
    const offsets = (envs: StreamEnvelope[]) => envs.map((e) => e.offset);
    for (const envs of many.seen) {
      expect(text(envs)).toBe(REPLY);
      const o = offsets(envs);
      expect(new Set(o).size).toBe(o.length);
      expect([...o].sort((a, b) => a - b)).toEqual(o);
    }
    // Each watcher followed the reply as it streamed (unshared, most readers' snapshots queued behind one
    // another's queries and they saw the reply only when the call ended).
    for (const fraction of many.live) expect(fraction).toBeGreaterThan(0.5);
    // Unshared, 20 readers make about 20 times one reader's calls; shared, about one reader's (some slack
    // for the turn's own length and the readers' start, never anything near 20x).
    expect(many.describes).toBeLessThan(lone.describes * 3 + 10);
    expect(many.queries).toBeLessThan(lone.queries * 3 + 10);
    // Each watcher released its place: nothing kept for a session nobody reads.
    expect(sharedHubCount(counted)).toBe(0);
  });

  it('a reader given its own transport reads through it, not the shared one', async () => {
    const id = `own-${process.pid}-${Date.now() % 100000}`;
    await startSession(w.client, assistant, { id, taskQueue: w.taskQueue, settings: { workingDirectory: dir } });
    const own = await turn(id, 2, true);
    for (const envs of own.seen) expect(envs.map((e) => (e.event.type === 'text_delta' ? e.event.text : '')).join('')).toBe(REPLY);
    expect(hubsWhileReading).toBe(0);
  });
});
