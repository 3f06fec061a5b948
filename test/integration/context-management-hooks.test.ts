/**
 * Compaction hooks on the real Temporal server: beforeCompact vetoes or adds instructions to the
 * summary request, afterCompact injects text the next model call carries in the summary, and a hook
 * that throws is an error event while the compaction, the history and the run go on.
 */
import { startAgent } from '@fabric-harness/sdk/client';
import { FakeAnthropicServer, say, type RecordedRequest } from '@fabric-harness/sdk/testing';
import { isEvent, type AgentEvent } from '@fabric-harness/sdk';
import { HOOK_INJECTION, HOOK_INSTRUCTIONS, hooked } from '../fixtures/context-agents';
import { startTestWorker, type TestWorker } from '../support/test-worker';

const MARKER = '[fabric-harness:summarize]';
const SUMMARY = '## Goal\nHelp the user.\n## Progress\nAnswered questions.\n## Key Decisions\nNone.\n## Failed Approaches\nNone.\n## Open Issues\nNone.\n## Next Steps\nKeep answering.';
const isSummaryRequest = (r: RecordedRequest) => typeof r.body?.system === 'string' && r.body.system.startsWith(MARKER);
const isTurnRequest = (r: RecordedRequest) => r.path === '/v1/messages' && !isSummaryRequest(r);
const text = (m: any): string => (typeof m.content === 'string' ? m.content : m.content.map((b: any) => b.text ?? b.content ?? '').join(''));

function words(n: number, tag: string): string {
  const letters = (i: number) => String.fromCharCode(97 + (i % 26)) + String.fromCharCode(97 + (Math.floor(i / 26) % 26));
  return Array.from({ length: n }, (_, i) => `${tag}${letters(i)}`).join(' ');
}

type Hook = 'veto' | 'instructions' | 'inject' | 'throw-before' | 'throw-after';
const PROMPTS = Array.from({ length: 8 }, (_, i) => `Question ${i}: ${words(60, 'qq')}`);

describe('compaction hooks on Temporal', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;
  let n = 0;

  beforeAll(async () => {
    fake = await FakeAnthropicServer.start({ route: (req) => (isSummaryRequest(req) ? say(SUMMARY) : undefined) });
    w = await startTestWorker({ name: 'context-hooks', baseURL: fake.url });
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  /** Runs `hooked` through eight long prompts (past the threshold, 500 of its 1,000-token window). */
  async function run(hook: Hook, prompts = PROMPTS) {
    fake.enqueue(...prompts.map((_, i) => say(words(60, `r${String.fromCharCode(97 + i)}`))));
    const before = fake.requests.length;
    const handle = await startAgent(w.client, hooked, { prompts, hook }, { workflowId: `hooks-${hook}-${Date.now()}-${n++}`, taskQueue: w.taskQueue });
    const result = await handle.result();
    const requests = fake.requests.slice(before);
    const history = await handle.fetchHistory();
    const summarizeCalls = history.events!.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'fhSummarize').length;
    const events: AgentEvent[] = await handle.events();
    // Every request the run sent was accepted by the fake (it validates each one as the API does).
    expect(fake.requests.filter((r) => r.path === '/v1/messages')).toHaveLength(fake.messageRequests().length);
    return { handle, result, requests, summarizeCalls, events };
  }

  it('beforeCompact veto: no compaction, no summary request, a COMPACTION_VETOED warning', async () => {
    // Four prompts: past the threshold (500), still inside the window (1,000; the tool list includes
    // read_artifact), where a vetoed overflow recovery would end the run with ContextWindowExceededError.
    const { result, requests, summarizeCalls, events } = await run('veto', PROMPTS.slice(0, 4));
    expect(result.replies).toHaveLength(4);
    expect(result.state.count).toBe(0);
    expect(result.state.lastDecision).toMatchObject({ compact: true }); // the threshold said compact; the hook said no
    expect(summarizeCalls).toBe(0);
    expect(requests.some(isSummaryRequest)).toBe(false);
    const vetoes = events.filter((e) => isEvent(e, 'warning') && e.data.code === 'COMPACTION_VETOED');
    expect(vetoes.length).toBeGreaterThan(0);
    expect(vetoes[0]!.data).toMatchObject({ message: expect.stringContaining('not now (threshold)') });
    expect(events.some((e) => isEvent(e, 'compaction'))).toBe(false);
    // Nothing was dropped: every prompt is still in the history.
    expect(result.messages.filter((m) => m.type === 'user')).toHaveLength(4);
  });

  it('beforeCompact instructions reach the summary request the provider sees', async () => {
    const { result, requests } = await run('instructions');
    expect(result.state.count).toBeGreaterThanOrEqual(1);
    const summaries = requests.filter(isSummaryRequest);
    // The tiny window makes the summariser work in chunks (a rolling summary); each request carries them.
    expect(summaries.length).toBeGreaterThanOrEqual(result.state.count);
    for (const s of summaries) expect(JSON.stringify(s.body)).toContain(HOOK_INSTRUCTIONS);
    // Not in the model's own requests.
    expect(requests.filter(isTurnRequest).some((r) => JSON.stringify(r.body).includes(HOOK_INSTRUCTIONS))).toBe(false);
  });

  it('afterCompact inject: the next model request carries it in the summary', async () => {
    const { result, requests } = await run('inject');
    expect(result.state.count).toBeGreaterThanOrEqual(1);
    const firstSummary = requests.findIndex(isSummaryRequest);
    const next = requests.slice(firstSummary).find(isTurnRequest)!;
    expect(text(next.body.messages[0])).toContain('[Context Summary]');
    expect(text(next.body.messages[0])).toContain(HOOK_INJECTION);
    // Not before the compaction.
    expect(requests.slice(0, firstSummary).some((r) => JSON.stringify(r.body).includes(HOOK_INJECTION))).toBe(false);
    expect(result.messages[0]).toMatchObject({ type: 'summary', injected: HOOK_INJECTION });
  });

  it.each([
    ['beforeCompact', 'throw-before', 'hooks.beforeCompact threw: memory flush failed (scripted)'],
    ['afterCompact', 'throw-after', 'hooks.afterCompact threw: memory read failed (scripted)'],
  ] as const)('%s that throws: a COMPACTION_HOOK_FAILED error event; the compaction, the history and the run go on', async (_, hook, message) => {
    const { result, requests, events } = await run(hook);
    expect(result.replies).toHaveLength(8);
    expect(result.state.count).toBeGreaterThanOrEqual(1);
    const failures = events.filter((e) => isEvent(e, 'error') && e.data.code === 'COMPACTION_HOOK_FAILED');
    expect(failures).toHaveLength(result.state.count);
    expect(failures[0]!.data).toMatchObject({ message, recoverable: true });
    // The history is whole: the summary, then the kept entries, every prompt after the last cut
    // present, and the last request sent the model all of it.
    expect(result.messages[0]!.type).toBe('summary');
    expect(result.messages.at(-1)).toMatchObject({ type: 'assistant' });
    expect(text(requests.filter(isTurnRequest).at(-1)!.body.messages.at(-1))).toBe(PROMPTS.at(-1));
    expect(JSON.stringify(result.messages)).not.toContain(HOOK_INJECTION);
  });
});
