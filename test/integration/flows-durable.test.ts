/**
 * A flow through what happens to long runs, on a dev server of its own (so it can be restarted) with
 * workers in child processes (so one can be SIGKILLed): five stages, a fan-out of three branches (one
 * fails), a 300 KB command output offloaded and read back by an agent, a worker killed during a
 * branch, the server restarted while a human gate waits, the gate answered by a client. The run
 * completes with the right context, each branch's copy isolated, and each update once in history.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { FabricHarnessPlugin, FileTranscriptStore } from '@fabric-harness/sdk/worker';
import { FakeAnthropicServer, callTools, say } from '@fabric-harness/sdk/testing';
import { getFlowHandle, startFlow } from '../../src/client/flows';
import { parseArtifactPointer } from '../../src/core/flows/context';
import { ToolResultStore } from '../../src/activities/stores/tool-results';
import { getFreePort, startDevServer, type DevServer } from '../../src/testing/temporal-cli';
import { killHard, startWorkerProcess } from '../support/worker-process-control';
import { rejection, until } from '../support/waiting';

const RELEASE = `digraph Release {
  graph [goal="Release 1.2"]
  start     [shape=Mdiamond]
  prepare   [label="Prepare", script="yes xxxxxxxxx | head -c 300000; echo"]
  checks    [shape=component, label="Checks", max_parallel=3]
  lint      [label="Lint", script="echo lint-ok"]
  unit      [label="Unit", script="mktemp -p . started-unit-XXXXXX >/dev/null; until [ -e release-unit ]; do sleep 0.1; done; echo unit-ok"]
  e2e       [label="E2E", script="echo e2e-broke >&2; exit 4"]
  join      [shape=tripleoctagon]
  summarize [label="Summarize", prompt="Summarize the checks."]
  review    [shape=hexagon, label="Release?"]
  ship      [label="Ship", script="echo shipped"]
  exit      [shape=Msquare]
  start -> prepare -> checks
  checks -> lint
  checks -> unit
  checks -> e2e
  lint -> join
  unit -> join
  e2e -> join
  join -> summarize -> review
  review -> ship [label="[A] Approve"]
  review -> exit [label="[S] Stop"]
  ship -> exit
}`;

describe('a flow survives a killed worker and a restarted server', () => {
  let server: DevServer | undefined;
  let fake: FakeAnthropicServer;
  const children: ChildProcess[] = [];
  const connections: Connection[] = [];

  beforeAll(async () => {
    fake = await FakeAnthropicServer.start();
  });
  afterAll(async () => {
    await Promise.all(children.map(killHard));
    await Promise.all(connections.map((c) => c.close().catch(() => undefined)));
    await server?.stop();
    await fake?.stop();
  });

  it('runs to the end with the right context, isolated branches and each update once', async () => {
    const db = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'fh-flow-db-')), 'temporal.db');
    const port = await getFreePort();
    server = await startDevServer({ port, dbFilename: db });
    const storeDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-flow-store-'));
    const workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-flow-work-'));
    const taskQueue = `flows-durable-${process.pid}`;
    const worker = () =>
      startWorkerProcess({ address: server!.address, taskQueue, fakeUrl: fake.url, storeDir }).then((c) => (children.push(c), c));
    const clientFor = async () => {
      const connection = await Connection.connect({ address: server!.address });
      connections.push(connection);
      return new Client({ connection, namespace: 'default', plugins: [new FabricHarnessPlugin({ store: new FileTranscriptStore(storeDir) })] });
    };

    const first = await worker();
    const client = await clientFor();
    const h = await startFlow(client, RELEASE, { workDir, taskQueue, workflowId: `release-${process.pid}` });

    // The 300 KB output is in the store; the context holds its pointer.
    const prepared = await until('prepare', async () => {
      const s = await h.state();
      return parseArtifactPointer(s.context['command.output']);
    });
    expect(prepared.bytes).toBe(300_001); // its UTF-8 size
    const stored = await new ToolResultStore(new FileTranscriptStore(storeDir)).read(prepared.ref);
    expect(stored).toHaveLength(300_001);
    // The summarize agent reads it back with the artifact reader.
    fake.enqueue(callTools({ name: 'read_artifact', input: { ref: prepared.ref, offset: 0, maxChars: 50 } }), say('All checks but e2e passed.'));

    // Kill the worker while the unit branch's command runs; a new worker picks the branch up. The command
    // waits for the test to release it (a timed window, as `sleep 4` was, can close before the kill on a
    // loaded machine: the kill then lands in a later stage, or misses the command).
    await until('the unit branch to start', async () => (await fs.readdir(workDir)).some((f) => f.startsWith('started-unit-')));
    expect((await rejection(h.gate('A'))).code).toBe('FLOW_NOT_WAITING');
    await killHard(first);
    const second = await worker();
    await fs.writeFile(path.join(workDir, 'release-unit'), '');

    // Restart the server while the gate waits.
    // Generous: the killed attempt waits out its heartbeat timeout and a new worker process starts; on a
    // loaded 2-core machine that has taken over two minutes. On a timeout, the last state says where it stood.
    let lastState: unknown;
    const waiting = await until('the gate', async () => {
      const s = await h.state();
      lastState = { status: s.status, currentNode: s.currentNode, nodeStates: s.nodeStates, events: s.events.slice(-6) };
      return s.status === 'waiting' ? s : undefined;
    }, 240_000).catch((err: unknown) => {
      console.log(`[flows-durable] the flow did not reach the gate; last state: ${JSON.stringify(lastState)}`);
      throw err;
    });
    expect(waiting.waitingGate!.node).toBe('review');
    await killHard(second);
    await server.stop();
    server = await startDevServer({ port, dbFilename: db });
    await worker();
    const after = getFlowHandle(await clientFor(), h.workflowId);
    const still = await until('the gate after the restart', async () => ((await after.state()).status === 'waiting' ? after.state() : undefined), 60_000);
    expect(still.currentNode).toBe('review');
    expect(await after.gate('A')).toEqual({ gate: 'review', selected: 'A', label: '[A] Approve' });
    const result = await after.result();

    const ctx = result.context;
    expect(result.exit).toBe('exit');
    expect(ctx).toMatchObject({
      'parallel.fan_in.best_id': 'lint',
      'parallel.fan_in.best_outcome': 'success',
      'human.gate.selected': 'A',
      'response.summarize': 'All checks but e2e passed.',
      'command.output': 'shipped\n',
      outcome: 'success',
    });
    // Each branch's copy: its own output, nothing of the others', nothing leaked into the parent.
    const results = ctx['parallel.fan_in.results'] as Array<{ id: string; outcome: string; updates: Record<string, unknown> }>;
    expect(results.map((r) => [r.id, r.outcome])).toEqual([['lint', 'success'], ['unit', 'success'], ['e2e', 'fail']]);
    expect(results.map((r) => r.updates['command.output'])).toEqual(['lint-ok\n', 'unit-ok\n', '']);
    expect(results[2]!.updates['command.stderr']).toBe('e2e-broke\n');
    for (const r of results) expect(JSON.stringify(r.updates)).not.toMatch(new RegExp(results.filter((o) => o.id !== r.id).map((o) => `${o.id}-ok`).join('|')));
    expect(ctx.last_stage).toBe('summarize'); // no branch's last_stage in the parent
    // e2e's failure keys stayed in e2e's copy: the parent never failed a stage.
    expect(ctx).not.toHaveProperty('failure_class');
    expect(ctx).not.toHaveProperty('failure_signature');
    // The unit command ran twice (the first attempt's worker was killed); the flow moved on once.
    expect((await fs.readdir(workDir)).filter((f) => f.startsWith('started-unit-')).length).toBe(2);

    // The agent read the stored output back.
    const toolResult = JSON.stringify(fake.messageRequests().at(-1)!.body.messages);
    expect(toolResult).toContain('xxxxxxxxx\\nxxxxxxxxx');
    const summarizePrompt = JSON.stringify(fake.messageRequests().at(-2)!.body.messages);
    expect(summarizePrompt).toContain(`[stored artifact ${prepared.ref}`);

    // Each stage's updates are in history once, under the stage that made them.
    const history = await after.workflow.fetchHistory();
    const commits = history.events!
      .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'fhFlowCommit')
      .map((e) => defaultPayloadConverter.fromPayload(e.activityTaskScheduledEventAttributes!.input!.payloads![0]!) as { node: string; visit: number; updates: Record<string, unknown> });
    expect(commits.map((c) => c.node)).toEqual(['start', 'prepare', 'checks', 'join', 'summarize', 'review', 'ship', 'exit']);
    expect(commits.filter((c) => 'parallel.fan_in.best_id' in c.updates).map((c) => c.node)).toEqual(['join']);
    expect(commits.filter((c) => c.updates['human.gate.selected'] === 'A').map((c) => c.node)).toEqual(['review']);
    expect(commits.filter((c) => 'response.summarize' in c.updates).map((c) => c.node)).toEqual(['summarize']);
    expect(history.events!.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes)).toHaveLength(1);
    const branchStarts = history.events!.filter((e) => e.startChildWorkflowExecutionInitiatedEventAttributes);
    expect(branchStarts.map((e) => e.startChildWorkflowExecutionInitiatedEventAttributes!.workflowId)).toEqual(['lint', 'unit', 'e2e'].map((b) => `${h.workflowId}/${b}-1`));
    // History stays small: the 300 KB output is a pointer in it.
    const bytes = temporal.api.history.v1.History.encode(history).finish().length;
    expect(bytes).toBeLessThan(100_000);
    console.log(`[flows-durable] main history: ${history.events!.length} events, ${bytes} bytes`);
  }, 420_000);
});
