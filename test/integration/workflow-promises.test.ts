/**
 * What workflow code makes per model call. Promises: Temporal's workflow sandbox captures a stack trace,
 * mapped through the bundle's source map, for every promise workflow code makes (for its stack trace
 * query), on every run and again on every replay: it was most of what our workflow code cost per call.
 * Counted, not timed: a run of the grower (a model call and a tool call per step) is replayed in debug
 * mode, so its workflow code runs on this thread, under a promise hook; two lengths, so what a run makes
 * once (start, the session, the prelude) cancels out. The same per turn of a session (a prompt's update,
 * its turn and its reply), replayed from the end of a run (continue-as-new is not in the count). Sink
 * calls: none for events on replay.
 */
import { promiseHooks } from 'node:v8';
import { Worker } from '@temporalio/worker';
import { startAgent, startSession } from '@fabric-harness/sdk/client';
import { FabricHarnessPlugin, FileTranscriptStore } from '@fabric-harness/sdk/worker';
import { FakeAnthropicServer, say } from '@fabric-harness/sdk/testing';
import { growerCompacting } from '../fixtures/agents';
import { assistant } from '../fixtures/session-agents';
import { isTitleRequest } from '../support/session-fake';
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
/**
 * Measured 51 per added turn of a session answering in text: 22 in Temporal's own code (the prompt's
 * update 6, the turn's cancellation scope 5, the model call's activity 2, three conditions 3 each), 12
 * with no frame of workflow code on the stack (V8's own, as it resolves a promise with another), and 17
 * in the session's queue and turn and the conversation's prompt around its one model call. 58 before a
 * prompt's way into the queue made no promise when there is no archive to ask, and the turn stopped
 * watching its outcome with a `then`.
 */
const PROMISES_PER_TURN = 51;

/** A promise made in a workflow's context: its realm's global holds Temporal's activator. */
function inWorkflow(p: Promise<unknown>): boolean {
  try {
    return (p.constructor as FunctionConstructor).constructor('return globalThis.__TEMPORAL_ACTIVATOR__')() !== undefined;
  } catch {
    return false;
  }
}

describe('what workflow code makes per model call', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;

  beforeAll(async () => {
    // The grower's steps, and a session's turns (its title request included) answered in text.
    fake = await FakeAnthropicServer.start({
      route: (req) => growerRoute(req) ?? (isTitleRequest(req) || req.path === '/v1/messages' ? say('Noted.') : undefined),
      contextWindow: 10_000_000,
    });
    w = await startTestWorker({ name: 'workflow-promises', baseURL: fake.url });
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  async function run(calls: number, name: string) {
    const workflowId = `${name}-${calls}-${Date.now()}`;
    const handle = await startAgent(w.client, growerCompacting, { calls }, { workflowId, taskQueue: w.taskQueue });
    expect((await handle.result()).usage.modelCalls).toBe(calls);
    return { workflowId, history: await handle.fetchHistory(), options: await replayOptions() };
  }

  /** Replays in debug mode (workflow code on this thread, under the promise hook), with this worker's store. */
  async function replayOptions() {
    return { workflowBundle: await testBundle(), debugMode: true, plugins: [new FabricHarnessPlugin({ store: new FileTranscriptStore(w.storeDir) })] };
  }

  /** Promises workflow code makes while `workflowId`'s history replays. */
  async function promisesOfReplay(workflowId: string, history: Awaited<ReturnType<typeof run>>['history']): Promise<number> {
    const options = await replayOptions();
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

  async function promisesOfRun(calls: number): Promise<number> {
    const { workflowId, history } = await run(calls, 'promises');
    return promisesOfReplay(workflowId, history);
  }

  it(`at most ${PROMISES_PER_CALL} per model call and its tool call`, async () => {
    const short = await promisesOfRun(SHORT);
    const long = await promisesOfRun(LONG);
    const perCall = (long - short) / (LONG - SHORT);
    console.log(`workflow promises: ${short} in ${SHORT} calls, ${long} in ${LONG}: ${perCall.toFixed(2)} per added call`);
    expect(short).toBeGreaterThan(0);
    expect(perCall).toBeLessThanOrEqual(PROMISES_PER_CALL);
  });

  /** Promises a session's replay makes in workflow code, after `turns` prompts each answered in text. */
  async function promisesOfSession(turns: number): Promise<number> {
    const workflowId = `promises-session-${turns}-${Date.now()}`;
    const session = await startSession(w.client, assistant, { id: workflowId, taskQueue: w.taskQueue });
    for (let i = 0; i < turns; i++) expect(await session.prompt(`turn ${i + 1}`)).toBe('Noted.');
    return promisesOfReplay(workflowId, await w.client.workflow.getHandle(workflowId).fetchHistory());
  }

  it(`at most ${PROMISES_PER_TURN} per turn of a session`, async () => {
    const short = await promisesOfSession(SHORT);
    const long = await promisesOfSession(LONG);
    const perTurn = (long - short) / (LONG - SHORT);
    console.log(`session workflow promises: ${short} in ${SHORT} turns, ${long} in ${LONG}: ${perTurn.toFixed(2)} per added turn`);
    expect(short).toBeGreaterThan(0);
    expect(perTurn).toBeLessThanOrEqual(PROMISES_PER_TURN);
  });

  /**
   * The sink calls the worker is handed (Temporal's own path: every call a workflow makes to a sink is
   * cloned with the run's info on the workflow thread and sent to the main one, which then drops those
   * made while history replays). Counted by name, on this process's workers, while `during` runs.
   */
  async function sinkCallsDuring(during: () => Promise<unknown>): Promise<Map<string, number>> {
    type SinkCall = { ifaceName: string; fnName: string };
    const proto = Worker.prototype as unknown as { processSinkCalls(calls: SinkCall[], ...rest: unknown[]): Promise<void> };
    const original = proto.processSinkCalls;
    const counts = new Map<string, number>();
    proto.processSinkCalls = function (this: unknown, calls: SinkCall[], ...rest: unknown[]) {
      for (const c of calls) counts.set(`${c.ifaceName}.${c.fnName}`, (counts.get(`${c.ifaceName}.${c.fnName}`) ?? 0) + 1);
      return original.call(this, calls, ...rest);
    };
    try {
      await during();
    } finally {
      proto.processSinkCalls = original;
    }
    return counts;
  }

  it('a replay makes no event sink calls; the live run makes one an event', async () => {
    let replay: Awaited<ReturnType<typeof run>> | undefined;
    const live = await sinkCallsDuring(async () => (replay = await run(SHORT, 'sinks')));
    // A model call, a tool call and a tool result each step (the last step answers with text, no tool).
    expect(live.get('fabric.event')).toBeGreaterThanOrEqual(SHORT);
    const replayed = await sinkCallsDuring(() => Worker.runReplayHistory(replay!.options, replay!.history, replay!.workflowId));
    expect(replayed.get('fabric.event') ?? 0).toBe(0);
  });
});
