/**
 * The compaction gate on the real Temporal server: each gate check is a local activity in history (the
 * audit transcript and `fh history` show it), the model receives the restated facts and the resume
 * block, and the recorded run replays under other gate settings with the same model inputs (the
 * recorded checks win), while a replay with the gate off fails and says where.
 */
import * as path from 'node:path';
import { auditTranscript, startAgent, type AgentHandle } from '@fabric-harness/sdk/client';
import type { CompactionState } from '../../src/core/context/compaction/runner';
import { FileTranscriptStore } from '@fabric-harness/sdk/worker';
import { FakeAnthropicServer, say, type RecordedRequest } from '@fabric-harness/sdk/testing';
import { replayHistory } from '../../src/audit/replay';
import type { CompactionGateRecord } from '../../src/audit/records';
import { GATE_NEXT_STEP, GATE_PROMPTS, GATE_RULE, factKeeper } from '../fixtures/gate-agents';
import { startTestWorker, type TestWorker } from '../support/test-worker';

const MARKER = '[fabric-harness:summarize]';
// A summariser that keeps none of the facts.
const SUMMARY = '## Goal\nHelp the user.\n## Progress\nAnswered questions.\n## Next Steps\nKeep answering.';
const isSummaryRequest = (r: RecordedRequest) => typeof r.body?.system === 'string' && r.body.system.startsWith(MARKER);
const variant = (name: string) => path.resolve(__dirname, '../fixtures', `${name}.ts`);
const firstText = (r: RecordedRequest): string => r.body.messages[0].content.map((b: any) => b.text ?? '').join('');

describe('the compaction gate on Temporal', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;
  let handle: AgentHandle<{ replies: string[]; state: CompactionState; entries: number }>;
  let result: Awaited<ReturnType<(typeof handle)['result']>>;
  let requests: RecordedRequest[];

  beforeAll(async () => {
    fake = await FakeAnthropicServer.start({ route: (req) => (isSummaryRequest(req) ? say(SUMMARY) : undefined) });
    w = await startTestWorker({ name: 'compaction-gate', baseURL: fake.url });
    fake.enqueue(...GATE_PROMPTS.slice(0, -2).map((_, i) => say(`ok ${i}`)), say(GATE_NEXT_STEP), say('done'));
    handle = await startAgent(w.client, factKeeper, { prompts: GATE_PROMPTS }, { workflowId: `fact-keeper-${Date.now()}`, taskQueue: w.taskQueue });
    result = await handle.result();
    requests = fake.messageRequests().filter((r) => !isSummaryRequest(r));
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  it('compacts, and the model receives the rule the summary dropped, restated, and the resume block last', () => {
    expect(result.state.count).toBeGreaterThanOrEqual(1);
    expect(result.state.last!.gate).toMatchObject({ mode: 'restate', reasked: false });
    expect(result.state.last!.gate!.restated).toBeGreaterThan(0);
    const last = firstText(requests.at(-1)!);
    expect(last).toContain('## Facts Restated');
    expect(last).toContain(GATE_RULE);
    expect(last.trimEnd()).toMatch(/## Resume Here\n- You were working on: [^\n]+\n- Your next step: [^\n]+\n- Continue from there; do not redo finished work\.$/);
  });

  it('each check is a local activity in history, and the audit transcript shows its counts and what was restated', async () => {
    const audit = await auditTranscript(await handle.fetchHistory());
    const gates = audit.json.records.filter((r): r is CompactionGateRecord => r.type === 'compaction_gate');
    expect(gates).toHaveLength(result.state.count);
    expect(gates.at(-1)).toMatchObject({ recorded: true, ...result.state.last!.gate });
    expect(gates.at(-1)!.missing!.map((f) => f.text)).toContain(GATE_RULE);
    expect(audit.markdown).toMatch(/## \d+\. Compaction gate: \d+ facts, \d+ restated/);
    expect(audit.markdown).toContain(`> rule: ${GATE_RULE}`);
  });

  it('replays under other gate settings (other kinds, mode reask) with the same commands and model inputs', async () => {
    const history = await handle.fetchHistory();
    // Every model activity's input compared: the calls, and the ones that only decided to compact.
    const modelActivities = (history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'fhModel').length;
    expect(modelActivities).toBe(requests.length + result.state.count);
    const r = await replayHistory(history, { agents: variant('gate-agents-narrowed'), strictInputs: true, workflowId: handle.workflowId, store: new FileTranscriptStore(w.storeDir) });
    expect(r.ok ? r.strictInputs : r.explanation).toEqual({ compared: modelActivities, unreadable: 0 });
  });

  it('a replay with the gate off fails, and the explanation names the recorded gate check', async () => {
    const r = await replayHistory(await handle.fetchHistory(), { agents: variant('gate-agents-off'), workflowId: handle.workflowId, store: new FileTranscriptStore(w.storeDir) });
    expect(r.ok).toBe(false);
    expect(r.ok ? '' : r.explanation).toContain('a compaction gate check (local activity fhCheckSummaryGate)');
  });
});
