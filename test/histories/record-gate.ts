/**
 * 0.6.7's gated-compaction history (called by record.ts; `npm run histories:record -- gate` records
 * only it): `fact-keeper` (test/fixtures/gate-agents.ts) prompts a rule and then notes that push it out
 * of the verbatim user-message budget, with threshold compaction and a summariser that keeps none of
 * the facts; each compaction's gate check is a local activity (patch fh-compaction-gate), and the rule
 * is restated. On its own fake model and worker; checks what it recorded for before it saves.
 */
import type { Client, WorkflowHandle } from '@temporalio/client';
import { startAgent, type AgentHandle } from '../../src/client';
import { FakeAnthropicServer, say, type RecordedRequest } from '../../src/testing';
import { GATE_NEXT_STEP, GATE_PROMPTS, GATE_RULE, factKeeper } from '../fixtures/gate-agents';

export const GATE_HISTORIES = ['gated-compaction'];

interface RecordWorker {
  client: Client;
  taskQueue: string;
  stop(): Promise<void>;
}
type Save = (name: string, handle: Pick<WorkflowHandle, 'result' | 'fetchHistory'> | AgentHandle) => Promise<void>;

const MARKER = '[fabric-harness:summarize]';
const SUMMARY = '## Goal\nHelp the user.\n## Progress\nAnswered questions.\n## Next Steps\nKeep answering.';
const isSummary = (r: RecordedRequest) => String(r.body?.system ?? '').startsWith(MARKER);

export async function recordGate(startWorker: (name: string, baseURL: string) => Promise<RecordWorker>, save: Save): Promise<void> {
  const fake = await FakeAnthropicServer.start({ route: (req) => (isSummary(req) ? say(SUMMARY) : undefined) });
  const w = await startWorker('record-gate', fake.url);
  try {
    fake.enqueue(...GATE_PROMPTS.slice(0, -2).map((_, i) => say(`ok ${i}`)), say(GATE_NEXT_STEP), say('done'));
    const handle = await startAgent(w.client, factKeeper, { prompts: GATE_PROMPTS }, { workflowId: 'recorded-gated-compaction', taskQueue: w.taskQueue });
    const result = await handle.result();
    const last = fake.messageRequests().filter((r) => !isSummary(r)).at(-1);
    const text = JSON.stringify(last?.body?.messages?.[0] ?? '');
    const history = await handle.fetchHistory();
    const markerData = (e: NonNullable<typeof history.events>[number]) => Buffer.from(e.markerRecordedEventAttributes?.details?.data?.payloads?.[0]?.data ?? new Uint8Array()).toString();
    const checks = (history.events ?? []).filter((e) => markerData(e).includes('"fhCheckSummaryGate"'));
    if (result.state.count < 1 || !result.state.last?.gate || !text.includes(GATE_RULE) || checks.length < 1) {
      throw new Error(`the gated-compaction run did not record what it is for (compactions ${result.state.count}, gate checks ${checks.length}, rule restated ${text.includes(GATE_RULE)})`);
    }
    await save('gated-compaction', handle);
  } finally {
    await w.stop();
    await fake.stop();
  }
}
