/**
 * A run no worker can serve, from the terminal: `fh run` of a misspelt agent is refused at start
 * (UNKNOWN_AGENT, exit 2); `fh close` on a run that no worker serves says so and points at `fh terminate`
 * (exit 1, nothing sent); `fh terminate` ends a run (exit 0) and names an unknown id (RUN_NOT_FOUND,
 * exit 3) or a run that has ended already (RUN_CLOSED, exit 1).
 */
import { FakeAnthropicServer } from '@fabric-harness/sdk/testing';
import { ensureBuilt, runFh, type Ran } from '../support/fh-cli';
import { startTestWorker, type TestWorker } from '../support/test-worker';
import { until } from '../support/waiting';

describe('fh terminate, and fh run / fh close on a run no worker serves', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;
  let env: NodeJS.ProcessEnv;
  const fh = (...args: string[]): Promise<Ran> => runFh(args, env);
  const id = (name: string) => `${name}-${process.pid}-${Date.now()}`;

  beforeAll(async () => {
    ensureBuilt();
    fake = await FakeAnthropicServer.start();
    w = await startTestWorker({ name: 'cli-terminate', baseURL: fake.url });
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TEMPORAL_')));
    env = { ...clean, TEMPORAL_ADDRESS: w.t.address, TEMPORAL_NAMESPACE: w.t.namespace, FH_STORE_DIR: w.storeDir };
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  it('fh run of an agent no worker has: UNKNOWN_AGENT at once (exit 2), naming the agents the worker has; the run is terminated', async () => {
    const workflowId = id('cli-misspelt');
    const r = await fh('run', 'calculatr', '--input', '{}', '--workflow-id', workflowId, '--task-queue', w.taskQueue);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^fh: .*'calculatr'.*calculator.*\[UNKNOWN_AGENT\]/m);
    expect((await w.client.workflow.getHandle(workflowId).describe()).status.name).toBe('TERMINATED');
  });

  it('fh close on a run whose task fails (an agent no worker has) says it is not served and names fh terminate; fh terminate ends it', async () => {
    // Started as another client (or an SDK before this check) would: the run exists, its workflow task fails.
    const workflowId = id('cli-unserved');
    await w.client.workflow.start('calculatr', { workflowId, taskQueue: w.taskQueue, args: [{}] });
    await until('the workflow task failed twice', async () => ((await w.client.workflow.getHandle(workflowId).describe()).raw.pendingWorkflowTask?.attempt ?? 0) >= 2 || undefined);

    const closed = await fh('close', workflowId);
    expect(closed.code).toBe(1);
    expect(closed.stderr).toMatch(new RegExp(`^fh: run ${workflowId} is not being served: no worker polling task queue '${w.taskQueue}' has its agent \\(its workflow task fails: Unknown agent 'calculatr'.*nothing was sent.*\`fh terminate ${workflowId}\``));
    expect((await w.client.workflow.getHandle(workflowId).fetchHistory()).events!.some((e) => e.workflowExecutionSignaledEventAttributes)).toBe(false);

    const terminated = await fh('terminate', workflowId, '--reason', 'misspelt agent');
    expect(terminated).toMatchObject({ code: 0, stdout: `${workflowId}: terminated (misspelt agent); \`fh history ${workflowId}\` shows the run\n` });
    const desc = await w.client.workflow.getHandle(workflowId).describe();
    expect(desc.status.name).toBe('TERMINATED');

    const again = await fh('terminate', workflowId);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(new RegExp(`^fh: Run '${workflowId}' has already ended \\(TERMINATED\\).*\\[RUN_CLOSED\\]`));
    const unknown = await fh('terminate', `no-such-run-${process.pid}`);
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toMatch(/^fh: No run 'no-such-run-\d+' in this namespace \[RUN_NOT_FOUND\]; list runs with `fh list`/);
  });

  it('fh close on a run whose task queue no worker polls says so (exit 1); on a served run it asks to close (exit 0)', async () => {
    const idleId = id('cli-idle');
    const idleQueue = `nobody-${process.pid}-${Date.now()}`;
    await w.client.workflow.start('calculator', { workflowId: idleId, taskQueue: idleQueue, args: [{ task: 'x', dir: '/tmp' }] });
    const closed = await fh('close', idleId);
    expect(closed.code).toBe(1);
    expect(closed.stderr).toMatch(new RegExp(`^fh: run ${idleId} is not being served: no worker polls task queue '${idleQueue}'.*\`fh terminate ${idleId}\``));
    expect((await fh('terminate', idleId, '--json')).code).toBe(0);

    const servedId = id('cli-served');
    await w.client.workflow.start('chatter', { workflowId: servedId, taskQueue: w.taskQueue, args: [{ prompts: [], serveMs: 60_000 }] });
    await until('the run serves', async () => ((await w.client.workflow.getHandle(servedId).fetchHistory()).events!.some((e) => e.workflowTaskCompletedEventAttributes) || undefined));
    const asked = await fh('close', servedId);
    expect(asked).toMatchObject({ code: 0, stdout: expect.stringContaining(`${servedId}: asked to close`) });
    expect(await w.client.workflow.getHandle(servedId).result()).toMatchObject({ served: 0 });
  });
});
