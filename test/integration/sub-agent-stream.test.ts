/**
 * A sub-agent's events live on its parent's stream, on the real dev server: a client watching the
 * parent session sees the child's (and the grandchild's) text deltas while the child still runs,
 * nested (`subAgent.path`), in offset order, once, also across a worker killed mid-stream, and the
 * parent's history gets no event per delta. The fake model pauses at gates the test releases.
 */
import type { ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@temporalio/client';
import { CallAssembly, startSession, type StreamEnvelope } from '@fabric-harness/sdk/client';
import { FabricHarnessPlugin, FileTranscriptStore } from '@fabric-harness/sdk/worker';
import { callTools, FakeAnthropicServer, reply, say, type FakeStep } from '@fabric-harness/sdk/testing';
import { nestingSession } from '../fixtures/ecosystem-agents';
import { startTestWorker, type TestWorker } from '../support/test-worker';
import { testConnection, type TestConnection } from '../support/temporal';
import { killHard, startWorkerProcess } from '../support/worker-process-control';

async function readUntil(it: AsyncIterator<StreamEnvelope>, stop: (e: StreamEnvelope) => boolean): Promise<StreamEnvelope[]> {
  const out: StreamEnvelope[] = [];
  for (;;) {
    const next = await it.next();
    if (next.done) return out;
    out.push(next.value);
    if (stop(next.value)) return out;
  }
}

const pathOf = (e: StreamEnvelope) => (e.subAgent?.path ?? []).join('/');

/** Offsets only grow, and each is seen once. */
function expectOrderedOnce(all: StreamEnvelope[]): void {
  const offsets = all.map((e) => e.offset);
  expect(new Set(offsets).size).toBe(offsets.length);
  expect(offsets).toEqual([...offsets].sort((a, b) => a - b));
}

/** The text a sub-agent's model calls streamed, assembled per call (a newer attempt voids the older). */
function nestedText(all: StreamEnvelope[], where: string): string[] {
  const calls = new Map<string, CallAssembly>();
  for (const env of all) {
    const e = env.event;
    if (pathOf(env) !== where || !e.callId || !['attempt_started', 'block_started', 'text_delta', 'block_stopped'].includes(e.type)) continue;
    if (!calls.has(e.callId)) calls.set(e.callId, new CallAssembly());
    calls.get(e.callId)!.apply(e);
  }
  return [...calls.values()].map((c) => c.text());
}

describe("sub-agents on the parent's stream", () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;

  beforeAll(async () => {
    fake = await FakeAnthropicServer.start();
    w = await startTestWorker({ name: 'sub-agent-stream', baseURL: fake.url });
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  it("shows the child's and the grandchild's deltas live, nested, in order, once; the parent's history gets none", async () => {
    fake.enqueue(
      callTools({ name: 'eco-middle', input: { task: 'find out' } }), // the session hands over
      // The child says something, and hands over in turn.
      { ...reply({ content: ['The middle agent thinks aloud first.', { name: 'eco-helper', input: { task: 'the real work' } }], stopReason: 'tool_use' }), stream: { chunkChars: 6, pauseAfterDeltas: 2, gate: 'middle' } } as FakeStep,
      say('GRANDCHILD streaming its answer', { stream: { chunkChars: 5, pauseAfterDeltas: 2, gate: 'helper' } }),
      say('The helper found it.'), // the child's last call
      say('Done: found.'), // the session
    );
    const session = await startSession(w.client, nestingSession, { taskQueue: w.taskQueue, title: 'Nesting' });
    const turn = await session.promptStream('delegate it');
    const it = turn[Symbol.asyncIterator]();

    // The child's deltas arrive while the child waits at its gate: it has not ended.
    const upToChild = await readUntil(it, (e) => e.event.type === 'text_delta' && pathOf(e) === 'eco-middle');
    const childDelta = upToChild.at(-1)!;
    expect(childDelta.subAgent!.workflowId).toMatch(/^eco-middle-/);
    expect(childDelta.event.messageId).toBe(turn.messageId);
    expect((await w.client.workflow.getHandle(childDelta.subAgent!.workflowId).describe()).status.name).toBe('RUNNING');
    fake.release('middle');

    // The grandchild's too, nested two deep, while it (and its parent) still run.
    const upToGrandchild = await readUntil(it, (e) => e.event.type === 'text_delta' && pathOf(e) === 'eco-middle/eco-helper');
    const grand = upToGrandchild.at(-1)!;
    expect(grand.subAgent!.workflowId).toMatch(/^eco-helper-/);
    expect((await w.client.workflow.getHandle(grand.subAgent!.workflowId).describe()).status.name).toBe('RUNNING');
    expect((await w.client.workflow.getHandle(childDelta.subAgent!.workflowId).describe()).status.name).toBe('RUNNING');
    fake.release('helper');

    const rest = await readUntil(it, (e) => e.event.type === 'turn_ended' && !e.subAgent);
    const all = [...upToChild, ...upToGrandchild, ...rest];
    expect(await turn.reply).toBe('Done: found.');
    // The session's own reply is its own: the sub-agents' text is not in it.
    expect(turn.text()).toBe('Done: found.');
    expectOrderedOnce(all);
    expect(nestedText(all, 'eco-middle')).toEqual(['The middle agent thinks aloud first.', 'The helper found it.']);
    expect(nestedText(all, 'eco-middle/eco-helper')).toEqual(['GRANDCHILD streaming its answer']);
    // Nested inside the session's tool call: between its tool_started and tool_ended.
    const own = all.filter((e) => !e.subAgent);
    const started = own.find((e) => e.event.type === 'tool_started')!.offset;
    const ended = own.find((e) => e.event.type === 'tool_ended')!.offset;
    const nested = all.filter((e) => e.subAgent);
    expect(nested.every((e) => e.offset > started && e.offset < ended)).toBe(true);
    expect(nested.filter((e) => e.event.type === 'message_end').map(pathOf)).toEqual(['eco-middle', 'eco-middle/eco-helper', 'eco-middle']);

    // Reading the whole stream again (the children have ended) gives the same nested events, at the same offsets.
    const again: StreamEnvelope[] = [];
    for await (const env of session.stream({ from: 0 })) {
      again.push(env);
      if (env.event.type === 'turn_ended' && !env.subAgent) break;
    }
    expectOrderedOnce(again);
    const key = (e: StreamEnvelope) => `${e.offset}:${pathOf(e)}:${e.event.type}`;
    expect(again.filter((e) => e.subAgent && e.event.type === 'message_end').map(key)).toEqual(nested.filter((e) => e.event.type === 'message_end').map(key));

    // No history event per delta in the session: no signals, and only its own two model calls.
    const history = (await session.workflow.fetchHistory()).events!;
    expect(history.filter((e) => e.workflowExecutionSignaledEventAttributes)).toHaveLength(0);
    expect(history.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'fhModel')).toHaveLength(2);
    console.log(`sub-agent-stream: session history ${history.length} events, ${JSON.stringify(history).length} B; ${nested.length} nested stream events`);
    await session.end();
  });
});

describe("sub-agents on the parent's stream, a worker killed mid-stream", () => {
  let t: TestConnection;
  let fake: FakeAnthropicServer;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    t = await testConnection();
    fake = await FakeAnthropicServer.start();
  });
  afterAll(async () => {
    await Promise.all(children.map(killHard));
    await fake?.stop();
    await t?.close();
  });

  it("the child's retried call shows once: its failed attempt voided, offsets growing, no event twice", async () => {
    const storeDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-sub-stream-kill-'));
    const taskQueue = `sub-stream-kill-${process.pid}-${Date.now()}`;
    fake.enqueue(
      callTools({ name: 'eco-helper', input: { task: 'work' } }),
      say('PARTIAL text of a child whose worker dies', { stream: { pauseAfterDeltas: 3, gate: 'never' } }),
      say('The child answered on the second worker.'),
      say('Parent done.'),
    );
    const first = await startWorkerProcess({ taskQueue, fakeUrl: fake.url, storeDir });
    children.push(first);
    const client = new Client({ connection: t.connection, namespace: t.namespace, plugins: [new FabricHarnessPlugin({ store: new FileTranscriptStore(storeDir) })] });
    const session = await startSession(client, nestingSession, { taskQueue, title: 'Kill' });
    const turn = await session.promptStream('delegate it');
    const it = turn[Symbol.asyncIterator]();
    const before = await readUntil(it, (e) => e.event.type === 'text_delta' && pathOf(e) === 'eco-helper');
    await killHard(first);
    children.push(await startWorkerProcess({ taskQueue, fakeUrl: fake.url, storeDir }));
    const after = await readUntil(it, (e) => e.event.type === 'turn_ended' && !e.subAgent);
    const all = [...before, ...after];
    expect(await turn.reply).toBe('Parent done.');
    expectOrderedOnce(all);
    const nested = all.filter((e) => pathOf(e) === 'eco-helper');
    expect(nested.some((e) => e.event.type === 'text_delta' && (e.event as { text: string }).text.startsWith('PARTIAL'))).toBe(true);
    expect(nested.filter((e) => e.event.type === 'attempt_started').map((e) => e.event.attempt)).toEqual([1, 2]);
    expect(nested.filter((e) => e.event.type === 'message_end')).toHaveLength(1);
    expect(nestedText(all, 'eco-helper')).toEqual(['The child answered on the second worker.']);
    await session.end();
  }, 120_000);
});
