import { WorkflowFailedError } from '@temporalio/client';
import { auditTranscript, startAgent } from '@fabric-harness/sdk/client';
import type { CompactionDecisionRecord } from '../../src/audit/records';
import { FakeAnthropicServer, callTools, fail, say, type RecordedRequest } from '@fabric-harness/sdk/testing';
import { isEvent, type Entry } from '@fabric-harness/sdk';
import { chatter, strictChatter } from '../fixtures/compaction-agents';
import { startTestWorker, type TestWorker } from '../support/test-worker';

const MARKER = '[fabric-harness:summarize]';
const SUMMARY = '## Goal\nHelp the user.\n## Progress\nAnswered questions.\n## Key Decisions\nNone.\n## Failed Approaches\nNone.\n## Open Issues\nNone.\n## Next Steps\nKeep answering.';

/** n short letter-only words: the fake counts 1 token per word, our estimator ~1.5. */
function words(n: number, tag: string): string {
  const letters = (i: number) => String.fromCharCode(97 + (i % 26)) + String.fromCharCode(97 + (Math.floor(i / 26) % 26));
  const prefix = tag.replace(/[^a-z]/gi, '').slice(0, 3) || 'w';
  return Array.from({ length: n }, (_, i) => `${prefix}${letters(i)}`).join(' ');
}

const isSummaryRequest = (r: RecordedRequest) => typeof r.body?.system === 'string' && r.body.system.startsWith(MARKER);
const isTurnRequest = (r: RecordedRequest) => r.path === '/v1/messages' && r.method === 'POST' && !isSummaryRequest(r);
const text = (m: any): string => m.content.map((b: any) => b.text ?? b.content ?? '').join('');

function summaryRoute(fake: FakeAnthropicServer, failFirst = 0) {
  let failures = failFirst;
  fake.setRoute((req) => {
    if (!isSummaryRequest(req)) return undefined;
    if (failures > 0) {
      failures -= 1;
      return fail(400, { message: 'summariser refused (scripted)' });
    }
    return say(SUMMARY);
  });
}

describe('compaction on Temporal (threshold, manual, overrides, failures, strict)', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;
  let n = 0;
  const wid = (p: string) => `${p}-${Date.now()}-${n++}`;

  beforeAll(async () => {
    fake = await FakeAnthropicServer.start();
    w = await startTestWorker({ name: 'compaction', baseURL: fake.url });
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  it("estimator 'count-tokens': the worker counts the exact request, decides from it, and records the count", async () => {
    summaryRoute(fake);
    const oneLetterWords = Array.from({ length: 400 }, () => 'a').join(' '); // the heuristic counts ~4 chars a token
    fake.enqueue(say('first'), say('second'));
    const before = fake.requests.length;
    const handle = await startAgent(
      w.client,
      chatter,
      { prompts: ['hello', oneLetterWords], contextWindowTokens: 10_000, compaction: { compactAtTokens: 300, keepRecentEntries: 1, estimator: 'count-tokens' } },
      { workflowId: wid('count-tokens'), taskQueue: w.taskQueue },
    );
    const result = await handle.result();
    const counted = fake.requests.slice(before).filter((r) => r.path === '/v1/messages/count_tokens');
    expect(counted.length).toBeGreaterThanOrEqual(2);
    expect(result.state.count).toBe(1);
    expect(result.state.lastDecision).toMatchObject({ estimator: 'count-tokens' });
    // The exact count is in the model activity's result in history, so a replay follows it.
    const decoded = (await handle.fetchHistory()).events!.flatMap((e) => e.activityTaskCompletedEventAttributes?.result?.payloads ?? []).map((p) => Buffer.from(p.data!).toString());
    expect(decoded.some((d) => d.includes('"countedTokens"'))).toBe(true);
  });

  it('compacts before the next model call once the threshold is passed, recorded and visible', async () => {
    summaryRoute(fake);
    const prompts = Array.from({ length: 8 }, (_, i) => `Question ${i}: ${words(60, 'qq')}`);
    fake.enqueue(
      say(words(60, 'ra')),
      callTools({ name: 'note', input: { text: 'remember this' } }),
      say(words(60, 'rb')),
      ...[2, 3, 4, 5, 6, 7].map(() => say(words(60, 'rc'))),
    );
    const before = fake.requests.length;
    const workflowId = wid('threshold');
    const handle = await startAgent(
      w.client,
      chatter,
      { prompts, contextWindowTokens: 1000, compaction: { reserveTokens: 150, keepRecentEntries: 4 } },
      { workflowId, taskQueue: w.taskQueue },
    );
    const result = await handle.result();
    expect(result.state.count).toBeGreaterThanOrEqual(1);
    expect(result.state.last!.reason).toBe('threshold');

    const requests = fake.requests.slice(before);
    const firstSummary = requests.findIndex(isSummaryRequest);
    expect(firstSummary).toBeGreaterThan(0);
    // The turn request just before the summary is the history that was compacted; the one after it
    // is what the model saw next: the summary first, then the kept entries verbatim, pairs intact.
    const beforeCompaction = requests.slice(0, firstSummary).filter(isTurnRequest).at(-1)!.body.messages;
    const afterCompaction = requests.slice(firstSummary).find(isTurnRequest)!.body.messages;
    expect(text(afterCompaction[0])).toContain('[Context Summary]');
    expect(text(afterCompaction[0])).toContain('## Goal\nHelp the user.');
    const cut = result.state.last!.cut;
    expect(cut).toBeGreaterThan(0);
    // Every user prompt of the compacted slice is carried verbatim (newest first) in the summary entry.
    // The newest user prompt of the compacted slice is carried verbatim in the summary entry (older
    // ones too, as far as the user-message budget — 10% of this tiny window — allows).
    const compactedPrompts = prompts.filter((p) => beforeCompaction.some((m: any) => text(m) === p) && !afterCompaction.slice(1).some((m: any) => text(m).includes(p)));
    expect(compactedPrompts.length).toBeGreaterThan(0);
    expect(text(afterCompaction[0])).toContain(`- ${compactedPrompts.at(-1)!.slice(0, 60)}`);
    // The summariser was sent the compacted slice rendered as text, not the kept part.
    const summaryReq = requests[firstSummary].body.messages[0];
    expect(text(summaryReq)).toContain('Question 0');

    const history = await handle.fetchHistory();
    const modelActivities = history.events!.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'fhModel');
    // Every threshold decision rides with a model activity (decided first, recorded in its result): no
    // local activity of its own, no extra round trip. A decision to compact answers without a model
    // call, and the call after the compaction carries no decision.
    // (The compaction gate's checks are local activities of their own: one per compaction, none a decision.)
    const markerType = (e: NonNullable<typeof history.events>[number]) => Buffer.from(e.markerRecordedEventAttributes!.details!.data!.payloads![0]!.data!).toString();
    const localActivities = history.events!.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity');
    expect(localActivities.filter((e) => !markerType(e).includes('"fhCheckSummaryGate"'))).toHaveLength(0);
    expect(localActivities).toHaveLength(result.state.count);
    const decisions = (await auditTranscript(history)).json.records.filter((r): r is CompactionDecisionRecord => r.type === 'compaction_decision');
    const compacting = decisions.filter((d) => d.compact).length;
    expect(compacting).toBeGreaterThan(0);
    expect(modelActivities.length).toBe(decisions.length + compacting);
    expect(history.events!.some((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'fhSummarize')).toBe(true);

    const seen = w.events.filter((e) => isEvent(e, 'compaction'));
    expect(seen.some((e) => isEvent(e, 'compaction') && e.data.reason === 'threshold' && e.data.messagesAfter < e.data.messagesBefore)).toBe(true);
    expect(w.events.some((e) => isEvent(e, 'context_window_warning'))).toBe(true);
  });

  it('answers compactionState and contextBudget queries, manual compaction and prompts from a client', async () => {
    summaryRoute(fake);
    fake.enqueue(say(words(40, 'a')), say(words(40, 'b')), say(words(40, 'c')), say('after compaction'));
    const handle = await startAgent(
      w.client,
      chatter,
      { prompts: ['one', 'two', 'three'], contextWindowTokens: 50_000, serveMs: 30_000 },
      { workflowId: wid('manual'), taskQueue: w.taskQueue },
    );
    // Wait until the run's own prompts are done (three replies in the conversation).
    let messages: Entry[] = [];
    for (let i = 0; i < 100 && messages.length < 6; i++) {
      messages = await handle.messages();
      if (messages.length < 6) await new Promise((r) => setTimeout(r, 100));
    }
    expect(messages).toHaveLength(6);

    const state = await handle.compactionState();
    expect(state).toMatchObject({ enabled: true, count: 0, contextWindowTokens: 50_000 });
    expect(state!.settings).toMatchObject({ reserveTokens: 4096, keepRecentEntries: 20, compactAtTokens: 50_000 - 4096 });
    expect(state!.estimate.tokens).toBeGreaterThan(0);
    expect(state!.usagePercent).toBeGreaterThan(0);
    const budget = await handle.contextBudget();
    expect(budget!.contextWindowTokens).toBe(50_000);
    expect(budget!.layers.reservedForResponse).toBe(4096);
    expect(budget!.layers.systemPrompt).toBeGreaterThan(0);
    expect(budget!.layers.toolDefinitions).toBeGreaterThan(0);
    expect(budget!.layers.history).toBeGreaterThan(0);

    const compacted = await handle.compact({ keepRecentEntries: 2 });
    expect(compacted.compactedEntries).toBe(4);
    expect(compacted.summary).toContain('## Goal');
    const after = await handle.messages();
    expect(after.map((e) => e.type)).toEqual(['summary', 'user', 'assistant']);

    const before = fake.messageRequests().length;
    expect(await handle.prompt('and now?')).toBe('after compaction');
    const sent = fake.messageRequests().slice(before).find((r) => !isSummaryRequest(r))!.body.messages;
    expect(text(sent[0])).toContain('[Context Summary]');
    expect(text(sent[0])).toContain('three'); // the user's own words, carried verbatim

    await handle.close();
    const result = await handle.result();
    expect(result.served).toBe(1);
    expect(result.state.last!.reason).toBe('manual');
    expect((await handle.compactionState())!.count).toBe(1);
  });

  it('per-prompt overrides win over session settings', async () => {
    summaryRoute(fake);
    fake.enqueue(say(words(30, 'x')), say(words(30, 'y')), say('done'));
    const result = await (
      await startAgent(
        w.client,
        chatter,
        {
          prompts: ['first', 'second', 'third'],
          contextWindowTokens: 100_000,
          compaction: { keepRecentEntries: 1 },
          overrides: [null, null, { compactAtTokens: 50, compactionKeepRecentEntries: 2 }],
        },
        { workflowId: wid('override'), taskQueue: w.taskQueue },
      )
    ).result();
    expect(result.state.count).toBe(1);
    expect(result.state.last!.reason).toBe('threshold');
    expect(result.entries).toBe(4); // summary + ['third' … kept 2 at compaction] + reply
  });

  it('a failing summarisation is non-fatal: error event, history kept, compacted next turn', async () => {
    summaryRoute(fake, 1);
    const eventsBefore = w.events.length;
    fake.enqueue(...[0, 1, 2, 3].map((i) => say(words(50, `f${i}`))));
    const workflowId = wid('sumfail');
    const handle = await startAgent(
      w.client,
      chatter,
      { prompts: ['p0', 'p1', 'p2', 'p3'], contextWindowTokens: 1000, compaction: { reserveTokens: 900, keepRecentEntries: 2 } },
      { workflowId, taskQueue: w.taskQueue },
    );
    const result = await handle.result();
    const events = w.events.slice(eventsBefore);
    const errors = events.filter((e) => isEvent(e, 'error'));
    expect(errors).toHaveLength(1);
    expect(errors[0].data).toMatchObject({ code: 'SUMMARIZATION_FAILED', recoverable: true });
    expect(result.state.count).toBeGreaterThanOrEqual(1);
    const queried = await handle.events();
    expect(queried.some((e) => isEvent(e, 'error'))).toBe(true);
  });

  it('strict entry: no compaction unless configured, and no decisions recorded', async () => {
    fake.enqueue(...[0, 1, 2].map((i) => say(words(80, `s${i}`))));
    const handle = await startAgent(
      w.client,
      strictChatter,
      { prompts: ['a', 'b', 'c'], contextWindowTokens: 200 },
      { workflowId: wid('strict'), taskQueue: w.taskQueue },
    );
    const result = await handle.result();
    expect(result.state).toMatchObject({ enabled: false, count: 0 });
    const history = await handle.fetchHistory();
    // No decision markers (local activities); a patch marker (fh-prelude-first) is not a decision.
    expect(history.events!.filter((e) => e.markerRecordedEventAttributes && e.markerRecordedEventAttributes.markerName !== 'core_patch')).toHaveLength(0);
  });
});

describe('context overflow on Temporal', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;
  let n = 0;

  beforeAll(async () => {
    // The fake rejects anything over 1,500 of its tokens. The agent knows that window, but its threshold
    // sits at the window and its estimate runs below the fake's count, so the provider's 400
    // "prompt is too long" comes first: the overflow path.
    fake = await FakeAnthropicServer.start({ contextWindow: 1500 });
    summaryRoute(fake);
    w = await startTestWorker({ name: 'overflow', baseURL: fake.url });
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  it('recovers by compacting and retrying exactly once', async () => {
    const prompts = Array.from({ length: 10 }, (_, i) => `q${i}`);
    fake.enqueue(...prompts.map(() => say(words(150, 'o'))));
    const before = fake.requests.length;
    const result = await (
      await startAgent(
        w.client,
        chatter,
        { prompts, contextWindowTokens: 1500, compaction: { compactAtTokens: 1500 } },
        { workflowId: `overflow-${Date.now()}-${n++}`, taskQueue: w.taskQueue },
      )
    ).result();
    expect(result.replies).toHaveLength(10);
    expect(result.state.count).toBe(1);
    expect(result.state.last!.reason).toBe('overflow');
    // The prompt whose request overflowed was sent twice: rejected, then compacted and retried.
    const turns = fake.requests.slice(before).filter(isTurnRequest);
    const lastUserText = (r: RecordedRequest) => text(r.body.messages.at(-1));
    const byPrompt = new Map<string, RecordedRequest[]>();
    for (const r of turns) byPrompt.set(lastUserText(r), [...(byPrompt.get(lastUserText(r)) ?? []), r]);
    const retried = [...byPrompt.entries()].filter(([, rs]) => rs.length > 1);
    expect(retried).toHaveLength(1);
    const [, [rejected, retry]] = retried[0];
    expect(text(rejected.body.messages[0])).not.toContain('[Context Summary]');
    expect(text(retry.body.messages[0])).toContain('[Context Summary]');
    expect(retry.body.messages.length).toBeLessThan(rejected.body.messages.length);
  });

  it('raises ContextWindowExceededError when the retry overflows too', async () => {
    fake.enqueue(say(words(100, 'e')), say(words(100, 'e')));
    const huge = words(1600, 'huge');
    const before = fake.requests.length;
    const handle = await startAgent(
      w.client,
      chatter,
      { prompts: ['small 0', 'small 1', huge], contextWindowTokens: 1500, compaction: { compactAtTokens: 1500 } },
      { workflowId: `overflow-${Date.now()}-${n++}`, taskQueue: w.taskQueue },
    );
    const err = await handle.result().catch((e) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect(err.cause.type).toBe('CONTEXT_WINDOW_EXCEEDED');
    expect(err.cause.message).toMatch(/context window/i);
    // After a session reset the prompt shares its message with the transfer summary: match by inclusion.
    const attempts = fake.requests.slice(before).filter(isTurnRequest).filter((r) => r.body.messages.some((m: any) => text(m).includes(huge)));
    // The overflow ladder: the first try, a retry after the emergency compaction and one after the
    // session reset (purge and drop had nothing to do: skipped); then it gives up, no loop.
    expect(attempts).toHaveLength(3);
  });
});
