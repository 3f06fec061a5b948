/**
 * Context management on the real Temporal server: observation masking (in chunks, evidence kept, the
 * decision in history and in the compaction-state query) and a token keep window under the exact
 * count; each recorded run replays against the same agent bundled with other settings (another
 * module, so the difference is in code, not in the recorded input), with the model inputs compared.
 */
import * as path from 'node:path';
import { startAgent, type AgentHandle } from '@fabric-harness/sdk/client';
import { FileTranscriptStore } from '@fabric-harness/sdk/worker';
import { FakeAnthropicServer, callTools, say, type RecordedRequest } from '@fabric-harness/sdk/testing';
import { isEvent } from '@fabric-harness/sdk';
import { replayHistory } from '../../src/audit/replay';
import type { CompactionDecision } from '../../src/core/context/compaction/decide';
import { keeper, masker } from '../fixtures/context-agents';
import { startTestWorker, type TestWorker } from '../support/test-worker';

const MARKER = '[fabric-harness:summarize]';
const SUMMARY = '## Goal\nHelp the user.\n## Progress\nAnswered questions.\n## Key Decisions\nNone.\n## Failed Approaches\nNone.\n## Open Issues\nNone.\n## Next Steps\nKeep answering.';
const isSummaryRequest = (r: RecordedRequest) => typeof r.body?.system === 'string' && r.body.system.startsWith(MARKER);
const isTurnRequest = (r: RecordedRequest) => r.path === '/v1/messages' && !isSummaryRequest(r);
const variant = (name: string) => path.resolve(__dirname, '../fixtures', `${name}.ts`);

/** The tool_result contents of a request, in order. */
function toolResults(req: RecordedRequest): string[] {
  return (req.body.messages as Array<{ content: unknown }>).flatMap((m) =>
    Array.isArray(m.content) ? m.content.filter((b: any) => b.type === 'tool_result').map((b: any) => (typeof b.content === 'string' ? b.content : JSON.stringify(b.content))) : [],
  );
}
const isPlaceholderText = (s: string) => /^\[tool: [^\n]*\]$/.test(s);

/** Every fhModel activity result in a history, decoded (the threshold decisions ride in them). */
function modelResults(history: Awaited<ReturnType<AgentHandle['fetchHistory']>>): any[] {
  const scheduled = new Map<string, string>();
  for (const e of history.events ?? []) {
    const a = e.activityTaskScheduledEventAttributes;
    if (a) scheduled.set(String(e.eventId), a.activityType?.name ?? '');
  }
  return (history.events ?? [])
    .filter((e) => e.activityTaskCompletedEventAttributes && scheduled.get(String(e.activityTaskCompletedEventAttributes.scheduledEventId)) === 'fhModel')
    .map((e) => JSON.parse(Buffer.from(e.activityTaskCompletedEventAttributes!.result!.payloads![0]!.data!).toString()));
}

/** n short letter-only words: the fake counts 1 token per word. */
function words(n: number, tag: string): string {
  const letters = (i: number) => String.fromCharCode(97 + (i % 26)) + String.fromCharCode(97 + (Math.floor(i / 26) % 26));
  return Array.from({ length: n }, (_, i) => `${tag}${letters(i)}`).join(' ');
}

describe('context management on Temporal: masking and keep windows, replayed under changed settings', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;
  let n = 0;
  const wid = (p: string) => `${p}-${Date.now()}-${n++}`;

  beforeAll(async () => {
    fake = await FakeAnthropicServer.start({ route: (req) => (isSummaryRequest(req) ? say(SUMMARY) : undefined) });
    w = await startTestWorker({ name: 'context-mgmt', baseURL: fake.url });
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  describe('observation masking', () => {
    const view = (p: string) => callTools({ name: 'view_file', input: { path: p } });
    type MaskerOutput = Awaited<ReturnType<typeof masker.run>>;
    let handle: AgentHandle<MaskerOutput>;
    let requests: RecordedRequest[];
    let result: MaskerOutput;

    beforeAll(async () => {
      // Seven tool rounds, then the answer. masker keeps results of the newest 2 entries verbatim.
      fake.enqueue(
        view('src/a.ts'),
        view('src/b.ts'),
        callTools({ name: 'shell', input: { command: 'npm test' } }),
        view('src/c.ts'),
        view('src/d.ts'),
        view('src/e.ts'),
        view('src/f.ts'),
        say('Reviewed.'),
      );
      const before = fake.requests.length;
      handle = await startAgent(w.client, masker, { prompts: ['Review the code and run the tests.'] }, { workflowId: wid('masking'), taskQueue: w.taskQueue });
      result = await handle.result();
      requests = fake.requests.slice(before).filter(isTurnRequest);
    });

    it('later requests carry one-line placeholders for stale results; evidence and recent results stay verbatim', async () => {
      expect(result.replies).toEqual(['Reviewed.']);
      expect(requests).toHaveLength(8);
      const last = toolResults(requests.at(-1)!);
      expect(last).toHaveLength(7);
      const placeholders = last.filter(isPlaceholderText);
      expect(placeholders).toEqual(
        ['a', 'b', 'c', 'd', 'e'].map((f) => expect.stringMatching(new RegExp(`^\\[tool: view_file\\("src/${f}\\.ts"\\) → 30 lines, \\d+ chars\\]$`))),
      );
      // The test run is verification evidence: verbatim although it is old; the newest read too.
      expect(last[2]).toContain('Tests:       12 passed, 12 total');
      expect(last[2]).toContain('src/app.test.ts:20:');
      expect(last[6]).toContain('src/f.ts:30: const value29');
      // Masking saved most of the stale output.
      expect(JSON.stringify(requests.at(-1)!.body).length).toBeLessThan(JSON.stringify(requests.at(-2)!.body).length);
      expect((await handle.events()).some((e) => isEvent(e, 'masking') && e.data.masked === 5)).toBe(true);
    });

    it('masks in a chunk, not one result at a time (the prompt cache is rebuilt once)', () => {
      // Stale results build up 1, 2, 3, 4 (under the minimum chunk) and are masked together at 5.
      expect(requests.map((r) => toolResults(r).filter(isPlaceholderText).length)).toEqual([0, 0, 0, 0, 0, 0, 0, 5]);
    });

    it('the decision is recorded in the model activity result and answers the compaction-state query', async () => {
      const decisions = modelResults(await handle.fetchHistory()).map((r) => r.decision as CompactionDecision | undefined);
      const masking = decisions.filter((d) => d?.mask);
      expect(masking).toHaveLength(1);
      // entries: user, then 7 × (assistant, tool_results); the newest 2 entries stay: mask before index 13.
      expect(masking[0]).toMatchObject({ compact: false, mask: { before: 13 } });
      const state = await handle.compactionState();
      expect(state!.lastDecision).toMatchObject({ mask: { before: 13 } });
      expect(result.state.lastDecision).toMatchObject({ mask: { before: 13 } });
      expect(state!.count).toBe(0); // masking is not a compaction
    });

    it.each([
      ['masking off', 'context-agents-unmasked'],
      ['other masking settings', 'context-agents-resettled'],
    ])('replays under %s: same commands and the same model inputs (the recorded boundary wins)', async (_, module) => {
      const history = await handle.fetchHistory();
      const r = await replayHistory(history, { agents: variant(module), strictInputs: true, workflowId: handle.workflowId, store: new FileTranscriptStore(w.storeDir) });
      // 8 calls + the one that only decided to mask. A failure shows the replay's explanation.
      expect(r.ok ? r.strictInputs : r.explanation).toEqual({ compared: 9, unreadable: 0 });
    });
  });

  describe("keepRecentTokens under estimator 'count-tokens'", () => {
    it('cuts at the token window, and the recorded run replays with other keep settings and the heuristic', async () => {
      const prompts = Array.from({ length: 8 }, (_, i) => `Question ${i}: ${words(60, 'qq')}`);
      fake.enqueue(...prompts.map((_, i) => say(words(60, `r${String.fromCharCode(97 + i)}`))));
      const before = fake.requests.length;
      const handle = await startAgent(w.client, keeper, { prompts }, { workflowId: wid('keeper'), taskQueue: w.taskQueue });
      const result = await handle.result();
      expect(result.replies).toHaveLength(8);
      expect(result.state.count).toBeGreaterThanOrEqual(1);
      const requests = fake.requests.slice(before);
      expect(requests.some((r) => r.path === '/v1/messages/count_tokens')).toBe(true);

      const decisions = modelResults(await handle.fetchHistory())
        .map((r) => r.decision as CompactionDecision | undefined)
        .filter((d): d is CompactionDecision => !!d?.compact);
      expect(decisions.length).toBe(result.state.count);
      for (const d of decisions) {
        expect(d.estimator).toBe('count-tokens');
        expect(d.countedTokens).toBeGreaterThan(d.threshold);
        // The token window (120) keeps fewer than the entry window (6).
        expect(d.keptEntries).toBeLessThan(6);
        expect(d.keptEntries).toBeGreaterThanOrEqual(1);
      }
      // The model saw the summary followed by the kept entries only.
      const firstSummary = requests.findIndex(isSummaryRequest);
      const after = requests.slice(firstSummary).find((r) => r.path === '/v1/messages' && !isSummaryRequest(r))!;
      expect(after.body.messages.length).toBeLessThanOrEqual(1 + decisions[0]!.keptEntries + 1);

      const history = await handle.fetchHistory();
      for (const module of ['context-agents-unmasked', 'context-agents-resettled']) {
        const r = await replayHistory(history, { agents: variant(module), strictInputs: true, workflowId: handle.workflowId, store: new FileTranscriptStore(w.storeDir) });
        expect([module, r.ok ? r.strictInputs : r.explanation]).toEqual([module, { compared: expect.any(Number), unreadable: 0 }]);
      }
    });
  });
});
