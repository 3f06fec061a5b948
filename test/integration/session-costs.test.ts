/**
 * What a session costs, on the dev server with the Anthropic fake: two turns' cost is the fake's reported
 * usage, token class by token class, at the model table's prices; `fh session show` prints it; a budget
 * refuses the call that could pass it (BUDGET_EXCEEDED, nothing sent to the model) and raising it lets the
 * session go on.
 */
import { startSession } from '@fabric-harness/sdk/client';
import { isEvent, modelInfo, type AgentEvent } from '@fabric-harness/sdk';
import { say, type FakeAnthropicServer, type RecordedRequest } from '@fabric-harness/sdk/testing';
import { pricedAssistant } from '../fixtures/session-agents';
import { ensureBuilt, runFh } from '../support/fh-cli';
import { isTitleRequest, startSessionFake } from '../support/session-fake';
import { startTestWorker, type TestWorker } from '../support/test-worker';
import { rejection } from '../support/waiting';

const M = 1_000_000;
const isTurnCall = (r: RecordedRequest) => r.path === '/v1/messages' && !isTitleRequest(r);

describe('session costs', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;

  beforeAll(async () => {
    ensureBuilt();
    fake = await startSessionFake();
    w = await startTestWorker({ name: 'session-costs', baseURL: fake.url });
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  it("prices two turns from the fake's usage, each token class at the table's rate, and fh session show prints it", async () => {
    const s = await startSession(w.client, pricedAssistant, { taskQueue: w.taskQueue });
    const eventsBefore = w.events.length;
    fake.enqueue(say('one', { usage: { input_tokens: 1200, output_tokens: 300 } }), say('two', { usage: { input_tokens: 800, output_tokens: 500 } }));
    expect(await s.prompt('first')).toBe('one');
    expect(await s.prompt('second')).toBe('two');

    const usage = await s.usage();
    // The fake reported: the scripted input and output, a cache write on the first call, a read on the second.
    expect(usage).toMatchObject({ modelCalls: 2, inputTokens: 2000, outputTokens: 800 });
    expect(usage.cacheCreationInputTokens).toBeGreaterThan(1000);
    expect(usage.cacheReadInputTokens).toBeGreaterThan(1000);
    const p = modelInfo('claude-sonnet-5-5').prices!;
    expect(p).toMatchObject({ input: 2, output: 10, cacheRead: 0.2, cacheWrite: 2.5 });
    const expected = (2000 * p.input + 800 * p.output + usage.cacheReadInputTokens! * p.cacheRead + usage.cacheCreationInputTokens! * p.cacheWrite) / M;
    expect(usage.cost!.usd).toBeCloseTo(expected, 12);
    expect(usage.cost).toMatchObject({ unpricedCalls: 0, unpricedModels: [] });
    // Each call's cost rode on its model_call event; they add up to the session's.
    const calls = w.events.slice(eventsBefore).flatMap((e: AgentEvent) => (isEvent(e, 'model_call') ? [e.data.costUsd!] : []));
    expect(calls).toHaveLength(2);
    expect(calls[0]! + calls[1]!).toBeCloseTo(expected, 12);
    expect(usage.cost!.turnUsd).toBeCloseTo(calls[1]!, 12);

    const env = { PATH: process.env.PATH, HOME: process.env.HOME, TEMPORAL_ADDRESS: w.t.address, TEMPORAL_NAMESPACE: w.t.namespace, FH_STORE_DIR: w.storeDir, NO_COLOR: '1' };
    const shown = await runFh(['session', 'show', s.id], env);
    expect(shown.stderr).toBe('');
    const costLine = shown.stdout.split('\n').find((l) => l.startsWith('cost'));
    expect(costLine).toContain(`$${expected.toFixed(4).replace(/0+$/, '')} over 2 model calls (2000 in, 800 out, ${usage.cacheReadInputTokens} cache read, ${usage.cacheCreationInputTokens} cache write)`);
  });

  it('stops the session with BUDGET_EXCEEDED before the call that would pass its budget; raising it lets it go on', async () => {
    // Sonnet 5.5: 4096 output tokens may cost up to $0.041. The first turn spends ~$0.016; the second could pass $0.05.
    const s = await startSession(w.client, pricedAssistant, { taskQueue: w.taskQueue, settings: { budget: { maxCostUsd: 0.05 } } });
    fake.enqueue(say('one', { usage: { input_tokens: 1000, output_tokens: 1000 } }));
    expect(await s.prompt('first')).toBe('one');
    const spent = (await s.usage()).cost!.usd!;
    expect(spent).toBeGreaterThan(0.012);

    const sent = fake.requests.filter(isTurnCall).length;
    const err = await rejection(s.prompt('second'));
    expect(err.code).toBe('BUDGET_EXCEEDED');
    expect(err.message).toMatch(/could cost up to \$0\.04\d*; with \$0\.01\d* spent that would pass the session's budget of \$0\.05/);
    expect(fake.requests.filter(isTurnCall).length).toBe(sent); // refused before the call: the model never saw it
    expect((await s.usage()).cost!.usd).toBeCloseTo(spent, 12);

    // The session stays usable: with the budget raised, the message goes through.
    await s.updateSettings({ budget: { maxCostUsd: 1 } });
    fake.enqueue(say('two'));
    expect(await s.prompt('second')).toBe('two');
    expect(fake.requests.filter(isTurnCall).length).toBe(sent + 1);
    const info = await s.info();
    expect(info.settings.budget).toEqual({ maxCostUsd: 1 });
  });
});
