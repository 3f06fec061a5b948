/**
 * The overflow ladder and session reset: each step's facts and decision (pure), the
 * single-retry guard, and an inline session against the scripted fake that rejects requests as "prompt
 * is too long" until a given step has happened, then answers.
 */
import { ContextWindowExceededError, init, isEvent, schema, tool, type AgentEvent } from '@fabric-harness/sdk';
import { FakeAnthropicServer, callTools, fail, say as reply, type RecordedRequest } from '@fabric-harness/sdk/testing';
import { decideFromFacts, decisionFacts, OVERFLOW_KEEP_RECENT, type DecisionFacts } from '../../src/core/context/compaction/decide';
import { resolveCompactionSettings } from '../../src/core/context/settings';
import { DROPPED_INJECTED_NOTE, LADDER_STEPS, ladderFacts, OverflowLadderState, type LadderStep } from '../../src/core/context/ladder';
import { resetConversation } from '../../src/core/context/reset';
import { toApiMessages, type Entry } from '../../src/core/entries';
import { validateMessagesRequest } from '../../src/testing';
import { call, results, session, summary, user } from './compaction-helpers';
import { savedAnthropicEnv } from '../support/anthropic-env';

const settings = (over: Record<string, unknown> = {}) => resolveCompactionSettings(over as never, undefined, 10_000, { enabled: true });

function decide(entries: Entry[], step: LadderStep, over: Record<string, unknown> = {}) {
  const facts: DecisionFacts = { ...decisionFacts({ entries, settings: settings(over), trigger: 'overflow' }), ...ladderFacts(entries, step) };
  return decideFromFacts(facts);
}

function expectSendable(entries: readonly Entry[]) {
  expect(validateMessagesRequest({ model: 'm', max_tokens: 1, messages: toApiMessages([...entries]) })).toBeUndefined();
}

describe('ladder steps (pure)', () => {
  it('emergency-compaction keeps the last two turns, whole: the cut never splits a tool_use from its result', () => {
    const entries = session(5); // 20 entries, 4 a turn
    const d = decide(entries, 'emergency-compaction');
    expect(d).toMatchObject({ ladderStep: 'emergency-compaction', apply: true, compact: true, reason: 'overflow', cut: 12, keptEntries: 8 });
    // The current turn is mid tool loop: its user entry and the pair after it stay together.
    const midTurn = [...session(3), user('now'), call([['x', 'read_file', { path: 'a' }]]), results([['x', 'big']])];
    const m = decide(midTurn, 'emergency-compaction');
    expect(m.cut).toBe(8);
    expect(midTurn[m.cut]).toEqual(user('question 2'));
    expectSendable(midTurn.slice(m.cut));
  });

  it('a decision recorded without ladderStep still means the old emergency compaction (OVERFLOW_KEEP_RECENT entries)', () => {
    const entries = session(5);
    const d = decideFromFacts(decisionFacts({ entries, settings: settings(), trigger: 'overflow' }));
    expect(d.ladderStep).toBeUndefined();
    expect(d).toMatchObject({ compact: true, reason: 'overflow', keptEntries: OVERFLOW_KEEP_RECENT });
  });

  it('emergency-compaction with nothing before the last two turns is skipped, and says why', () => {
    const d = decide([summary(), ...session(2)], 'emergency-compaction');
    expect(d).toMatchObject({ apply: false, compact: false, reason: null });
    expect(d.why).toMatch(/skipped: nothing before the last 2 turns/);
  });

  it('purge-tool-results replaces every historical result (evidence too), keeps the latest tool_results entry', () => {
    const evidence = 'PASS test/a.test.ts\nTests: 3 passed, 3 total\n' + 'ok\n'.repeat(50);
    const entries = [
      user('q'),
      call([['a', 'bash', { command: 'npm test' }]]),
      results([['a', evidence]]),
      call([['b', 'read_file', { path: 'src/x.ts' }]]),
      results([['b', 'x'.repeat(500)]]),
    ];
    const d = decide(entries, 'purge-tool-results');
    expect(d).toMatchObject({ ladderStep: 'purge-tool-results', apply: true, compact: false, purge: { before: 4 } });
    const again = decide(entries.slice(0, 3), 'purge-tool-results');
    expect(again).toMatchObject({ apply: false });
    expect(again.why).toMatch(/no historical tool result/);
  });

  it('drop-injected applies only when a summary carries injected text, and the note is not dropped again', () => {
    expect(decide([summary({ injected: 'MEMORY' }), user('q')], 'drop-injected')).toMatchObject({ apply: true });
    expect(decide([summary({ injected: DROPPED_INJECTED_NOTE }), user('q')], 'drop-injected')).toMatchObject({ apply: false });
    expect(decide([summary(), user('q')], 'drop-injected').why).toMatch(/no injected text/);
  });

  it('session-reset is skipped when the conversation is only the current prompt', () => {
    expect(decide([user('q')], 'session-reset')).toMatchObject({ apply: false });
    expect(decide(session(1), 'session-reset')).toMatchObject({ apply: true });
  });

  it('recovery off stops the ladder at its first decision', () => {
    expect(decide(session(5), 'emergency-compaction', { recoverFromOverflow: false })).toMatchObject({ apply: false, ladderStop: true });
  });

  it('the reset conversation is valid for the API: summary (memory injected), then the prompt', () => {
    const next = resetConversation({ summary: '## Outcome\n- done', fallback: false, memory: 'prefers tabs', prompt: 'go on', compactedEntries: 9 });
    expect(next).toHaveLength(2);
    expect(next[0]).toMatchObject({ type: 'summary', injected: 'prefers tabs' });
    expectSendable(next);
  });
});

describe('the single-retry guard', () => {
  it('gives each step once, in order, then nothing', () => {
    const ladder = new OverflowLadderState();
    const seen: LadderStep[] = [];
    for (let s = ladder.next(); s !== undefined; s = ladder.next()) {
      ladder.mark(s);
      seen.push(s);
      expect(seen.length).toBeLessThanOrEqual(LADDER_STEPS.length);
    }
    expect(seen).toEqual([...LADDER_STEPS]);
  });
});

describe('an inline session climbing the ladder', () => {
  const MARKER = '[fabric-harness:summarize]';
  const isSummary = (r: RecordedRequest) => String(r.body?.system ?? '').startsWith(MARKER);
  const isTransfer = (r: RecordedRequest) => isSummary(r) && String(r.body.system).includes('hand-over note');
  const body = (r: RecordedRequest) => JSON.stringify(r.body.messages);
  const TRANSFER = '## Outcome\n- TRANSFER-NOTE: the pages were read';
  const BIG = 'lorem ipsum dolor '.repeat(300);
  const readPage = tool({ name: 'read_page', description: 'Read a page.', input: schema.object({ n: schema.number() }), execute: ({ n }) => `page ${n}: ${BIG}` });
  let fake: FakeAnthropicServer;
  const env = savedAnthropicEnv();

  /** Rejects turn requests as too long until `fits` says the request now fits; then replies in order. */
  async function start(fits: (r: RecordedRequest) => boolean) {
    fake = await FakeAnthropicServer.start({
      route: (req) => {
        if (isTransfer(req)) return reply(TRANSFER);
        if (isSummary(req)) return reply('## Goal\nRead pages.\n## Progress\nRead some.');
        return fits(req) ? undefined : fail(400, { message: 'prompt is too long: 250000 tokens > 200000 maximum' });
      },
    });
    env.pointAt(fake.url);
  }
  afterEach(async () => {
    await fake?.stop();
    env.restore();
  });

  /** Three turns that each read two pages (two tool rounds), then a summary with injected memory. */
  async function warm(events: AgentEvent[]) {
    const gate = { fits: (_r: RecordedRequest) => true };
    await start((r) => gate.fits(r));
    const s = await (
      await init({ contextWindowTokens: 100_000, tools: [readPage], hooks: { afterCompact: () => ({ inject: 'MEMORY: the user likes short answers' }) }, onEvent: (e) => events.push(e) })
    ).session();
    for (let i = 0; i < 3; i++) {
      fake.enqueue(callTools({ name: 'read_page', input: { n: i } }), callTools({ name: 'read_page', input: { n: i + 10 } }), reply(`read ${i}`));
      await s.prompt(`read page ${i}`);
    }
    await s.compact({ keepRecentEntries: 12 }); // leaves a summary with injected memory, and two turns
    return { s, close: (f: (r: RecordedRequest) => boolean) => void (gate.fits = f) };
  }

  const bigResults = (r: RecordedRequest) => (body(r).match(/lorem ipsum dolor lorem/g) ?? []).length / 299;

  const steps = (events: AgentEvent[]) => events.flatMap((e) => (isEvent(e, 'overflow_step') ? [`${e.data.step}:${e.data.applied ? 'applied' : 'skipped'}`] : []));

  it.each([
    ['emergency-compaction', (r: RecordedRequest) => bigResults(r) <= 2, ['emergency-compaction:applied']],
    ['purge-tool-results', (r: RecordedRequest) => bigResults(r) <= 1, ['emergency-compaction:applied', 'purge-tool-results:applied']],
    [
      'drop-injected',
      (r: RecordedRequest) => bigResults(r) <= 1 && !body(r).includes('MEMORY:'),
      ['emergency-compaction:applied', 'purge-tool-results:applied', 'drop-injected:applied'],
    ],
    [
      'session-reset',
      (r: RecordedRequest) => body(r).includes('TRANSFER-NOTE'),
      ['emergency-compaction:applied', 'purge-tool-results:applied', 'drop-injected:applied', 'session-reset:applied'],
    ],
  ] as const)('climbs to %s, and the prompt is answered', async (_step, fits, expected) => {
    const events: AgentEvent[] = [];
    const { s, close } = await warm(events);
    close(fits);
    fake.enqueue(reply('answered'));
    await expect(s.prompt('read page 3 please')).resolves.toBe('answered');
    expect(steps(events)).toEqual(expected);
    const last = fake.messageRequests().filter((r) => !isSummary(r)).at(-1)!;
    expect(body(last)).toContain('read page 3 please'); // the current prompt is still what is answered
    expect(validateMessagesRequest(last.body)).toBeUndefined();
  });

  it('after the last step: ContextWindowExceededError, each step tried once, no loop', async () => {
    const events: AgentEvent[] = [];
    const { s, close } = await warm(events);
    const before = fake.messageRequests().filter((r) => !isSummary(r)).length;
    close(() => false);
    await expect(s.prompt('read page 3 please')).rejects.toBeInstanceOf(ContextWindowExceededError);
    expect(steps(events)).toEqual(['emergency-compaction:applied', 'purge-tool-results:applied', 'drop-injected:applied', 'session-reset:applied']);
    expect(fake.messageRequests().filter((r) => !isSummary(r)).length - before).toBe(5); // the first try and one retry a step
    expect(fake.messageRequests().filter(isTransfer)).toHaveLength(1);
  });

  it('session.reset() starts a fresh conversation with the transfer summary; the next prompt sees it', async () => {
    const events: AgentEvent[] = [];
    const { s } = await warm(events);
    const r = await s.reset();
    expect(r.summary).toContain('TRANSFER-NOTE');
    expect(s.messages()).toHaveLength(1);
    // The transfer request carried conclusions, not raw tool output.
    expect(body(fake.messageRequests().filter(isTransfer)[0]!)).not.toContain('lorem ipsum');
    fake.enqueue(reply('fresh'));
    await expect(s.prompt('next')).resolves.toBe('fresh');
    expect(body(fake.messageRequests().filter((x) => !isSummary(x)).at(-1)!)).toContain('TRANSFER-NOTE');
    await expect(s.reset({ transferSummary: 'yes' } as never)).rejects.toThrow(/transferSummary/);
    const transfers = fake.messageRequests().filter(isTransfer).length;
    await expect(s.reset({ transferSummary: false })).resolves.toMatchObject({ summary: '' });
    expect(s.messages()).toEqual([]);
    expect(fake.messageRequests().filter(isTransfer)).toHaveLength(transfers);
  });
});
