/**
 * compaction.strategy 'auto' on Temporal: the choice is the resolve-model activity's recorded result
 * (from the Models API capabilities); on a capable model the worker sends `context_management` edits,
 * the fake server applies them and reports them, and the run accounts them; a model without the
 * capability gets our client compaction; a recorded run replays with the strategy changed to 'client'.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { auditTranscript, startAgent } from '@fabric-harness/sdk/client';
import { bundleAgents, FabricHarnessPlugin } from '@fabric-harness/sdk/worker';
import { FakeAnthropicServer, callTools, say, type RecordedRequest } from '@fabric-harness/sdk/testing';
import type { ModelCallRecord, ModelResolvedRecord } from '../../src/audit/records';
import { strategist } from '../fixtures/strategy-agents';
import { startTestWorker, type TestWorker } from '../support/test-worker';

const MARKER = '[fabric-harness:summarize]';
const SUMMARY = '## Goal\nRead the manual.\n## Progress\nRead pages.\n## Key Decisions\nNone.\n## Failed Approaches\nNone.\n## Open Issues\nNone.\n## Next Steps\nAnswer.';
const isSummaryRequest = (r: RecordedRequest) => JSON.stringify(r.body?.system ?? '').includes(MARKER);
const pages = [1, 2, 3, 4, 5].map((page) => callTools({ name: 'fetch_page', input: { page } }));

describe('server-side context management strategy on Temporal', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;
  let n = 0;
  const wid = (p: string) => `${p}-${Date.now()}-${n++}`;

  beforeAll(async () => {
    fake = await FakeAnthropicServer.start({
      models: {
        'fake-cm': { maxInputTokens: 200_000, capabilities: { contextManagement: ['clear_tool_uses_20250919', 'clear_thinking_20251015', 'compact_20260112'] } },
        'fake-plain': { maxInputTokens: 200_000, capabilities: { contextManagement: [] } },
      },
    });
    fake.setRoute((req) => (isSummaryRequest(req) ? say(SUMMARY) : undefined));
    w = await startTestWorker({ name: 'server-strategy', baseURL: fake.url });
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  it("auto on a capable model: edits sent and applied, accounted, the decision in the query, in history and in the audit; replays under 'client'", async () => {
    const before = fake.requests.length;
    fake.enqueue(...pages, say('The manual says yes.'));
    const handle = await startAgent(w.client, strategist, { prompts: ['Read pages 1 to 5.'], model: 'fake-cm' }, { workflowId: wid('server'), taskQueue: w.taskQueue });
    const result = await handle.result();

    const turns = fake.requests.slice(before).filter((r) => r.path === '/v1/messages' && !isSummaryRequest(r));
    expect(turns).toHaveLength(6);
    expect(fake.requests.slice(before).some(isSummaryRequest)).toBe(false); // our threshold compaction stayed off
    for (const r of turns) {
      expect(r.headers['anthropic-beta']).toContain('context-management-2025-06-27');
      expect(r.body.context_management.edits.map((e: { type: string }) => e.type)).toEqual(['clear_tool_uses_20250919', 'compact_20260112']);
    }
    expect(result.usage.serverContext.clearedToolUses).toBeGreaterThan(0);
    expect(result.usage.serverContext.clearedInputTokens).toBeGreaterThan(0);

    // The decision: by query, and as the resolve-model activity's result in history.
    const state = await handle.compactionState();
    expect(state!.strategy).toEqual({ strategy: 'server', why: expect.stringContaining('fake-cm supports clear_tool_uses_20250919') });
    const history = await handle.fetchHistory();
    const audit = await auditTranscript(history);
    const resolved = audit.json.records.find((r): r is ModelResolvedRecord => r.type === 'model_resolved');
    expect(resolved!.strategy).toEqual(state!.strategy);
    const calls = audit.json.records.filter((r): r is ModelCallRecord => r.type === 'model_call');
    expect(calls.some((c) => c.contextManagement!.applied.some((e) => e.type === 'clear_tool_uses_20250919' && e.clearedToolUses! > 0))).toBe(true);
    expect(audit.json.run.totals.serverContext.clearedToolUses).toBe(result.usage.serverContext.clearedToolUses);
    // Prompt caching was on: the audit shows what each call read and wrote, and the run's hit rate.
    expect(audit.json.run.totals.cache.readTokens).toBe(result.usage.cacheReadInputTokens);
    expect(audit.json.run.totals.cache.writeTokens).toBe(result.usage.cacheCreationInputTokens);
    expect(audit.json.run.totals.cache.hitRate).toBeGreaterThan(0);
    expect(audit.markdown).toMatch(/Compaction strategy: server/);
    expect(audit.markdown).toMatch(/Prompt cache \d+ read \/ \d+ written \/ \d+ uncached · hit rate \d+\.\d%/);

    // Replay under strategy 'client': the recorded decision wins (under 'client' the same run would
    // summarise, which would be a command the history does not have).
    const changed = await bundleAgents([path.resolve(__dirname, '../fixtures/strategy-variants.ts')], { logger: quiet });
    await expect(
      Worker.runReplayHistory({ workflowBundle: changed, plugins: [new FabricHarnessPlugin()], replayName: 'server-strategy' }, history, handle.workflowId),
    ).resolves.toBeUndefined();
  });

  it('auto on a model without the capability: client compaction, nothing sent to the server', async () => {
    const before = fake.requests.length;
    fake.enqueue(...pages, say('The manual says no.'));
    const handle = await startAgent(w.client, strategist, { prompts: ['Read pages 1 to 5.'], model: 'fake-plain' }, { workflowId: wid('client'), taskQueue: w.taskQueue });
    const result = await handle.result();
    expect(result.state.strategy).toEqual({ strategy: 'client', why: expect.stringContaining('supports no context-management edit') });
    const sent = fake.requests.slice(before).filter((r) => r.path === '/v1/messages');
    expect(sent.every((r) => r.body.context_management === undefined)).toBe(true);
    expect(sent.some(isSummaryRequest)).toBe(true);
    expect(result.state.count).toBeGreaterThan(0);
    expect(result.usage.serverContext).toBeUndefined();
  });
});

describe('histories recorded before strategies', () => {
  it("replay with compaction.strategy 'auto' set: nothing was recorded, so they stay client", async () => {
    const changed = await bundleAgents([path.resolve(__dirname, '../fixtures/strategy-variants.ts')], { logger: quiet });
    for (const release of ['0.1.0', '0.2.0', '0.3.0']) {
      const file = path.resolve(__dirname, `../histories/${release}/threshold-compaction.json`);
      const history = historyFromJSON(JSON.parse(await fs.readFile(file, 'utf8')));
      await expect(
        Worker.runReplayHistory({ workflowBundle: changed, plugins: [new FabricHarnessPlugin()], replayName: `old-${release}` }, history, `recorded-${release}`),
      ).resolves.toBeUndefined();
    }
  });
});

const noop = () => undefined;
const quiet = { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: noop };
