/**
 * Workflow history grows linearly with the conversation, not quadratically: the model activity gets a
 * transcript reference and the entries added since its last call, never the whole conversation.
 *
 * 300 model calls, each adding a ~2 KB tool result. Sending the whole conversation every call would put
 * ~90 MB of activity inputs in history (over Temporal's 50 MB limit); each call adds a bounded number
 * of bytes (PER_CALL_BUDGET), the same late in the run as early.
 */
import { temporal } from '@temporalio/proto';
import { startAgent } from '@fabric-harness/sdk/client';
import { FakeAnthropicServer } from '@fabric-harness/sdk/testing';
import { growerRoute } from '../support/grower-route';
import { GROW_TEXT_CHARS, growText, grower } from '../fixtures/agents';
import { startTestWorker, type TestWorker } from '../support/test-worker';

const CALLS = 300;

/**
 * History bytes one model call may add. Each call puts in history the grow tool's result exactly once
 * (GROW_TEXT_CHARS, in the fhTool completion; the model activity gets it by reference) plus a fixed
 * overhead: one workflow task (scheduled/started/completed) and two activities (scheduled/started/
 * completed, with the delta reference, the assistant entry and usage). Measured: 4,798 B per call, i.e.
 * 2,750 B of overhead. Budget: 3,000 B of overhead (9% margin on it, 5% on the total). A second copy of
 * the tool result (+2 KB a call, as before tool results went by reference: 1.99 MB / 300 = 6.6 KB) or
 * any per-call cost that grows with the conversation fails it.
 */
const OVERHEAD_BUDGET_PER_CALL = 3_000;
const PER_CALL_BUDGET = GROW_TEXT_CHARS + OVERHEAD_BUDGET_PER_CALL;

function encodedBytes(message: temporal.api.common.v1.IPayload): number {
  return temporal.api.common.v1.Payload.encode(message).finish().length;
}

describe('workflow history of a long conversation', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;

  beforeAll(async () => {
    fake = await FakeAnthropicServer.start({ route: growerRoute, contextWindow: 10_000_000 });
    w = await startTestWorker({ name: 'history-growth', baseURL: fake.url });
  });

  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  it('the grow tool returns ~2 KB of deterministic prose', () => {
    expect(growText(7)).toBe(growText(7));
    expect(growText(7)).not.toBe(growText(8));
    expect(growText(7)).toHaveLength(GROW_TEXT_CHARS);
    expect(growText(7)).toMatch(/^Step 7\. [a-z]+ [a-z]+/);
  });

  it(`${CALLS} model calls cost a fixed history budget per call, each model input a small delta`, async () => {
    const workflowId = `grower-${Date.now()}`;
    const started = Date.now();
    const handle = await startAgent(w.client, grower, { calls: CALLS }, { workflowId, taskQueue: w.taskQueue });
    const result = await handle.result();
    const seconds = (Date.now() - started) / 1000;
    expect(result.reply).toBe('done');
    expect(result.usage.modelCalls).toBe(CALLS);

    const history = await handle.fetchHistory();
    const historyBytes = temporal.api.history.v1.History.encode(history).finish().length;
    const scheduled = history.events!.flatMap((e) => (e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes] : []));
    const model = scheduled.filter((a) => a.activityType!.name === 'fhModel');
    const scheduledEvents = history.events!.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'fhModel');
    expect(model).toHaveLength(CALLS);
    expect(scheduled.filter((a) => a.activityType!.name === 'fhTool')).toHaveLength(CALLS - 1);

    // The model really saw the whole conversation: the last request carried every tool result.
    const last = fake.messageRequests().at(-1)!.body;
    expect(last.messages).toHaveLength(2 * CALLS - 1);
    expect(last.messages.at(-1).content[0].content).toBe(growText(CALLS - 1));

    const inputBytes = model.map((a) => (a.input?.payloads ?? []).reduce((n, p) => n + encodedBytes(p), 0));
    const largestInput = Math.max(...inputBytes);
    const conversationBytes = Buffer.byteLength(JSON.stringify(last.messages));
    process.stderr.write(
      `[history-growth] ${CALLS} model calls in ${seconds.toFixed(1)} s: history ${(historyBytes / 1e6).toFixed(2)} MB ` +
        `(${history.events!.length} events); conversation ${(conversationBytes / 1e6).toFixed(2)} MB; ` +
        `largest fhModel input ${largestInput} B\n`,
    );
    expect(conversationBytes).toBeGreaterThan(CALLS * GROW_TEXT_CHARS); // the conversation really grew
    // Per call, against the explicit budget; and the second half of the run costs what the first did.
    const perCall = historyBytes / CALLS;
    process.stderr.write(`[history-growth] ${perCall.toFixed(0)} B of history per model call (budget ${PER_CALL_BUDGET} B)\n`);
    expect(perCall).toBeLessThanOrEqual(PER_CALL_BUDGET);
    const half = history.events!.findIndex((e) => e === scheduledEvents[CALLS / 2]);
    const eventBytes = (es: typeof history.events) => es!.reduce((n, e) => n + temporal.api.history.v1.HistoryEvent.encode(e).finish().length, 0);
    const firstHalf = eventBytes(history.events!.slice(0, half));
    const secondHalf = eventBytes(history.events!.slice(half));
    expect(secondHalf).toBeLessThan(firstHalf * 1.05); // linear: a growing per-call cost would show here
    expect(largestInput).toBeLessThan(20_000);
    // The last input is a delta — one tool result, by reference to what the tool activity stored — not
    // the ~600 KB conversation, nor even the 2 KB result again.
    expect(inputBytes.at(-1)!).toBeLessThan(1_000);
  }, 300_000);
});
