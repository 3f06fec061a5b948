/** The session loop inline, against the scripted fake Anthropic server (no Temporal needed). */
import { init, isEvent, schema, tool, type AgentEvent } from '@fabric-harness/sdk';
import { FakeAnthropicServer, callTools, fail, say } from '@fabric-harness/sdk/testing';
import { validateApiMessages } from '../../src/core/context/compaction/validate';
import { toApiMessages } from '../../src/core/entries';
import { savedAnthropicEnv } from '../support/anthropic-env';

const MARKER = '[fabric-harness:summarize]';
const isSummary = (r: { body: any }) => String(r.body?.system ?? '').startsWith(MARKER);

describe('an inline session', () => {
  let fake: FakeAnthropicServer;
  const env = savedAnthropicEnv();

  beforeAll(async () => {
    fake = await FakeAnthropicServer.start({ models: { 'mystery-model': { maxInputTokens: 0 } } });
    env.pointAt(fake.url);
  });
  afterAll(async () => {
    await fake.stop();
    env.restore();
  });
  beforeEach(() => fake.setRoute((req) => (isSummary(req) ? say('## Goal\nModel summary.') : undefined)));

  const echo = tool({ name: 'echo', description: 'Echo text.', input: schema.object({ text: schema.string() }), execute: ({ text }) => text });

  it('fallback summary: generateSummary false compacts without calling the model', async () => {
    const session = await (await init({ contextWindowTokens: 100_000, tools: [echo] })).session();
    fake.enqueue(callTools({ name: 'echo', input: { text: 'hi' } }), say('one'), say('two'), say('three'));
    await session.prompt('first: please echo');
    await session.prompt('second');
    await session.prompt('third');
    const before = fake.requests.filter(isSummary).length;
    const result = await session.compact({ keepRecentEntries: 2, generateSummary: false });
    expect(fake.requests.filter(isSummary).length).toBe(before);
    for (const section of ['Goal', 'Progress', 'Key Decisions', 'Failed Approaches', 'Open Issues', 'Next Steps']) {
      expect(result.summary).toContain(`## ${section}`);
    }
    expect(result.summary).toContain('first: please echo'); // the goal, from the first user message
    expect(result.summary).toContain('echo(hi)'); // a tool call in Progress
    const entries = session.messages();
    expect(entries[0]).toMatchObject({ type: 'summary', fallback: true });
    expect(validateApiMessages(toApiMessages(entries))).toEqual([]);
    expect(session.compactionState().last).toMatchObject({ reason: 'manual', fallback: true });
  });

  it('treats reported input tokens above the window as an overflow: compacts and retries once', async () => {
    const events: AgentEvent[] = [];
    const session = await (await init({ contextWindowTokens: 5000, onEvent: (e) => events.push(e) })).session();
    for (let i = 0; i < 6; i++) {
      fake.enqueue(say(`answer ${i}`));
      await session.prompt(`question ${i}`);
    }
    // The provider answers, but says the prompt was bigger than the window: treated like an overflow.
    fake.enqueue(say('too big, silently', { usage: { input_tokens: 9000 } }), say('fits now'));
    expect(await session.prompt('question 6')).toBe('fits now');
    expect(session.compactionState().last).toMatchObject({ reason: 'overflow' });
    expect(events.filter((e) => isEvent(e, 'compaction')).map((e) => (e as any).data.reason)).toEqual(['overflow']);
    expect(session.messages().map((e) => e.type).slice(-2)).toEqual(['user', 'assistant']);
  });

  it('retries a 529 inline and parses structured output', async () => {
    const session = await (await init({ contextWindowTokens: 100_000 })).session();
    fake.enqueue(fail(529), say('```json\n{"answer": 42}\n```'));
    const out = await session.prompt('the answer?', { output: schema.object({ answer: schema.number() }) });
    expect(out).toEqual({ answer: 42 });
    const answer: number = out.answer; // the reply's type comes from `output`
    expect(answer).toBe(42);
  });

  it("a prompt without `output` is text to the type checker too, wherever its reply is assigned", async () => {
    const session = await (await init({ contextWindowTokens: 100_000 })).session();
    fake.enqueue(say('plain words'));
    // A type error as well (npm run typecheck checks that the directive is needed): before, the reply's type
    // was inferred from the variable it was assigned to, and a string passed as a number.
    // @ts-expect-error without `output` the reply is a string
    const notANumber: number = await session.prompt('no schema');
    expect(notANumber).toBe('plain words');
  });

  it('stops a model that never stops calling tools at maxTurns', async () => {
    const session = await (await init({ contextWindowTokens: 100_000, tools: [echo], maxTurns: 2 })).session();
    fake.enqueue(...[0, 1, 2].map(() => callTools({ name: 'echo', input: { text: 'again' } })));
    await expect(session.prompt('loop')).rejects.toMatchObject({ code: 'MAX_TURNS_EXCEEDED' });
  });

  it('with compaction on and no known context window, says so clearly', async () => {
    const session = await (await init({ model: 'mystery-model' })).session();
    await expect(session.prompt('hello')).rejects.toMatchObject({ code: 'UNKNOWN_CONTEXT_WINDOW', model: 'mystery-model' });
  });
});
