/**
 * What compaction being on costs in history per model call: the decision rides with the model call,
 * so each fhModel input carries the decision's facts (only the settings the decision reads) and each
 * result a recorded decision, `quietDecision: true` when it changes nothing. The conversation's prelude
 * (system prompt, tool specs) is stored once by fhStorePrelude, so no model call input carries it.
 *
 * Measured (12 calls, ~2 KB tool result each): sizes, not times, so exact on any machine.
 */
import { temporal } from '@temporalio/proto';
import { auditTranscript } from '@fabric-harness/sdk/audit';
import { startAgent } from '@fabric-harness/sdk/client';
import type { CompactionDecisionRecord, ModelCallRecord } from '../../src/audit/records';
import { FakeAnthropicServer } from '@fabric-harness/sdk/testing';
import { growerRoute } from '../support/grower-route';
import { grower, growerCompacting } from '../fixtures/agents';
import { startTestWorker, type TestWorker } from '../support/test-worker';

const CALLS = 12;

const payloadBytes = (ps: temporal.api.common.v1.IPayload[] | null | undefined) =>
  (ps ?? []).reduce((n, p) => n + temporal.api.common.v1.Payload.encode(p).finish().length, 0);
const json = (ps: temporal.api.common.v1.IPayload[] | null | undefined) => JSON.parse(Buffer.from(ps![0]!.data!).toString());

describe('history cost of compaction on, per model call', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;

  beforeAll(async () => {
    fake = await FakeAnthropicServer.start({ route: growerRoute, contextWindow: 10_000_000 });
    w = await startTestWorker({ name: 'compaction-history-cost', baseURL: fake.url });
  });

  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  async function run(agentDef: typeof grower | typeof growerCompacting, tag: string) {
    const handle = await startAgent(w.client, agentDef as typeof grower, { calls: CALLS }, { workflowId: `cost-${tag}-${Date.now()}`, taskQueue: w.taskQueue });
    const result = await handle.result();
    expect(result.usage.modelCalls).toBe(CALLS);
    const history = await handle.fetchHistory();
    return { history, bytes: temporal.api.history.v1.History.encode(history).finish().length };
  }

  it('every activity input is under 1 KB, the decision is recorded briefly, and history per call is within 10% of compaction off', async () => {
    const [off, on] = await Promise.all([run(grower, 'off'), run(growerCompacting, 'on')]);
    const events = on.history.events!;
    const scheduled = events.flatMap((e) => (e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes] : []));
    const inputs = scheduled.map((a) => ({ name: a.activityType!.name!, bytes: payloadBytes(a.input?.payloads), input: json(a.input?.payloads) }));
    const largest = inputs.reduce((a, b) => (b.bytes > a.bytes ? b : a));
    process.stderr.write(
      `[compaction-history-cost] ${CALLS} calls: history ${off.bytes} B off, ${on.bytes} B on (${(on.bytes / off.bytes).toFixed(3)}x); ` +
        `largest activity input ${largest.bytes} B (${largest.name})\n`,
    );
    expect(largest.bytes).toBeLessThan(1_024);

    // The prelude is stored once, first; no model call carries its value.
    expect(inputs.filter((i) => i.name === 'fhStorePrelude')).toHaveLength(1);
    const model = inputs.filter((i) => i.name === 'fhModel');
    expect(model).toHaveLength(CALLS);
    for (const m of model) {
      expect(m.input.prelude.value).toBeUndefined();
      // Only what the decision reads: reserveTokens and keepRecentEntries are in `keep` already.
      expect(Object.keys(m.input.decide.settings).sort()).toEqual(['compactAtTokens', 'contextWindowTokens', 'enabled']);
      expect(m.input.briefDecision).toBe(true);
    }
    // Nothing to compact, mask or warn about: every decision is recorded as a flag.
    const results = events.flatMap((e, i) =>
      e.activityTaskCompletedEventAttributes && events[Number(e.activityTaskCompletedEventAttributes.scheduledEventId) - 1]?.activityTaskScheduledEventAttributes?.activityType?.name === 'fhModel'
        ? [json(e.activityTaskCompletedEventAttributes.result?.payloads)]
        : [],
    );
    expect(results).toHaveLength(CALLS);
    for (const r of results) {
      expect(r.quietDecision).toBe(true);
      expect(r.decision).toBeUndefined();
    }
    expect(on.bytes / off.bytes).toBeLessThanOrEqual(1.1);

    // The audit still shows every decision (rebuilt from the facts) and the first call's system prompt and tools.
    const records = (await auditTranscript(on.history)).json.records;
    const decisions = records.filter((r): r is CompactionDecisionRecord => r.type === 'compaction_decision');
    expect(decisions).toHaveLength(CALLS);
    expect(decisions.every((d) => d.compact === false && /within the threshold/.test(d.why ?? ''))).toBe(true);
    const firstCall = records.find((r): r is ModelCallRecord => r.type === 'model_call')!;
    expect(firstCall.system).toMatch(/grow a long conversation/);
    expect(firstCall.tools).toEqual(['grow', 'read_artifact']);
  }, 180_000);
});
