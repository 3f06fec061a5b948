/**
 * The same scenario on every connection, each against its own protocol-faithful fake (the official SDKs
 * parse each stream), on the real dev server: a tool call and its result, a tool that waits for approval
 * and is approved from the client, a streamed reply read live, a manual compaction, a context overflow
 * recovered by the ladder, and a worker SIGKILLed mid-stream. Each check names its connection.
 *
 * The connections run side by side (one worker configured with all of them; one killable worker
 * process for the SIGKILL), so the file takes about as long as one connection's scenario: CI runs
 * integration suites one at a time, and this one must not multiply the total by the number of connections.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { auditTranscript, startAgent, type AgentHandle, type StreamEnvelope } from '@fabric-harness/sdk/client';
import type { ModelCallRecord, SummaryRecord, ToolCallRecord } from '@fabric-harness/sdk/audit';
import { FabricHarnessPlugin, FileTranscriptStore } from '@fabric-harness/sdk/worker';
import { callTools, say, type FakeStep, type RecordedRequest } from '@fabric-harness/sdk/testing';
import type { Entry } from '@fabric-harness/sdk';
import { connectionScenario } from '../fixtures/connection-agents';
import { connectionsOf, startConnectionFakes, type ConnectionFake } from '../support/connection-fakes';
import { startTestWorker, type TestWorker } from '../support/test-worker';
import { until } from '../support/waiting';
import { killableWorkers, killHard } from '../support/worker-process-control';

const MARKER = '[fabric-harness:summarize]';
const SUMMARY = '## Goal\nHelp with the weather.\n## Progress\nForecast read, web deployed.';
const OVERFLOW_PROMPT = 'Now the long one: OVERFLOW-TRIGGER';
const STREAMED = 'Streaming this reply in small pieces, one delta at a time.';

const bodyOf = (r: RecordedRequest) => JSON.stringify(r.body);
const isSummary = (r: RecordedRequest) => bodyOf(r).includes(MARKER);
const turnsOf = (c: ConnectionFake) => c.calls().filter((r) => !isSummary(r));

/** Reads `it` until `stop` says so (inclusive). */
async function readUntil(it: AsyncIterator<StreamEnvelope>, stop: (e: StreamEnvelope) => boolean): Promise<StreamEnvelope[]> {
  const out: StreamEnvelope[] = [];
  for (;;) {
    const next = await it.next();
    if (next.done) return out;
    out.push(next.value);
    if (stop(next.value)) return out;
  }
}

const textOf = (envs: StreamEnvelope[]) => envs.flatMap((e) => (e.event.type === 'text_delta' ? [e.event.text] : [])).join('');
function lastReply(entries: Entry[]): string {
  const last = [...entries].reverse().find((e) => e.type === 'assistant') as Extract<Entry, { type: 'assistant' }>;
  return last.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
}

/** The overflow ladder's decisions, as recorded in local activity markers. */
function ladderDecisions(history: temporal.api.history.v1.IHistory): Array<{ ladderStep?: string; apply?: boolean }> {
  const found: Array<{ ladderStep?: string; apply?: boolean }> = [];
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(visit);
    else if (v && typeof v === 'object') {
      if ('ladderStep' in v && 'why' in v) found.push(v as { ladderStep?: string; apply?: boolean });
      else Object.values(v).forEach(visit);
    }
  };
  for (const e of history.events ?? []) {
    for (const d of Object.values(e.markerRecordedEventAttributes?.details ?? {})) {
      for (const p of d.payloads ?? []) {
        try {
          visit(JSON.parse(Buffer.from(p.data!).toString()));
        } catch {
          // not JSON: not a decision
        }
      }
    }
  }
  return found;
}

/** Runs `each` on every connection at once; a failure names the connection it happened on. */
async function onEvery<T>(fakes: ConnectionFake[], each: (c: ConnectionFake) => Promise<T>): Promise<T[]> {
  const results = await Promise.allSettled(fakes.map(each));
  const failed = results.flatMap((r, i) => (r.status === 'rejected' ? [`on '${fakes[i]!.name}': ${(r.reason as Error)?.stack ?? r.reason}`] : []));
  if (failed.length) throw new Error(`the scenario failed ${failed.length === 1 ? 'on one connection' : `on ${failed.length} connections`}:\n${failed.join('\n\n')}`);
  return results.map((r) => (r as PromiseFulfilledResult<T>).value);
}

/**
 * `p`, or an error saying what did not happen: a stream that never shows live text would otherwise hang
 * the suite until jest's timeout, which names no connection.
 */
async function within<T>(what: string, p: Promise<T>, ms = 30_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not within ${ms / 1000} s`)), ms)));
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Summaries go to a route (whenever the compaction asks); an overflow is answered once per connection. */
function routeFor(c: ConnectionFake, overflowOnce: () => FakeStep | undefined) {
  c.fake.setRoute((req) => {
    if (isSummary(req)) return say(SUMMARY);
    if (bodyOf(req).includes('OVERFLOW-TRIGGER')) return overflowOnce();
    return undefined;
  });
}

describe('the same scenario on every connection', () => {
  let fakes: ConnectionFake[];
  let w: TestWorker;
  let n = 0;
  // The SIGKILL runs on its own fakes, task queue and worker processes (killable), beside the scenario.
  const workers = killableWorkers();
  let killFakes: ConnectionFake[];

  beforeAll(async () => {
    killFakes = await startConnectionFakes();
    fakes = await startConnectionFakes();
    const anthropic = fakes.find((f) => f.name === 'anthropic')!;
    w = await startTestWorker({ name: 'conn-scenario', baseURL: anthropic.fake.url, connections: connectionsOf(fakes) });
  });
  afterAll(async () => {
    await w?.stop();
    await Promise.all([...(fakes ?? []), ...(killFakes ?? [])].map((f) => f.fake.stop()));
  });

  // The two run at once (it.concurrent, after the hooks above), each on every connection at once.
  it.concurrent('tools, an approval, a streamed reply, a compaction and an overflow recovered, on each connection', async () => {
    await onEvery(fakes, async (c) => {
      let overflowed = 0;
      routeFor(c, () => (overflowed++ === 0 ? c.overflow() : undefined));
      const h: AgentHandle = await startAgent(w.client, connectionScenario, { connection: c.name, model: c.model }, { workflowId: `scenario-${c.name}-${process.pid}-${Date.now()}-${n++}`, taskQueue: w.taskQueue });

      // 1. A tool call, and its result sent back to the model in the provider's shape.
      // (Gemini keys a function's response by its name; the others by the call's id.)
      const answers = (id: string, name: string) => (c.name === 'google' ? { name } : { id });
      c.fake.enqueue(callTools({ name: 'forecast', input: { city: 'Oslo' }, id: 'call_forecast_1' }), say('Oslo will be sunny.'));
      expect(await h.prompt('What is the weather in Oslo?')).toBe('Oslo will be sunny.');
      const turns = turnsOf(c);
      expect(turns).toHaveLength(2);
      expect(c.toolResults(turns[1]!)).toEqual([{ ...answers('call_forecast_1', 'forecast'), output: 'forecast for Oslo: sunny, 21 degrees', isError: false }]);

      // 2. A tool that needs approval waits for it; approved from the client, it runs and the turn ends.
      c.fake.enqueue(callTools({ name: 'deploy', input: { service: 'web' }, id: 'call_deploy_1' }), say('Web is deployed.'));
      const deployed = h.prompt('Deploy web.');
      const [waiting] = await until(`the deploy call to wait on '${c.name}'`, async () => {
        const p = await h.pendingApprovals();
        return p.length ? p : undefined;
      });
      expect(waiting).toMatchObject({ tool: 'deploy', input: { service: 'web' } });
      await h.approve(waiting!.callId);
      expect(await deployed).toBe('Web is deployed.');
      expect(c.toolResults(turnsOf(c).at(-1)!).at(-1)).toEqual({ ...answers('call_deploy_1', 'deploy'), output: 'deployed web', isError: false });

      // 3. A streamed reply: deltas reach a reader while the turn runs; they add up to the reply in history.
      c.fake.enqueue(say(STREAMED, { stream: { chunkChars: 6, pauseAfterDeltas: 2, gate: 'mid-reply' } }));
      const p = await h.promptStream('Tell me something, slowly.');
      let settled = false;
      void p.reply.then(() => (settled = true), () => (settled = true));
      const it = p[Symbol.asyncIterator]();
      let deltas = 0;
      const live = await within('two live text deltas', readUntil(it, (e) => e.event.type === 'text_delta' && ++deltas === 2));
      expect(settled).toBe(false);
      c.fake.release('mid-reply');
      const all = [...live, ...(await within('the end of the streamed turn', readUntil(it, (e) => e.event.type === 'turn_ended')))];
      expect(await p.reply).toBe(STREAMED);
      expect(textOf(all)).toBe(STREAMED);
      expect(lastReply(await h.messages())).toBe(STREAMED);

      // 4. An overflow: the provider's own context-exceeded error; the ladder compacts and the resent call succeeds.
      c.fake.enqueue(say('Answered after the overflow.'));
      const summariesBefore = c.calls().filter(isSummary).length;
      expect(await h.prompt(OVERFLOW_PROMPT)).toBe('Answered after the overflow.');
      expect(overflowed).toBe(2); // refused once, then the resent call went through
      expect(c.calls().filter(isSummary).length).toBe(summariesBefore + 1);

      // 5. A manual compaction: the summary call goes to this connection's fake too.
      const compacted = await h.compact({ keepRecentEntries: 2 });
      expect(compacted.compactedEntries).toBeGreaterThan(0);
      expect(compacted.summary).toContain('## Goal');
      expect(c.calls().filter(isSummary).length).toBe(summariesBefore + 2);
      expect((await h.compactionState())).toMatchObject({ count: 2, last: { reason: 'manual' } });

      // The recorded decisions: the ladder's step, and every call (turns and summaries) on this connection.
      const history = await h.fetchHistory();
      // The provider's error was recognised as an overflow where it was read (not left to the ladder's guess).
      const failed = (history.events ?? []).flatMap((e) => (e.activityTaskFailedEventAttributes ? [e.activityTaskFailedEventAttributes.failure?.applicationFailureInfo?.type] : []));
      expect(failed).toEqual(['MODEL_CONTEXT_OVERFLOW']);
      expect(ladderDecisions(history).map((d) => [d.ladderStep, d.apply])).toEqual([['emergency-compaction', true]]);
      const records = (await auditTranscript(history)).json.records;
      const calls = records.filter((r): r is ModelCallRecord => r.type === 'model_call');
      expect(calls.length).toBeGreaterThanOrEqual(7);
      expect(new Set(calls.map((r) => `${r.connection} ${r.model}`))).toEqual(new Set([`${c.name} ${c.model}`]));
      const summaries = records.filter((r): r is SummaryRecord => r.type === 'summary');
      expect(summaries.map((s) => [s.trigger, s.connection])).toEqual([
        ['overflow', c.name],
        ['manual', c.name],
      ]);
      const tools = records.filter((r): r is ToolCallRecord => r.type === 'tool_call');
      expect(tools.map((t) => [t.name, t.isError])).toEqual([
        ['forecast', false],
        ['deploy', false],
      ]);
      await h.close();
    });
  }, 90_000);

  it.concurrent('a worker SIGKILLed mid-stream: each call is retried on another worker, the reply completes once, the retry is a new attempt', async () => {
    const { t } = workers;
    const storeDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-conn-kill-'));
    const taskQueue = `conn-kill-${process.pid}-${Date.now()}`;
    const anthropic = killFakes.find((f) => f.name === 'anthropic')!;
    const env = { taskQueue, fakeUrl: anthropic.fake.url, storeDir, connections: connectionsOf(killFakes) };
    const first = await workers.start(env);
    const client = new Client({ connection: t.connection, namespace: t.namespace, plugins: [new FabricHarnessPlugin({ store: new FileTranscriptStore(storeDir) })] });

    // Every connection's first attempt streams part of a reply and hangs there; the retry answers in full.
    const started = await onEvery(killFakes, async (c) => {
      c.fake.enqueue(say(`PARTIAL text from ${c.name}, whose worker dies`, { stream: { chunkChars: 5, pauseAfterDeltas: 3, gate: 'never' } }), say(`The second worker's reply on ${c.name}.`));
      const h = await startAgent(client, connectionScenario, { connection: c.name, model: c.model }, { workflowId: `conn-kill-${c.name}-${process.pid}-${Date.now()}`, taskQueue });
      const p = await h.promptStream('Say something.');
      const it = p[Symbol.asyncIterator]();
      // The client has seen the doomed attempt's partial text before the worker dies.
      const before = await within('live text of attempt 1 before the kill', readUntil(it, (e) => e.event.type === 'text_delta' && e.event.attempt === 1));
      return { c, h, p, it, before };
    });
    await killHard(first);
    await workers.start(env);

    await onEvery(killFakes, async (c) => {
      const { h, p, it, before } = started.find((s) => s.c === c)!;
      const all = [...before, ...(await within('the retried turn to end', readUntil(it, (e) => e.event.type === 'turn_ended'), 60_000))];
      const reply = `The second worker's reply on ${c.name}.`;
      // What the reader saw of the dead attempt: the start of its text, attempt 1.
      expect(textOf(before)).not.toBe('');
      expect(`PARTIAL text from ${c.name}, whose worker dies`.startsWith(textOf(before))).toBe(true);
      expect(await p.reply).toBe(reply);
      expect(lastReply(await h.messages())).toBe(reply);
      expect(p.text()).toBe(reply);
      expect(all.filter((e) => e.event.type === 'message_end')).toHaveLength(1);
      expect(all.filter((e) => e.event.type === 'attempt_started').map((e) => e.event.attempt)).toEqual([1, 2]);
      // The retried call went to the same connection's fake; nothing else did.
      expect(turnsOf(c)).toHaveLength(2);
      await h.close();
    });
  }, 90_000);
});
