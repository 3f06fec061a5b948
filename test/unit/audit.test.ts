/**
 * The audit transcript, rendered from recorded histories (test/histories/, recorded from real runs on a
 * dev server with the scripted fake model): nothing is run, only history is read.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { Payload } from '@temporalio/common';
import { ExternalStorageRunner } from '@temporalio/common/lib/internal-non-workflow';
import { auditTranscript, isOffloaded, type AuditRecord } from '../../src/audit/index';
import { parseHistoryJSON, type History } from '../../src/audit/history-file';
import { stateFromHistory } from '../../src/audit/history-state';
import { callCostUsd, modelInfo } from '../../src/core/model-table';
import { externalStorageFor } from '../../src/activities/stores/external-storage';
import { MemoryTranscriptStore } from '../../src/activities/stores/transcript-store';

// Histories recorded by release 0.1.0 (the figures below are theirs).
const HISTORIES = path.resolve(__dirname, '../histories/0.1.0');

async function recorded(name: string): Promise<History> {
  return parseHistoryJSON(await fs.readFile(path.join(HISTORIES, `${name}.json`), 'utf8'), name);
}

const ofType = <T extends AuditRecord['type']>(records: AuditRecord[], type: T) =>
  records.filter((r): r is Extract<AuditRecord, { type: T }> => r.type === type);

describe('auditTranscript on a run with tool calls (calculator-tools)', () => {
  let audit: Awaited<ReturnType<typeof auditTranscript>>;

  beforeAll(async () => {
    audit = await auditTranscript(await recorded('calculator-tools'), { truncateAt: 40 });
  });

  it('reads the run: agent, status, times, totals', () => {
    const { run } = audit.json;
    expect(run).toMatchObject({ workflowId: 'recorded-calculator', agent: 'calculator', workflowType: 'calculator', status: 'completed' });
    expect(Date.parse(run.startedAt!)).toBeLessThanOrEqual(Date.parse(run.closedAt!));
    expect(run.totals).toMatchObject({ modelCalls: 3, toolCalls: 2, toolErrors: 0, compactionDecisions: 0, summaries: 0, userActions: 1 });
    const calls = ofType(audit.json.records, 'model_call');
    expect(run.totals.inputTokens).toBe(calls.reduce((s, c) => s + c.usage!.inputTokens, 0));
  });

  it('lists the input, the prompt, every model call and every tool call in order, with timestamps', () => {
    const { records } = audit.json;
    expect(records.map((r) => r.type)).toEqual(['input', 'model_resolved', 'prompt', 'model_call', 'tool_call', 'model_call', 'tool_call', 'model_call', 'end']);
    expect(records.map((r) => r.n)).toEqual(records.map((_, i) => i + 1));
    expect(records.every((r) => typeof r.at === 'string' && !Number.isNaN(Date.parse(r.at)))).toBe(true);
    expect(records[0]).toMatchObject({ type: 'input', input: { task: 'Add 2 and 3 and save it' } });
    expect(records[2]).toMatchObject({ type: 'prompt', text: 'Add 2 and 3 and save it' });

    const calls = ofType(records, 'model_call');
    expect(calls.map((c) => c.stopReason)).toEqual(['tool_use', 'tool_use', 'end_turn']);
    expect(calls[0]).toMatchObject({ status: 'completed', tools: ['add', 'write_file'], system: expect.stringContaining('calculator') });
    expect(calls[0]!.response!.toolCalls).toEqual([{ id: expect.any(String), name: 'add', input: { a: 2, b: 3 } }]);
    expect(calls[2]!.response).toEqual({ text: 'The sum is 5.', toolCalls: [] });
    // Each call after the first sends only what is new since the stored transcript.
    expect(calls.map((c) => c.context)).toEqual([
      { storedEntries: 0, newEntries: 1, summaries: 0 },
      { storedEntries: 2, newEntries: 1, summaries: 0 },
      { storedEntries: 4, newEntries: 1, summaries: 0 },
    ]);

    const tools = ofType(records, 'tool_call');
    expect(tools[0]).toMatchObject({ name: 'add', arguments: { a: 2, b: 3 }, result: '5', isError: false, status: 'completed' });
    expect(tools[0]!.callId).toBe(calls[0]!.response!.toolCalls[0]!.id);
    expect(tools[1]).toMatchObject({ name: 'write_file', arguments: { path: 'sum.txt', content: '5' }, status: 'completed' });
    expect(records[records.length - 1]).toMatchObject({ type: 'end', status: 'completed', result: { reply: 'The sum is 5.' } });
  });

  it('renders Markdown with a section per record and truncated long values', () => {
    const md = audit.markdown;
    expect(md).toMatch(/^# Audit: calculator — recorded-calculator$/m);
    expect(md).toMatch(/^- 3 model calls \(\d+ input \/ \d+ output tokens\) · 2 tool calls · 0 compaction decisions/m);
    expect(md.match(/^## \d+\. Model call: /gm)).toHaveLength(3);
    // Which connection and model answered each call: a history from before connections named none, so Anthropic.
    expect(md.match(/^- Connection: anthropic · model claude-\S+$/gm)).toHaveLength(3);
    expect(ofType(audit.json.records, 'model_call').map((c) => c.connection)).toEqual(['anthropic', 'anthropic', 'anthropic']);
    expect(ofType(audit.json.records, 'model_resolved')[0]!.connection).toBe('anthropic');
    expect(md).toMatch(/^## 5\. Tool call: add — \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}Z \(events \d+–\d+\)$/m);
    expect(md).toContain('- Asks for tool `add`');
    expect(md).toMatch(/^## 9\. Run completed/m);
    expect(md).toContain('more characters)'); // the system prompt / result is cut at 40 characters for display
  });
});

describe('auditTranscript on compaction runs', () => {
  it('threshold: a decision before every model call; each compaction is followed by its summaries and a call that sees the summary', async () => {
    const { json } = await auditTranscript(await recorded('threshold-compaction'));
    const { records, run } = json;
    const decisions = ofType(records, 'compaction_decision');
    const calls = ofType(records, 'model_call');
    expect(decisions).toHaveLength(calls.length);
    expect(decisions.every((d) => d.recorded && typeof d.why === 'string' && d.threshold! > 0)).toBe(true);
    const compacted = decisions.filter((d) => d.compact);
    expect(compacted.length).toBeGreaterThanOrEqual(1);
    expect(run.totals.compactions).toBe(compacted.length);
    for (const d of compacted) {
      expect(d).toMatchObject({ reason: 'threshold', why: expect.stringMatching(/over the threshold/) });
      const after = records.slice(records.indexOf(d) + 1);
      const nextCall = after.findIndex((r) => r.type === 'model_call');
      const between = after.slice(0, nextCall);
      expect(between.length).toBeGreaterThanOrEqual(1);
      expect(between.every((r) => r.type === 'summary' && r.trigger === 'threshold' && r.status === 'completed' && typeof r.text === 'string')).toBe(true);
      expect((after[nextCall] as Extract<AuditRecord, { type: 'model_call' }>).context).toMatchObject({ storedEntries: 0, summaries: 1 });
    }
    expect(run.totals.summaries).toBe(ofType(records, 'summary').length);
    // Summary requests are counted apart from the conversation's model calls, with their tokens.
    const summaries = ofType(records, 'summary');
    expect(run.totals.summarizer).toEqual({
      calls: summaries.length,
      inputTokens: summaries.reduce((t, r) => t + r.usage!.inputTokens, 0),
      outputTokens: summaries.reduce((t, r) => t + r.usage!.outputTokens, 0),
    });
    expect(run.totals.summarizer.inputTokens).toBeGreaterThan(0);
    // Prompts are listed once each, before the decision made for them.
    const prompts = ofType(records, 'prompt');
    expect(prompts).toHaveLength(8);
    for (const p of prompts) expect(records[records.indexOf(p) + 1]!.type).toBe('compaction_decision');
  });

  it('overflow: the rejected model call, the overflow decision, its summaries, the retry', async () => {
    const { json, markdown } = await auditTranscript(await recorded('overflow-compaction'));
    const { records } = json;
    const failed = ofType(records, 'model_call').filter((c) => c.status === 'failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]!.error).toMatch(/prompt is too long/);
    const i = records.indexOf(failed[0]!);
    expect(records[i + 1]).toMatchObject({ type: 'compaction_decision', compact: true, reason: 'overflow' });
    const summaries = ofType(records, 'summary');
    expect(summaries.length).toBeGreaterThanOrEqual(1);
    expect(summaries.every((s) => s.trigger === 'overflow')).toBe(true);
    // The retried prompt is not listed twice.
    const prompts = ofType(records, 'prompt').map((p) => p.text);
    expect(prompts).toEqual(Array.from({ length: 10 }, (_, k) => `q${k}`));
    expect(markdown).toMatch(/Compaction decision: compact \(overflow\)/);
    expect(markdown).toMatch(/- Status: failed — Anthropic API 400: prompt is too long/);
  });

  it('manual: the fh.compact update, its summary, a prompt sent by update, the close signal', async () => {
    const { json, markdown } = await auditTranscript(await recorded('manual-compaction'));
    const { records, run } = json;
    const updates = ofType(records, 'update');
    const compact = updates.find((u) => u.name === 'fh.compact')!;
    expect(compact).toMatchObject({ manualCompaction: true, status: 'completed', args: [{ keepRecentEntries: 2 }], result: { compactedEntries: expect.any(Number) } });
    expect(compact.identity).toEqual(expect.any(String));
    const summary = ofType(records, 'summary')[0]!;
    expect(summary.trigger).toBe('manual');
    expect(records.indexOf(summary)).toBeGreaterThan(records.indexOf(compact));
    const prompt = updates.find((u) => u.name === 'fh.prompt')!;
    expect(prompt).toMatchObject({ prompt: 'and now?', status: 'completed', result: 'after compaction' });
    // Listed once, as the update (not again as the run's own prompt).
    expect(ofType(records, 'prompt').map((p) => p.text)).toEqual(['one', 'two']);
    expect(ofType(records, 'signal')).toEqual([expect.objectContaining({ name: 'fh.close', args: [] })]);
    expect(run.totals).toMatchObject({ userActions: 4, compactions: 1 });
    expect(markdown).toContain('Manual compaction requested (update fh.compact)');
    expect(markdown).toMatch(/Prompt from a user \(update fh\.prompt\)[\s\S]*> and now\?[\s\S]*- Reply:\n\n> after compaction/);
    expect(markdown).toContain('Close requested (signal fh.close');
  });
});

describe('offloaded payloads (Temporal external storage claims)', () => {
  /** The calculator history with the `add` tool's result offloaded to a store, as a large one would be. */
  async function withOffloadedToolResult(): Promise<{ history: History; store: MemoryTranscriptStore }> {
    const history = await recorded('calculator-tools');
    const store = new MemoryTranscriptStore();
    const runner = new ExternalStorageRunner(externalStorageFor(store, 0));
    const toolScheduled = new Set(
      history.events!.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'fhTool').map((e) => String(e.eventId)),
    );
    const completed = history.events!.find((e) => toolScheduled.has(String(e.activityTaskCompletedEventAttributes?.scheduledEventId)))!;
    const result = completed.activityTaskCompletedEventAttributes!.result!;
    result.payloads = await runner.store(result.payloads as Payload[]);
    return { history, store };
  }

  it('shows "[offloaded]" without the store, and the value with it', async () => {
    const { history, store } = await withOffloadedToolResult();
    const without = await auditTranscript(history);
    const tool = ofType(without.json.records, 'tool_call')[0]!;
    expect(isOffloaded(tool.result)).toBe(true);
    expect(tool.result).toEqual({ $offloaded: expect.objectContaining({ driver: 'fh-store', key: expect.stringMatching(/^payloads\//), sizeBytes: expect.any(Number) }) });
    expect(without.markdown).toMatch(/\[offloaded: \d+ B in external storage \(payloads\/[0-9a-f]+\); pass the store to read it\]/);

    const withStore = await auditTranscript(history, { store });
    expect(ofType(withStore.json.records, 'tool_call')[0]).toMatchObject({ name: 'add', result: '5', isError: false });

    const gone = await auditTranscript(history, { store: new MemoryTranscriptStore() });
    expect(ofType(gone.json.records, 'tool_call')[0]!.result).toEqual({ $offloaded: expect.objectContaining({ error: expect.stringMatching(/missing from the store/) }) });
  });
});

describe('auditTranscript on a 0.2.0 run, where decisions ride with the model call', () => {
  it('lists each decision before its model call, and a decision to compact in place of a call', async () => {
    const text = await fs.readFile(path.resolve(__dirname, '../histories/0.2.0/threshold-compaction.json'), 'utf8');
    const history = parseHistoryJSON(text, 'threshold-compaction');
    // No local-activity decisions: they are in the fhModel results.
    expect(history.events!.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity')).toEqual([]);
    const { json } = await auditTranscript(history);
    const decisions = ofType(json.records, 'compaction_decision');
    const compacting = decisions.filter((d) => d.compact);
    const modelActivities = history.events!.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'fhModel');
    expect(compacting.length).toBeGreaterThan(0);
    expect(json.run.totals.compactionDecisions).toBe(decisions.length);
    // A decision to compact answered without a model call: it is not counted as one.
    expect(json.run.totals.modelCalls).toBe(modelActivities.length - compacting.length);
    expect(ofType(json.records, 'model_call')).toHaveLength(json.run.totals.modelCalls);
    // Each decision to compact is followed by its summary requests, then the model call made after compacting.
    const at = json.records.indexOf(compacting[0]!);
    const next = json.records.slice(at + 1).map((r) => r.type).join(' ');
    expect(next).toMatch(/^(summary )+model_call/);
    expect(json.records.map((r) => r.n)).toEqual(json.records.map((_, i) => i + 1));
  });
});

describe('auditTranscript: what each call cost', () => {
  it("prices each model call from its recorded usage at the table's list prices, and the run's total", async () => {
    const audit = await auditTranscript(await recorded('calculator-tools'), { truncateAt: 40 });
    const calls = ofType(audit.json.records, 'model_call');
    for (const c of calls) expect(c.costUsd).toBeCloseTo(callCostUsd(c.usage!, modelInfo(c.model!))!, 12);
    expect(calls.every((c) => typeof c.costUsd === 'number' && c.costUsd > 0)).toBe(true);
    const total = calls.reduce((s, c) => s + c.costUsd!, 0);
    expect(audit.json.run.totals.cost).toEqual({ pricedUsd: expect.closeTo(total, 12), unpricedCalls: 0, unpricedModels: [] });
    expect(audit.markdown.match(/^- Cost: \$[\d.]+ at list prices$/gm)).toHaveLength(3);
    expect(audit.markdown).toMatch(/^- Cost at list prices: \$[\d.]+$/m);
  });
});

describe("a session's title request is not a compaction summary", () => {
  // The title goes through the same summarisation activity as a compaction summary; told apart by its prompt.
  for (const release of ['0.3.0', '0.6.7']) {
    it(`session-approvals recorded by ${release}: a title record, no summary, and fh state's last summary stays empty`, async () => {
      const name = 'session-approvals';
      const history = parseHistoryJSON(await fs.readFile(path.resolve(__dirname, `../histories/${release}/${name}.json`), 'utf8'), name);
      const { json, markdown } = await auditTranscript(history);
      expect(ofType(json.records, 'summary')).toEqual([]);
      expect(ofType(json.records, 'title')).toEqual([
        expect.objectContaining({ type: 'title', model: 'claude-haiku-4-5', connection: 'anthropic', status: 'completed', text: 'Recorded Session Title' }),
      ]);
      expect(json.run.totals).toMatchObject({ summaries: 0, summarizer: { calls: 0 }, titles: { calls: 1, inputTokens: 126, outputTokens: 5 } });
      expect(markdown).toMatch(/^## \d+\. Session title: claude-haiku-4-5 on anthropic — /m);
      expect(markdown).toContain('· 0 summaries · 1 session title (126 input / 5 output tokens) ·');
      expect(markdown).not.toContain('Compaction summary');
      const state = await stateFromHistory(history);
      expect(state.compaction.lastSummary).toBeUndefined();
      expect(state.usage.summarizer.calls).toBe(0);
    });
  }
});

describe("a session reset's transfer summary is shown as such, not as a compaction summary of unknown cause", () => {
  for (const [release, name] of [['0.5.0', 'session-reset'], ['0.6.7', 'session-reset'], ['0.6.7', 'ladder-session-reset']] as const) {
    it(`${name} recorded by ${release}`, async () => {
      const history = parseHistoryJSON(await fs.readFile(path.resolve(__dirname, `../histories/${release}/${name}.json`), 'utf8'), name);
      const { json, markdown } = await auditTranscript(history);
      const notes = ofType(json.records, 'summary').filter((r) => typeof r.text === 'string' && r.text.includes('TRANSFER-NOTE'));
      expect(notes).toHaveLength(1);
      expect(notes[0]!.trigger).toBe('reset');
      expect(markdown).toMatch(new RegExp(`^## ${notes[0]!.n}\\. Session reset: transfer summary: claude-sonnet-5-5 on anthropic — `, 'm'));
      // The other summaries keep their compaction cause.
      expect(ofType(json.records, 'summary').filter((r) => r.trigger === 'reset')).toHaveLength(1);
      expect((await stateFromHistory(history)).compaction.lastSummary).toMatchObject({ trigger: 'reset' });
    });
  }
});
