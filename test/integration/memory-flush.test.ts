/**
 * The memory flush on Temporal (compaction.memory): a threshold compaction sends the dropped slice (by
 * reference) to fhFlushMemory, which asks the model, stores the memory file in the worker's store and
 * returns it; the summary the model sees next carries it; a new workflow of the same agent has it in its
 * system prompt; a file over budget is compacted; the recorded run replays under other memory settings.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { defaultPayloadConverter } from '@temporalio/common';
import { startAgent } from '@fabric-harness/sdk/client';
import { createWorker, FabricHarnessPlugin, FileTranscriptStore } from '@fabric-harness/sdk/worker';
import { FakeAnthropicServer, say, type RecordedRequest } from '@fabric-harness/sdk/testing';
import { replayHistory } from '../../src/audit/replay';
import { MEMORY_COMPACT_MARKER, MEMORY_EXTRACT_MARKER } from '../../src/core/context/memory-extract';
import { memoryPointerKey } from '../../src/activities/stores/memory-files';
import { estimateTextTokens } from '../../src/core/tokens';
import { rememberer } from '../fixtures/memory-agents';
import { testConnection } from '../support/temporal';

const SUMMARY_MARKER = '[fabric-harness:summarize]';
const MEMORY = '- Decided: ship on Fridays only\n- Prefers: short answers';
const LONG_MEMORY = Array.from({ length: 60 }, (_, i) => `- remembered fact ${i} with a few more words`).join('\n');
const FIXTURES = path.resolve(__dirname, '../fixtures');

const body = (r: RecordedRequest) => JSON.stringify(r.body?.messages ?? []);
const isSummary = (r: RecordedRequest) => String(r.body?.system ?? '').startsWith(SUMMARY_MARKER);
const isExtraction = (r: RecordedRequest) => body(r).includes(MEMORY_EXTRACT_MARKER);
const isMemoryCompaction = (r: RecordedRequest) => body(r).includes(MEMORY_COMPACT_MARKER);
const isTurn = (r: RecordedRequest) => r.path === '/v1/messages' && !isSummary(r) && !isExtraction(r) && !isMemoryCompaction(r);

/** ~150 tokens of prompt: three of them pass the fixture's 400-token threshold. */
const prompt = (tag: string) => `${tag}: ${Array.from({ length: 100 }, (_, i) => `word${i}`).join(' ')}`;

function encodedBytes(p: temporal.api.common.v1.IPayload): number {
  return temporal.api.common.v1.Payload.encode(p).finish().length;
}

describe('memory flush on Temporal', () => {
  let fake: FakeAnthropicServer;
  let storeDir: string;
  let stop: () => Promise<void>;
  let client: Client;
  let taskQueue: string;
  let extraction = MEMORY;
  let n = 0;
  const wid = (p: string) => `${p}-${Date.now()}-${n++}`;

  beforeAll(async () => {
    fake = await FakeAnthropicServer.start({
      route: (req) => {
        if (isSummary(req)) return say('## Goal\nShip it.');
        if (isExtraction(req)) return say(extraction);
        if (isMemoryCompaction(req)) return say('- Compacted: remembered facts 0-59');
        return isTurn(req) ? say('ok') : undefined;
      },
    });
    const t = await testConnection();
    storeDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-store-'));
    const store = new FileTranscriptStore(storeDir);
    taskQueue = `memory-flush-${process.pid}-${Date.now()}`;
    const worker = await createWorker({
      agents: [path.join(FIXTURES, 'memory-agents.ts')],
      connection: t.nativeConnection,
      namespace: t.namespace,
      taskQueue,
      model: { apiKey: 'test-key', baseURL: fake.url },
      store,
    });
    client = new Client({ connection: t.connection, namespace: t.namespace, plugins: [new FabricHarnessPlugin({ store })] });
    const running = worker.run();
    stop = async () => {
      worker.shutdown();
      await running;
      await t.close();
    };
  });
  afterAll(async () => {
    await stop?.();
    await fake?.stop();
    if (storeDir) await fs.rm(storeDir, { recursive: true, force: true });
  });

  it('flushes on compaction, re-injects into the summary, a new workflow sees it, and replays under other settings', async () => {
    extraction = MEMORY;
    const before = fake.requests.length;
    const handle = await startAgent(client, rememberer, { prompts: ['p1', 'p2', 'p3', 'p4'].map(prompt) }, { workflowId: wid('rememberer'), taskQueue });
    const result = await handle.result();
    expect(result.compactions).toBeGreaterThanOrEqual(1);
    const seen = fake.requests.slice(before);

    // The extraction request got the dropped slice (the first prompt), and not the kept tail.
    const asked = seen.filter(isExtraction);
    expect(asked.length).toBe(result.compactions);
    expect(body(asked[0]!)).toContain('p1: word0');
    expect(body(asked[0]!)).not.toContain('p4: word0');

    // The memory file is in the worker's store, behind its pointer.
    const pointer = JSON.parse(await fs.readFile(path.join(storeDir, memoryPointerKey('rememberer')), 'utf8'));
    expect(pointer).toMatchObject({ hash: expect.stringMatching(/^[0-9a-f]{64}$/), tokens: estimateTextTokens(MEMORY) });

    // The model call after the first compaction sees the memory in the summary.
    const firstFlush = seen.indexOf(asked[0]!);
    const next = seen.slice(firstFlush).find(isTurn)!;
    expect(body(next)).toContain('## Memory\\n- Decided: ship on Fridays only');

    // The activity got the dropped slice by reference: a stored transcript and (almost) no entries.
    const history = await handle.fetchHistory();
    const events = history.events ?? [];
    const scheduled = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'fhFlushMemory');
    expect(scheduled).toHaveLength(result.compactions);
    const input = defaultPayloadConverter.fromPayload<{ base: unknown; delta: unknown[]; dropped: number }>(scheduled[0]!.activityTaskScheduledEventAttributes!.input!.payloads![0]!);
    expect(input.base).not.toBeNull();
    expect(input.delta.length).toBeLessThanOrEqual(1);

    // History bytes one flush adds: its scheduled input and its completed result.
    const ids = new Set(scheduled.map((e) => String(e.eventId)));
    const completed = events.filter((e) => ids.has(String(e.activityTaskCompletedEventAttributes?.scheduledEventId ?? '')));
    const bytes =
      scheduled.reduce((s, e) => s + e.activityTaskScheduledEventAttributes!.input!.payloads!.reduce((a, p) => a + encodedBytes(p), 0), 0) +
      completed.reduce((s, e) => s + (e.activityTaskCompletedEventAttributes!.result?.payloads ?? []).reduce((a, p) => a + encodedBytes(p), 0), 0);
    const perFlush = bytes / scheduled.length;
    console.log(`memory flush: ${perFlush} history payload bytes per flush (memory text ${MEMORY.length} chars)`);
    // The flush carries references and the memory text once: bounded, not the dropped slice (4 prompts ≈ 2.5 KB).
    expect(perFlush).toBeLessThan(MEMORY.length + 1_000);

    // A NEW workflow of the same agent: the memory is in its system prompt, the same on every call.
    const mark = fake.requests.length;
    await (await startAgent(client, rememberer, { prompts: ['hello', 'again'] }, { workflowId: wid('rememberer-next'), taskQueue })).result();
    const turns = fake.requests.slice(mark).filter(isTurn);
    expect(turns).toHaveLength(2);
    for (const t of turns) expect(String(t.body.system)).toBe(`You are a careful engineer.\n\n## Memory from earlier sessions\n${MEMORY}`);

    // The recorded run replays with the memory settings changed (budget 2000 → 300).
    const replay = await replayHistory(history, { agents: path.join(FIXTURES, 'memory-agents-changed.ts'), workflowId: handle.workflowId });
    expect(replay).toMatchObject({ ok: true });
  });

  it('a memory file over its budget is compacted (second call) and stored within budget; replays with another budget', async () => {
    extraction = LONG_MEMORY;
    const before = fake.requests.length;
    const handle = await startAgent(client, rememberer, { prompts: ['b1', 'b2', 'b3', 'b4'].map(prompt), budgeted: true }, { workflowId: wid('budgeted'), taskQueue });
    const result = await handle.result();
    expect(result.compactions).toBeGreaterThanOrEqual(1);
    const seen = fake.requests.slice(before);
    expect(seen.filter(isMemoryCompaction).length).toBe(result.compactions);
    expect(body(seen.find(isMemoryCompaction)!)).toContain('over its budget of 100 tokens');
    const pointer = JSON.parse(await fs.readFile(path.join(storeDir, memoryPointerKey('budgeted')), 'utf8'));
    expect(pointer.tokens).toBeLessThanOrEqual(100);
    const next = seen.slice(seen.indexOf(seen.find(isMemoryCompaction)!)).find(isTurn)!;
    expect(body(next)).toContain('## Memory\\n- Compacted: remembered facts 0-59');
    expect(body(next)).not.toContain('remembered fact 59 ');

    const replay = await replayHistory(await handle.fetchHistory(), { agents: path.join(FIXTURES, 'memory-agents-changed.ts'), workflowId: handle.workflowId });
    expect(replay).toMatchObject({ ok: true });
  });
});
