/**
 * The 0.5.0 words and their 0.4.0 aliases (docs/architecture.md, CHANGELOG "Upgrading from 0.4.0"): a
 * tool round is a step (`maxSteps`; `maxTurns` still works), the conversation inside a run is a
 * `Conversation` (`Session` is its deprecated alias) whose items are entries (`entries()`; `messages()`
 * still works), and the history tools live in `@fabric-harness/sdk/audit` (re-exported from `/client`).
 */
import { init, schema, tool, MaxStepsExceededError, MaxTurnsExceededError } from '@fabric-harness/sdk';
import { FakeAnthropicServer, callTools, say } from '@fabric-harness/sdk/testing';
import * as audit from '@fabric-harness/sdk/audit';
import * as client from '@fabric-harness/sdk/client';
import { Conversation, Session } from '../../src/core/conversation';
import { savedAnthropicEnv } from '../support/anthropic-env';

describe('0.5.0 words, 0.4.0 names', () => {
  let fake: FakeAnthropicServer;
  const env = savedAnthropicEnv();
  beforeAll(async () => {
    fake = await FakeAnthropicServer.start();
    env.pointAt(fake.url);
  });
  afterAll(async () => {
    await fake.stop();
    env.restore();
  });

  const echo = tool({ name: 'echo', description: 'Echo text.', input: schema.object({ text: schema.string() }), execute: ({ text }) => text });
  const loop = (n: number) => fake.enqueue(...Array.from({ length: n }, () => callTools({ name: 'echo', input: { text: 'again' } })));
  /** How many tool rounds ran before the prompt stopped. */
  const stepsRun = (conversation: { entries(): readonly { type: string }[] }) => conversation.entries().filter((e) => e.type === 'tool_results').length;

  it('maxSteps bounds the tool rounds of a prompt, with MaxStepsExceededError (also a MaxTurnsExceededError)', async () => {
    const conversation = await (await init({ contextWindowTokens: 100_000, tools: [echo], maxSteps: 2 })).session();
    loop(3);
    const err = await conversation.prompt('loop').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MaxStepsExceededError);
    expect(err).toBeInstanceOf(MaxTurnsExceededError);
    expect(err).toMatchObject({ code: 'MAX_TURNS_EXCEEDED', maxTurns: 2, maxSteps: 2 });
    expect((err as Error).message).toContain('maxSteps (2)');
  });

  it("a session's limit (either name) wins over the agent's, and a prompt's over both", async () => {
    const harness = await init({ contextWindowTokens: 100_000, tools: [echo], maxTurns: 5 });
    const one = await harness.session({ maxSteps: 1 });
    loop(2);
    await expect(one.prompt('loop')).rejects.toMatchObject({ maxSteps: 1 });
    const three = await harness.session({ id: 'three', maxTurns: 3 });
    loop(4);
    await expect(three.prompt('loop')).rejects.toMatchObject({ maxSteps: 3 });
    const perPrompt = await harness.session({ id: 'per-prompt', maxSteps: 4 });
    loop(2);
    await expect(perPrompt.prompt('loop', { maxSteps: 1 })).rejects.toMatchObject({ maxSteps: 1 });
    // Under its own limit the session goes on: two steps, then the reply.
    fake.enqueue(...[1, 2].map(() => callTools({ name: 'echo', input: { text: 'again' } })), say('done'));
    await expect(perPrompt.prompt('twice')).resolves.toBe('done');
    expect(stepsRun(perPrompt)).toBe(2);
  });

  it('entries() and messages() are the same chain; Session is Conversation; a harness lists its conversations', async () => {
    const harness = await init({ contextWindowTokens: 100_000 });
    const conversation = await harness.session();
    const second = await harness.session();
    expect(harness.conversations()).toEqual([conversation, second]);
    expect(harness.sessions()).toEqual(harness.conversations());
    fake.enqueue(say('hi'));
    await conversation.prompt('hello');
    expect(conversation).toBeInstanceOf(Conversation);
    expect(Session).toBe(Conversation);
    expect(conversation.entries().map((e) => e.type)).toEqual(['user', 'assistant']);
    expect(conversation.messages()).toBe(conversation.entries());
  });

  it('keeps the wire names: the conversations query is still fh.sessions', () => {
    expect(client.AGENT_QUERIES.conversations).toBe('fh.sessions');
    expect(client.AGENT_QUERIES.sessions).toBe('fh.sessions');
    expect(client.AGENT_QUERIES.messages).toBe('fh.messages');
  });

  it('the history tools are the same functions from /audit and (deprecated) /client', () => {
    expect(client.replayHistory).toBe(audit.replayHistory);
    expect(client.auditTranscript).toBe(audit.auditTranscript);
    expect(client.loadHistory).toBe(audit.loadHistory);
    expect(client.stateFromHistory).toBe(audit.stateFromHistory);
  });
});
