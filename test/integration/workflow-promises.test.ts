/**
 * Promises workflow code makes per model call. Temporal's workflow sandbox captures a stack trace, mapped
 * through the bundle's source map, for every promise workflow code makes (for its stack trace query), on
 * every run and again on every replay: it was most of what our workflow code cost per call. Counted, not
 * timed: a run of the grower (a model call and a tool call per step) is replayed in debug mode, so its
 * workflow code runs on this thread, under a promise hook; two lengths, so what a run makes once (start,
 * the session, the prelude) cancels out.
 */
import { promiseHooks } from 'node:v8';
import { Worker } from '@temporalio/worker';
import { startAgent } from '@fabric-harness/sdk/client';
import { FabricHarnessPlugin, FileTranscriptStore } from '@fabric-harness/sdk/worker';
import { FakeAnthropicServer } from '@fabric-harness/sdk/testing';
import { growerCompacting } from '../fixtures/agents';
import { testBundle } from '../support/bundle';
import { growerRoute } from '../support/grower-route';
import { startTestWorker, type TestWorker } from '../support/test-worker';

const SHORT = 5;
const LONG = 25;
/**
 * Measured 6 per added call, as many as a bare workflow with two no-op activities per call makes: 4 are
 * Temporal's own (two scheduled activities), and one await each of the model call and the tool call
 * (every layer between composes into a Pending, src/core/pending.ts). 0.6.1 made 22 (async wrappers,
 * an await per layer, Promise.allSettled for one call), 0.6.2 11 (a `then` per layer).
 */
const PROMISES_PER_CALL = 6;

/** A promise made in a workflow's context: its realm's global holds Temporal's activator. */
function inWorkflow(p: Promise<unknown>): boolean {
  try {
    return (p.constructor as FunctionConstructor).constructor('return globalThis.__TEMPORAL_ACTIVATOR__')() !== undefined;
  } catch {
    return false;
  }
}

describe('promises workflow code makes per model call', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;

  beforeAll(async () => {
    fake = await FakeAnthropicServer.start({ route: growerRoute, contextWindow: 10_000_000 });
    w = await startTestWorker({ name: 'workflow-promises', baseURL: fake.url });
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  async function promisesOfRun(calls: number): Promise<number> {
    const workflowId = `promises-${calls}-${Date.now()}`;
    const handle = await startAgent(w.client, growerCompacting, { calls }, { workflowId, taskQueue: w.taskQueue });
    expect((await handle.result()).usage.modelCalls).toBe(calls);
    const history = await handle.fetchHistory();
    const options = { workflowBundle: await testBundle(), debugMode: true, plugins: [new FabricHarnessPlugin({ store: new FileTranscriptStore(w.storeDir) })] };
    let made = 0;
    const stop = promiseHooks.onInit((p) => {
      if (inWorkflow(p)) made++;
    });
    try {
      await Worker.runReplayHistory(options, history, workflowId);
    } finally {
      stop();
    }
    return made;
  }

  it(`at most ${PROMISES_PER_CALL} per model call and its tool call`, async () => {
    const short = await promisesOfRun(SHORT);
    const long = await promisesOfRun(LONG);
    const perCall = (long - short) / (LONG - SHORT);
    console.log(`workflow promises: ${short} in ${SHORT} calls, ${long} in ${LONG}: ${perCall.toFixed(2)} per added call`);
    expect(short).toBeGreaterThan(0);
    expect(perCall).toBeLessThanOrEqual(PROMISES_PER_CALL);
  });
});
