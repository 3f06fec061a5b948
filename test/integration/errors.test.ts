import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ApplicationFailure, WorkflowFailedError, type Client } from '@temporalio/client';
import { startAgent } from '@fabric-harness/sdk/client';
import { FakeAnthropicServer, callTools, fail, say } from '@fabric-harness/sdk/testing';
import { InvalidInputError, MissingApiKeyError } from '@fabric-harness/sdk';
import { calculator } from '../fixtures/agents';
import { startTestWorker, type TestWorker } from '../support/test-worker';

/**
 * The ApplicationFailure at the top of a failed workflow: our typed errors are the workflow's failure
 * itself (not buried under an ActivityFailure), so `fh run` and clients read the code at once.
 */
async function rootFailure(p: Promise<unknown>): Promise<ApplicationFailure> {
  const err = await p.then(
    () => {
      throw new Error('expected the workflow to fail');
    },
    (e) => e,
  );
  expect(err).toBeInstanceOf(WorkflowFailedError);
  const cause = (err as WorkflowFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  return cause as ApplicationFailure;
}

describe('errors and retries', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;
  let keyless: TestWorker;
  let client: Client;
  let taskQueue: string;
  let dir: string;
  let n = 0;
  const wid = () => `errors-${Date.now()}-${n++}`;

  beforeAll(async () => {
    fake = await FakeAnthropicServer.start();
    w = await startTestWorker({ name: 'errors', baseURL: fake.url });
    keyless = await startTestWorker({ name: 'errors-keyless', baseURL: fake.url, apiKey: null });
    client = w.client;
    taskQueue = w.taskQueue;
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-errors-'));
  });

  afterAll(async () => {
    await w?.stop();
    await keyless?.stop();
    await fake?.stop();
  });

  const run = async (input: unknown, agent: any = calculator, queue = taskQueue) =>
    (await startAgent(client, agent, input as any, { workflowId: wid(), taskQueue: queue })).result();

  it('retries a 529 through Temporal and completes', async () => {
    fake.enqueue(fail(529), say('fine now'));
    const workflowId = wid();
    const result = await (await startAgent(client, calculator, { task: 'hi', dir }, { workflowId, taskQueue })).result();
    expect(result.reply).toBe('fine now');
    const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events!;
    const started = events.filter((e) => e.activityTaskStartedEventAttributes);
    const modelStarted = started.at(-1)!.activityTaskStartedEventAttributes!;
    expect(modelStarted.attempt).toBe(2);
    expect(modelStarted.lastFailure?.applicationFailureInfo?.type).toBe('MODEL_OVERLOADED');
  });

  // Temporal's default backoff before attempt 2 is 1 s (initialInterval). Each case waits well past
  // that and is bounded on both sides, at millisecond precision: ignoring the header (1 s) fails the
  // lower bound; misreading it (e.g. ms as s) fails the upper bound or times out.
  const SLACK_MS = 1500; // attempt 1 itself, and the worker picking up attempt 2
  it.each([
    ['retry-after-ms: 2500', fail(429, { retryAfterMs: 2500 }), 2500],
    ['retry-after: 3 (seconds)', fail(529, { retryAfterSeconds: 3 }), 3000],
  ])("honours %s as the next retry delay, exactly", async (_name, step, expectedMs) => {
    fake.enqueue(step, say('after the wait'));
    const workflowId = wid();
    await (await startAgent(client, calculator, { task: 'hi', dir }, { workflowId, taskQueue })).result();
    const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events!;
    const scheduled = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'fhModel').at(-1)!;
    const started = events.find((e) => e.activityTaskStartedEventAttributes?.scheduledEventId?.toString() === scheduled.eventId!.toString())!;
    const ms = (t: { seconds?: unknown; nanos?: number | null }) => Number(t.seconds) * 1000 + (t.nanos ?? 0) / 1e6;
    const waitedMs = ms(started.eventTime!) - ms(scheduled.eventTime!);
    expect(started.activityTaskStartedEventAttributes!.attempt).toBe(2);
    expect(waitedMs).toBeGreaterThanOrEqual(expectedMs);
    expect(waitedMs).toBeLessThan(expectedMs + SLACK_MS);
  });

  it('fails the run with a clear error on 401', async () => {
    fake.enqueue(fail(401, { message: 'invalid x-api-key' }));
    const failure = await rootFailure(run({ task: 'hi', dir }));
    expect(failure.type).toBe('MODEL_AUTHENTICATION');
    expect(failure.message).toContain('401');
    expect(failure.nonRetryable).toBe(true);
  });

  it('fails with MISSING_API_KEY when the worker has no key', async () => {
    const saved = process.env.ANTHROPIC_API_KEY;
    delete process.env.ANTHROPIC_API_KEY;
    try {
      const failure = await rootFailure(run({ task: 'hi', dir }, calculator, keyless.taskQueue));
      expect(failure.type).toBe('MISSING_API_KEY');
      expect(failure.message).toContain('ANTHROPIC_API_KEY');
      await expect(calculator.invoke({ task: 'hi', dir }, { baseURL: fake.url })).rejects.toBeInstanceOf(MissingApiKeyError);
    } finally {
      if (saved !== undefined) process.env.ANTHROPIC_API_KEY = saved;
    }
  });

  it('names the unknown agent and the registered ones, as a workflow task failure (the run stays open for a worker that has it)', async () => {
    const handle = await client.workflow.start('no-such-agent', { taskQueue, workflowId: wid(), args: [{}] });
    let failure: { message?: string | null } | undefined;
    for (let i = 0; i < 100 && !failure; i++) {
      failure = ((await handle.fetchHistory()).events ?? []).map((e) => e.workflowTaskFailedEventAttributes?.failure ?? undefined).find(Boolean);
      if (!failure) await new Promise((r) => setTimeout(r, 200));
    }
    expect((failure as { stackTrace?: string } | undefined)?.stackTrace).toContain('UnknownAgentError:');
    expect(failure?.message).toContain("Unknown agent 'no-such-agent'");
    expect(failure?.message).toContain('calculator');
    expect(failure?.message).toContain(`task queue '${taskQueue}'`);
    expect((await handle.describe()).status.name).toBe('RUNNING');
    await handle.terminate('test done');
  });

  it('rejects input that fails the schema, naming the field, before starting (definition) or in the workflow (name)', async () => {
    await expect(startAgent(client, calculator, { task: 5, dir } as any, { workflowId: wid(), taskQueue })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      field: 'task',
    });
    await expect(startAgent(client, calculator, { task: 5, dir } as any, { workflowId: wid(), taskQueue })).rejects.toBeInstanceOf(
      InvalidInputError,
    );
    const failure = await rootFailure(run({ task: 5, dir }, 'calculator'));
    expect(failure.type).toBe('INVALID_INPUT');
    expect(failure.message).toMatch(/task/);
  });

  it('sends an invented tool and invalid tool input back to the model as error results', async () => {
    fake.enqueue(
      callTools({ name: 'teleport', input: {} }),
      callTools({ name: 'add', input: { a: 'two', b: 3 } }),
      say('corrected'),
    );
    const before = fake.messageRequests().length;
    const result = (await run({ task: 'hi', dir })) as { reply: string };
    expect(result.reply).toBe('corrected');
    const sent = fake.messageRequests().slice(before).map((r) => r.body.messages);
    const unknownResult = sent[1].at(-1).content[0];
    expect(unknownResult).toMatchObject({ type: 'tool_result', is_error: true });
    expect(unknownResult.content).toContain("Unknown tool 'teleport'");
    expect(unknownResult.content).toContain('add');
    const invalidResult = sent[2].at(-1).content[0];
    expect(invalidResult).toMatchObject({ type: 'tool_result', is_error: true });
    expect(invalidResult.content).toMatch(/Invalid input for tool 'add': a:/);
  });
});
