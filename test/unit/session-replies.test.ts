/**
 * The turn loop against replies real models send and the old code mishandled, played by the scripted
 * fake, which refuses (400) any follow-up request the real API would refuse. Inline, no Temporal.
 */
import { ModelRefusalError, init, isEvent, schema, tool, type AgentEvent } from '@fabric-harness/sdk';
import { FakeAnthropicServer, callTools, reply, say, validateMessagesRequest } from '@fabric-harness/sdk/testing';
import { toApiMessages } from '../../src/core/entries';
import { TRUNCATED_TOOL_CALL_MESSAGE } from '../../src/core/replies';
import { savedAnthropicEnv } from '../support/anthropic-env';

const MARKER = '[fabric-harness:summarize]';
const isSummary = (r: { body: any }) => String(r.body?.system ?? '').startsWith(MARKER);

let fake: FakeAnthropicServer;
const env = savedAnthropicEnv();

// A fresh fake per test: a failing test must not leave its unplayed steps to the next one.
beforeEach(async () => {
  fake = await FakeAnthropicServer.start({ route: (req) => (isSummary(req) ? say('## Goal\nModel summary.') : undefined) });
  env.pointAt(fake.url);
});
afterEach(async () => {
  const left = fake.remaining();
  await fake.stop();
  expect(left).toBe(0);
});
afterAll(() => {
  env.restore();
});

let echoed: string[] = [];
beforeEach(() => (echoed = []));
const echo = tool({
  name: 'echo',
  description: 'Echo text.',
  input: schema.object({ text: schema.string() }),
  execute: ({ text }) => {
    echoed.push(text);
    return text;
  },
});

async function session(opts: Record<string, unknown> = {}, events?: AgentEvent[]) {
  return (await init({ contextWindowTokens: 100_000, tools: [echo], onEvent: (e) => events?.push(e), ...opts })).session();
}

/** The last request the fake accepted, as sent. */
const lastSent = () => fake.messageRequests().at(-1)!.body;

/** The whole history, held to the fake's rules (not the SDK's own). */
function expectSendable(entries: Parameters<typeof toApiMessages>[0]) {
  expect(validateMessagesRequest({ model: 'm', max_tokens: 1, messages: [...toApiMessages(entries), { role: 'user', content: 'next' }] })).toBeUndefined();
}

describe('replies the API sends, and the next request', () => {
  it('a whitespace-only reply ("\\n\\n") is returned, and the next prompt is not a 400', async () => {
    const s = await session();
    fake.enqueue(say('\n\n'), say('second answer'));
    // Dropped where it arrives (the adapter): the reply says nothing, and nothing unsendable is kept.
    expect(await s.prompt('first')).toBe('');
    expect(await s.prompt('second')).toBe('second answer');
    expect(JSON.stringify(lastSent().messages)).not.toContain('"\\n\\n"');
    expectSendable(s.messages());
  });

  it('whitespace text before a tool call is not resent', async () => {
    const s = await session();
    fake.enqueue(reply({ content: ['\n\n', { name: 'echo', input: { text: 'hi' } }] }), say('done'));
    expect(await s.prompt('echo hi')).toBe('done');
    expect(echoed).toEqual(['hi']);
    expect(lastSent().messages[1].content.map((b: { type: string }) => b.type)).toEqual(['tool_use']);
  });

  it('an empty reply with end_turn returns "" and the next prompt works', async () => {
    const s = await session();
    fake.enqueue(reply({ content: [] }), say('back'));
    expect(await s.prompt('first')).toBe('');
    expect(await s.prompt('second')).toBe('back');
    // The empty turn is left out: the two prompts go as one user turn.
    expect(lastSent().messages).toHaveLength(1);
    expectSendable(s.messages());
  });

  it('a tool_use cut off by max_tokens is answered with an error, not run, and the turn goes on', async () => {
    const events: AgentEvent[] = [];
    const s = await session({}, events);
    fake.enqueue(
      reply({ content: ['Echoing.', { name: 'echo', input: {}, id: 'toolu_cut' }], stopReason: 'max_tokens' }),
      callTools({ name: 'echo', input: { text: 'short' } }),
      say('done'),
    );
    expect(await s.prompt('echo something long')).toBe('done');
    expect(echoed).toEqual(['short']); // the cut-off call never ran
    const second = fake.messageRequests().at(-2)!.body.messages;
    expect(second.at(-1).content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_cut', content: TRUNCATED_TOOL_CALL_MESSAGE, is_error: true }]);
    expect(events.filter((e) => isEvent(e, 'tool_call')).map((e) => (e as { data: { id: string } }).data.id)).not.toContain('toolu_cut');
    expectSendable(s.messages());
  });

  it('a cut-off tool_use counts against maxTurns', async () => {
    const s = await session({ maxTurns: 1 });
    const cut = () => reply({ content: [{ name: 'echo', input: {} }], stopReason: 'max_tokens' });
    fake.enqueue(cut(), cut());
    await expect(s.prompt('loop')).rejects.toMatchObject({ code: 'MAX_TURNS_EXCEEDED' });
    expectSendable(s.messages());
  });

  it('stopping at maxTurns answers the calls it did not run, so the session can be prompted again', async () => {
    const s = await session({ maxTurns: 1 });
    fake.enqueue(callTools({ name: 'echo', input: { text: 'a' } }), callTools({ name: 'echo', input: { text: 'b' } }), say('fine'));
    await expect(s.prompt('loop')).rejects.toMatchObject({ code: 'MAX_TURNS_EXCEEDED' });
    expect(echoed).toEqual(['a']);
    expect(await s.prompt('stop now')).toBe('fine');
  });

  it('pause_turn: the reply is sent back so the model resumes', async () => {
    const s = await session();
    fake.enqueue(say('Searching the docs', { stopReason: 'pause_turn' }), say('Found it.'));
    expect(await s.prompt('look it up')).toBe('Found it.');
    const resumed = lastSent().messages;
    expect(resumed.at(-1)).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'Searching the docs' }] });
  });

  it('pause_turn counts against maxTurns', async () => {
    const s = await session({ maxTurns: 1 });
    fake.enqueue(say('a', { stopReason: 'pause_turn' }), say('b', { stopReason: 'pause_turn' }));
    await expect(s.prompt('go')).rejects.toMatchObject({ code: 'MAX_TURNS_EXCEEDED' });
  });

  it('refusal ends the prompt with ModelRefusalError; the refused reply is not kept', async () => {
    const s = await session();
    fake.enqueue(reply({ content: ['I cannot help with that.'], stopReason: 'refusal' }), say('Sure.'));
    const err = await s.prompt('something').catch((e) => e);
    expect(err).toBeInstanceOf(ModelRefusalError);
    expect(err).toMatchObject({ code: 'MODEL_REFUSAL', text: 'I cannot help with that.' });
    expect(await s.prompt('something else')).toBe('Sure.');
    expect(JSON.stringify(lastSent().messages)).not.toContain('I cannot help');
  });

  it('model_context_window_exceeded is an overflow: compact once and retry', async () => {
    const s = await session({ contextWindowTokens: 100_000 });
    for (let i = 0; i < 6; i++) {
      fake.enqueue(say(`answer ${i}`));
      await s.prompt(`question ${i}`);
    }
    fake.enqueue(say('partial', { stopReason: 'model_context_window_exceeded' }), say('fits now'));
    expect(await s.prompt('question 6')).toBe('fits now');
    expect(s.compactionState().last).toMatchObject({ reason: 'overflow' });
    expect(JSON.stringify(s.messages())).not.toContain('partial');
  });

  it('model_context_window_exceeded without compaction is ContextWindowExceededError', async () => {
    const s = await session({ compaction: { enabled: false } });
    fake.enqueue(say('partial', { stopReason: 'model_context_window_exceeded' }));
    await expect(s.prompt('q')).rejects.toMatchObject({ code: 'CONTEXT_WINDOW_EXCEEDED' });
  });
});

describe('an ineffective compaction is not repeated every turn', () => {
  it('compacts once, then warns COMPACTION_INEFFECTIVE instead of re-compacting on each of the next turns', async () => {
    const events: AgentEvent[] = [];
    // Answers of ~100 estimated tokens; the 10 kept entries alone are over the 400-token threshold, so
    // no compaction can get under it.
    const s = await session({ compaction: { compactAtTokens: 400, keepRecentEntries: 10 } }, events);
    const big = (i: number) => `answer ${i}: ${'lorem ipsum dolor sit amet '.repeat(15)}`;
    for (let i = 0; i < 6; i++) {
      fake.enqueue(say(big(i)));
      await s.prompt(`question ${i}`);
    }
    expect(s.compactionState()).toMatchObject({ count: 1, last: { ineffective: true } });
    const warnings = () => events.filter((e) => isEvent(e, 'warning') && (e as { data: { code: string } }).data.code === 'COMPACTION_INEFFECTIVE');
    expect(warnings()).toHaveLength(0);

    for (let i = 6; i < 10; i++) {
      fake.enqueue(say(big(i)));
      await s.prompt(`question ${i}`);
    }
    // Four more turns over the threshold: still the one compaction, and a warning before each model call.
    expect(s.compactionState().count).toBe(1);
    expect(warnings()).toHaveLength(4);
    expect(events.filter((e) => isEvent(e, 'compaction_started'))).toHaveLength(1);
  });
});

describe('a blank prompt', () => {
  it('is refused before any model call (the API would answer 400), and the session goes on', async () => {
    const s = await (await init({ compaction: { enabled: false } })).session();
    await expect(s.prompt(' \n ')).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'text' });
    expect(fake.messageRequests()).toHaveLength(0);
    fake.enqueue(say('fine'));
    expect(await s.prompt('hello')).toBe('fine');
  });
});
