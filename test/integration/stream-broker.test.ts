/**
 * The live path on a broker (Redis Streams, a redis-server of the test's own): the worker adds each live
 * event at once; a reader with `stream({ broker })` blocks on the broker while the call streams and asks
 * Temporal nothing then; with the broker gone mid-turn it falls back to the heartbeat details and still
 * reads the whole reply. The fake model paces its deltas; describes are counted with a client interceptor.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, type WorkflowClientInterceptor } from '@temporalio/client';
import { getSession, liveBroker, sessionChatHandler, startSession, TemporalStreamTransport, type LiveBrokerClient, type StreamEnvelope } from '@fabric-harness/sdk/client';
import { FabricHarnessPlugin, FileTranscriptStore } from '@fabric-harness/sdk/worker';
import { say, type FakeAnthropicServer } from '@fabric-harness/sdk/testing';
import { assistant } from '../fixtures/session-agents';
import { startSessionFake } from '../support/session-fake';
import { startTestWorker, type TestWorker } from '../support/test-worker';
import { startRedis, type TestRedis } from '../support/redis';
import { temporalBoardSource } from '../../src/board/source';

const REPLY = 'Mulch keeps the soil moist between waterings, so water less often. '.repeat(3);

describe('the live path on a broker', () => {
  let fake: FakeAnthropicServer;
  let redis: TestRedis;
  let w: TestWorker;
  let broker: LiveBrokerClient;
  let counted: Client;
  let dir: string;
  const calls = { describe: 0, query: 0 };

  beforeAll(async () => {
    fake = await startSessionFake({ stream: { chunkChars: 4, delayMs: 25 } });
    redis = await startRedis();
    w = await startTestWorker({ name: 'broker', baseURL: fake.url, liveBroker: { url: redis.url } });
    broker = liveBroker({ url: redis.url });
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-broker-'));
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
    await broker?.close();
    await w?.stop();
    await redis?.stop();
    await fake?.stop();
  });

  /** One turn read by one reader from the broker (or without it); the reply, what it saw, when, and the describes made. */
  async function turn(id: string, withBroker: boolean, during?: () => Promise<void>) {
    const s = getSession(counted, id);
    const from = (await new TemporalStreamTransport(counted, id).snapshot(Number.MAX_SAFE_INTEGER)).page.next - 1;
    const abort = new AbortController();
    const seen: Array<{ env: StreamEnvelope; at: number }> = [];
    /** Temporal asked from the prompt to the reply's first delta (how the reader learned of the call). */
    let beforeFirstDelta: { describe: number; query: number } | undefined;
    let following!: () => void;
    const ready = new Promise<void>((r) => (following = r));
    const reader = (async () => {
      for await (const env of s.stream({ from, signal: abort.signal, ...(withBroker ? { broker } : {}) })) {
        seen.push({ env, at: Date.now() });
        if (seen.length === 1) following();
        if (env.event.type === 'text_delta') beforeFirstDelta ??= { ...calls };
        if (env.event.type === 'message_end' && env.event.stopReason === 'end_turn') return;
      }
    })();
    await ready;
    calls.describe = 0;
    calls.query = 0;
    fake.enqueue(say(REPLY));
    const replying = s.prompt('How often should I water?');
    await during?.();
    const reply = await replying;
    await reader;
    abort.abort();
    const end = seen.find((x) => x.env.event.type === 'message_end')!.at;
    const deltas = seen.filter((x) => x.env.event.type === 'text_delta');
    return {
      reply,
      text: deltas.map((x) => (x.env.event as { text: string }).text).join(''),
      live: deltas.filter((x) => x.at < end - 3).length / deltas.length,
      describes: calls.describe,
      beforeFirstDelta,
    };
  }

  /**
   * A turn read without the broker, then one read with it: both read the whole reply, and the one on the
   * broker asks Temporal less than half as often. What the broker's turn saw.
   */
  async function comparedWithBroker<T extends { text: string; describes: number }>(read: (withBroker: boolean, n: number) => Promise<T>): Promise<T> {
    const polled = await read(false, 1);
    const brokered = await read(true, 2);
    expect(polled.text).toBe(REPLY);
    expect(brokered.text).toBe(REPLY);
    // Polling describes every 100 ms for the whole call; the broker's reader only at the call's start and end.
    expect(polled.describes).toBeGreaterThan(8);
    expect(brokered.describes).toBeLessThan(polled.describes / 2);
    return brokered;
  }

  it('the worker connects to the broker when it starts, before any call streams (a first delta waits on no connect)', async () => {
    // First in the file: no reader has connected yet and no call has run, so a second client is the worker's.
    const { createClient } = require('redis') as { createClient(o: { url: string }): { connect(): Promise<unknown>; sendCommand(a: string[]): Promise<unknown>; destroy(): void } };
    const probe = createClient({ url: redis.url });
    await probe.connect();
    try {
      const clients = async () => String(await probe.sendCommand(['CLIENT', 'LIST'])).trim().split('\n').length;
      const started = Date.now();
      while ((await clients()) < 2 && Date.now() - started < 5_000) await new Promise((r) => setTimeout(r, 50));
      expect(await clients()).toBe(2);
    } finally {
      probe.destroy();
    }
  });

  it('a reader on the broker sees the deltas as they stream and asks Temporal nothing while they do', async () => {
    const id = `broker-${process.pid}-${Date.now() % 100000}`;
    await startSession(w.client, assistant, { id, taskQueue: w.taskQueue, settings: { workingDirectory: dir } });
    const brokered = await comparedWithBroker((withBroker) => turn(id, withBroker));
    expect(brokered.live).toBeGreaterThan(0.9);
  });

  it("a reader on the broker learns of a turn's call from the history's long poll and the stream query alone, describing nothing", async () => {
    const id = `broker-first-${process.pid}-${Date.now() % 100000}`;
    await startSession(w.client, assistant, { id, taskQueue: w.taskQueue, settings: { workingDirectory: dir } });
    const r = await turn(id, true);
    expect(r.text).toBe(REPLY);
    // The long poll's answer says the run runs and how long its history is; the query's page holds the
    // call's block opened after the turn's first events. (It described after every wake, and asked the
    // page once more to find the block: 5 processes doing so put the first delta 74-95 ms behind the model's.)
    expect(r.beforeFirstDelta).toEqual({ describe: 0, query: expect.any(Number) });
    expect(r.beforeFirstDelta!.query).toBeGreaterThan(0);
  });

  it('a reader that joins while the call streams finds its block in the first page: one describe before the first delta', async () => {
    const id = `broker-join-${process.pid}-${Date.now() % 100000}`;
    await startSession(w.client, assistant, { id, taskQueue: w.taskQueue, settings: { workingDirectory: dir } });
    const s = getSession(counted, id);
    // A first turn: its title comes after the call's block, and a page holding it would hold the block too.
    fake.enqueue(say(REPLY));
    await s.prompt('What is mulch?');
    const from = (await new TemporalStreamTransport(counted, id).snapshot(Number.MAX_SAFE_INTEGER)).page.next;
    fake.enqueue(say(REPLY));
    const replying = s.prompt('How deep should the mulch be?');
    await new Promise((res) => setTimeout(res, 400)); // into the stream: the turn's first events and its call's block are there
    calls.describe = 0;
    const abort = new AbortController();
    let describedBeforeDelta: number | undefined;
    let text = '';
    for await (const env of s.stream({ from, signal: abort.signal, broker })) {
      if (env.event.type === 'text_delta') {
        describedBeforeDelta ??= calls.describe;
        text += env.event.text;
      }
      if (env.event.type === 'message_end' && env.event.stopReason === 'end_turn') break;
    }
    abort.abort();
    expect(await replying).toBe(REPLY);
    expect(text).toBe(REPLY);
    // The page from the turn's start holds its events and, after them, the open call's block (a page not
    // cut at its limit holds every block to the end). Before, it ended at its last event: one more
    // describe and query to find the block.
    expect(describedBeforeDelta).toBe(1);
  });

  it('readers of a session in three processes ask Temporal about as often as those of one process (the stream query, the long poll, a describe to start)', async () => {
    const id = `broker-procs-${process.pid}-${Date.now() % 100000}`;
    await startSession(w.client, assistant, { id, taskQueue: w.taskQueue, settings: { workingDirectory: dir } });
    // A process is a client here: each client has its own shared reader per session, as a process does.
    const asked = [0, 0, 0];
    /** The long polls on the history each client made (a wait from where it had read, not the first paging to the end). */
    const polled = [0, 0, 0];
    /** The describes each client asked: counted from its readers' start until every reader follows. */
    const started = [0, 0, 0];
    const clients = asked.map((_, i) => {
      const c = new Client({
        connection: w.client.connection,
        namespace: w.t.namespace,
        interceptors: { workflow: [{ query: (input, next) => (asked[i]!++, next(input)), describe: (input, next) => (started[i]!++, next(input)) }] },
        plugins: [new FabricHarnessPlugin({ store: new FileTranscriptStore(w.storeDir) })],
      });
      const service = w.client.workflowService;
      const counted = Object.create(service, {
        getWorkflowExecutionHistory: {
          value: (req: Parameters<typeof service.getWorkflowExecutionHistory>[0]) => {
            if (req.waitNewEvent && req.nextPageToken?.length) polled[i]!++;
            return service.getWorkflowExecutionHistory(req);
          },
        },
      }) as typeof service;
      Object.defineProperty(c, 'workflowService', { value: counted });
      return c;
    });
    /** One turn followed by 2 readers in each of `n` processes; the queries each process asked. */
    const turnIn = async (n: number, question: string) => {
      started.fill(0);
      const from = (await new TemporalStreamTransport(w.client, id).snapshot(Number.MAX_SAFE_INTEGER)).page.next - 1;
      const abort = new AbortController();
      let following = 0;
      let allFollowing!: () => void;
      const ready = new Promise<void>((r) => (allFollowing = r));
      const readers = clients.slice(0, n).flatMap((c) =>
        [0, 1].map(async () => {
          let text = '';
          let first = true;
          for await (const env of getSession(c, id).stream({ from, signal: abort.signal, broker })) {
            if (first && ++following === n * 2) allFollowing();
            first = false;
            if (env.event.type === 'text_delta') text += env.event.text;
            if (env.event.type === 'message_end' && env.event.stopReason === 'end_turn') return text;
          }
          return text;
        }),
      );
      await ready;
      const startedNow = started.slice(0, n).reduce((a, b) => a + b, 0);
      asked.fill(0);
      polled.fill(0);
      fake.enqueue(say(REPLY));
      expect(await getSession(w.client, id).prompt(question)).toBe(REPLY);
      for (const text of await Promise.all(readers)) expect(text).toBe(REPLY);
      abort.abort();
      const sum = (xs: number[]) => xs.slice(0, n).reduce((a, b) => a + b, 0);
      return { queries: asked.slice(0, n), polls: sum(polled), started: startedNow };
    };
    await turnIn(3, 'Warm-up: what is mulch?'); // the first turn has a title too
    const one = await turnIn(1, 'How deep?');
    const three = await turnIn(3, 'How often?');
    const total = three.queries.reduce((a, b) => a + b, 0);
    // Each process asked as often as one process alone did before (three times the queries); now the
    // first to need a page asks and shares it on the broker, and the others wait for it.
    expect(one.queries[0]).toBeGreaterThan(0);
    expect(total).toBeLessThan(one.queries[0]! * 2);
    // The same for the history's long poll: one process polls for all of them, the others wait on the
    // broker for its answers (each polled for itself before: three times one process's polls).
    // And a process's readers start from the last answer polled for all when there is one, not from a
    // describe (each process described once to start before).
    console.log(`a turn: long polls ${one.polls} (one process) / ${three.polls} (three); stream queries ${one.queries[0]} / ${total}; describes to start ${one.started} / ${three.started}`);
    expect(one.polls).toBeGreaterThan(0);
    expect(three.polls).toBeLessThan(one.polls * 2);
    expect(three.started).toBeLessThan(3);
  });

  it('a web chat handler given the broker streams the reply from it, asking Temporal nothing while it streams', async () => {
    const id = `broker-chat-${process.pid}-${Date.now() % 100000}`;
    await startSession(w.client, assistant, { id, taskQueue: w.taskQueue, settings: { workingDirectory: dir } });
    /** One chat turn through the handler (the AI SDK's POST); the text it streamed and the describes made. */
    const chatTurn = async (withBroker: boolean, n: number) => {
      const handler = sessionChatHandler({ client: counted, agent: assistant, taskQueue: w.taskQueue, ...(withBroker ? { broker } : {}) });
      fake.enqueue(say(REPLY));
      calls.describe = 0;
      const body = JSON.stringify({ id, trigger: 'submit-message', messages: [{ id: `ui-${n}`, role: 'user', parts: [{ type: 'text', text: `Question ${n}?` }] }] });
      const res = await handler.POST(new Request('http://localhost/api/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body }));
      expect(res.status).toBe(200);
      const sse = await res.text();
      const text = sse
        .split('\n')
        .filter((l) => l.startsWith('data: {'))
        .map((l) => JSON.parse(l.slice(6)) as { type: string; delta?: string })
        .filter((c) => c.type === 'text-delta')
        .map((c) => c.delta)
        .join('');
      return { text, describes: calls.describe };
    };
    await comparedWithBroker(chatTurn);
  });

  it("the board's live channel given the broker reads the reply from it, asking Temporal nothing while it streams", async () => {
    const id = `broker-board-${process.pid}-${Date.now() % 100000}`;
    const s = await startSession(w.client, assistant, { id, taskQueue: w.taskQueue, settings: { workingDirectory: dir } });
    const boardTurn = async (withBroker: boolean, n: number) => {
      const source = temporalBoardSource(counted, withBroker ? { broker } : {});
      const from = String((await new TemporalStreamTransport(counted, id).snapshot(Number.MAX_SAFE_INTEGER)).page.next - 1);
      const abort = new AbortController();
      let text = '';
      // Read from the turn's start offset: nothing of the reply is missed whenever the subscription starts.
      const reading = (async () => {
        for await (const env of source.subscribe(id, from, abort.signal)) {
          const data = env.event.data as { type: string; text?: string; stopReason?: string };
          if (data.type === 'text_delta') text += data.text;
          if (data.type === 'message_end' && data.stopReason === 'end_turn') return;
        }
      })();
      calls.describe = 0;
      fake.enqueue(say(REPLY));
      await s.prompt(`Board question ${n}?`);
      await reading;
      abort.abort();
      return { text, describes: calls.describe };
    };
    await comparedWithBroker(boardTurn);
  });

  it('with the broker gone mid-turn the reader falls back to the heartbeat details and reads the whole reply', async () => {
    const id = `broker-down-${process.pid}-${Date.now() % 100000}`;
    await startSession(w.client, assistant, { id, taskQueue: w.taskQueue, settings: { workingDirectory: dir } });
    const r = await turn(id, true, async () => {
      await new Promise((res) => setTimeout(res, 300)); // into the stream: the broker dies under a blocked read
      await redis.stop();
    });
    expect(r.reply).toBe(REPLY);
    expect(r.text).toBe(REPLY);
  });
});
