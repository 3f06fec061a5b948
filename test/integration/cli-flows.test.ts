/**
 * `fh flow` as users run it: the built binary in subprocesses, against the integration dev server and
 * an in-process test worker. Bad input is a usage error (exit 2) at once; show --json describes nodes
 * (with state), edges and the context; a gate is answered from the terminal.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { getFlowHandle } from '@fabric-harness/sdk/client';
import { FakeAnthropicServer } from '@fabric-harness/sdk/testing';
import { startTestWorker, type TestWorker } from '../support/test-worker';
import { until } from '../support/waiting';
import { ensureBuilt, FH } from '../support/fh-cli';

const ROOT = path.resolve(__dirname, '../..');
const FIXTURES = path.join(ROOT, 'test/fixtures/flows');

const GATE_FLOW = `digraph CliGate {
  start  [shape=Mdiamond]
  build  [label="Build", script="echo built"]
  review [shape=hexagon, label="Ship?"]
  ship   [label="Ship", script="echo shipped"]
  exit   [shape=Msquare]
  start -> build -> review
  review -> ship [label="[A] Approve"]
  review -> exit [label="[S] Stop"]
  ship -> exit
}`;

describe('fh flow', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;
  let tmp: string;
  let env: NodeJS.ProcessEnv;
  const fh = (...args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, [FH, ...args], { cwd: tmp, env }, (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }));
    });

  beforeAll(async () => {
    ensureBuilt();
    fake = await FakeAnthropicServer.start();
    w = await startTestWorker({ name: 'cli-flows', baseURL: fake.url });
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'fh-cli-flow-'));
    fs.writeFileSync(path.join(tmp, 'gate.dot'), GATE_FLOW);
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TEMPORAL_')));
    env = { ...clean, TEMPORAL_ADDRESS: process.env.FH_TEST_TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE: process.env.FH_TEST_TEMPORAL_NAMESPACE ?? 'default', FH_STORE_DIR: w.storeDir };
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  it('refuses a malformed DOT file, a missing node in a condition and a reserved --set key with exit 2, naming the problem', async () => {
    const malformed = await fh('flow', 'run', path.join(FIXTURES, 'malformed.dot'));
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toMatch(/line 4.*\[FLOW_DOT_SYNTAX\]/);
    const missing = await fh('flow', 'run', path.join(FIXTURES, 'missing-node-condition.dot'));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/edge plan -> exit \(line 6\).*no node 'review'.*\[FLOW_INVALID\]/);
    const reserved = await fh('flow', 'run', 'gate.dot', '--set', 'internal.run_id=mine');
    expect(reserved.code).toBe(2);
    expect(reserved.stderr).toMatch(/'internal\.run_id'.*\[FLOW_RESERVED_KEY\]/);
  });

  it('run --no-wait, show --json (nodes with state, edges, context), gate, history', async () => {
    const id = `cli-flow-${process.pid}`;
    const started = await fh('flow', 'run', 'gate.dot', '--no-wait', '--json', '-w', id, '--task-queue', w.taskQueue, '--set', 'channel=stable', '--goal', 'Ship it');
    expect(started.code).toBe(0);
    expect(JSON.parse(started.stdout)).toEqual({ workflowId: id, status: 'RUNNING' });

    const shown = await until('the gate', async () => {
      const r = await fh('flow', 'show', id, '--json');
      const v = JSON.parse(r.stdout);
      return v.status === 'waiting' ? v : undefined;
    });
    expect(shown.graph.nodes).toEqual(expect.arrayContaining([
      { id: 'build', kind: 'command', label: 'Build', state: 'success' },
      { id: 'review', kind: 'gate', label: 'Ship?', state: 'waiting' },
      { id: 'ship', kind: 'command', label: 'Ship', state: 'pending' },
    ]));
    expect(shown.graph.edges).toContainEqual({ from: 'review', to: 'ship', label: '[A] Approve' });
    expect(shown.context).toMatchObject({ channel: 'stable', 'graph.goal': 'Ship it', 'command.output': 'built\n' });
    expect(shown.waitingGate.choices.map((c: { key: string }) => c.key)).toEqual(['A', 'S']);

    const wrong = await fh('flow', 'gate', id, 'X');
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/no choice 'X'.*\[FLOW_UNKNOWN_CHOICE\]/);
    const gated = await fh('flow', 'gate', id, 'A', '--json');
    expect(gated.code).toBe(0);
    expect(JSON.parse(gated.stdout)).toEqual({ gate: 'review', selected: 'A', label: '[A] Approve' });

    const done = await until('completion', async () => {
      const v = JSON.parse((await fh('flow', 'show', id, '--json')).stdout);
      return v.status === 'completed' ? v : undefined;
    });
    expect(done.context['command.output']).toBe('shipped\n');
    // From the history: each stage's updates once, the gate's answer, in order.
    const history = await fh('flow', 'history', id);
    expect(history.stdout).toMatch(/1\. start #1 {2}\[event \d+\]\n(.*\n)*   channel = stable\n/);
    expect(history.stdout).toMatch(/2\. build #1: success {2}\[event \d+\]\n(   .*\n)*   command\.output = built\n/);
    expect(history.stdout).toMatch(/   gate answered: \{"choice":"A"\}.*\n3\. review #1: success/);
    const audit = JSON.parse((await fh('flow', 'history', id, '--json')).stdout) as Array<{ kind: string; node?: string; updates?: Record<string, unknown> }>;
    expect(audit.filter((e) => e.kind === 'stage').map((e) => e.node)).toEqual(['start', 'build', 'review', 'ship', 'exit']);
    expect(audit.filter((e) => e.updates?.['command.output'] === 'shipped\n').map((e) => e.node)).toEqual(['ship']);

    // The run has ended: a gate answer is a named refusal naming its status (not "no workflow").
    const flow = getFlowHandle(w.client, id);
    await flow.result();
    const refused = await flow.gate('A').then(() => undefined, (e: unknown) => e);
    expect(refused).toMatchObject({ code: 'FLOW_NOT_WAITING', ended: { workflowId: id, status: 'completed' } });
    expect((refused as Error).message).toBe(`Flow run '${id}' has ended (completed): it waits at no gate.`);
    const late = await fh('flow', 'gate', id, 'A');
    expect(late.code).toBe(2); // FLOW_NOT_WAITING is exit 2 (the error registry), as while the run waits elsewhere
    expect(late.stderr).toBe(`fh: Flow run '${id}' has ended (completed): it waits at no gate [FLOW_NOT_WAITING]\n`);
  });

  it('gate --branch answers a gate inside a parallel branch; show lists each waiting gate with its branch', async () => {
    fs.writeFileSync(path.join(tmp, 'branch-gates.dot'), BRANCH_GATES_FLOW);
    const id = `cli-flow-branches-${process.pid}`;
    expect((await fh('flow', 'run', 'branch-gates.dot', '--no-wait', '-w', id, '--task-queue', w.taskQueue)).code).toBe(0);
    const shown = await until('both branch gates', async () => {
      const r = await fh('flow', 'show', id);
      return (r.stdout.match(/^waiting at gate /gm) ?? []).length === 2 ? r.stdout : undefined;
    });
    expect(shown).toContain('waiting at gate ui_ok in branch ui: [A] Accept, [D] Drop');
    expect(shown).toContain('waiting at gate api_ok in branch api: [A] Accept, [D] Drop');
    const ambiguous = await fh('flow', 'gate', id, 'A');
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toMatch(/name the gate or the branch.*\[FLOW_GATE_AMBIGUOUS\]/);
    const ui = await fh('flow', 'gate', id, 'A', '--branch', 'ui', '--json');
    expect(ui.code).toBe(0);
    expect(JSON.parse(ui.stdout)).toEqual({ gate: 'ui_ok', selected: 'A', label: '[A] Accept' });
    expect((await fh('flow', 'gate', id, 'D', '--gate', 'api_ok')).stdout.trim()).toBe('api_ok: [D] Drop');
    const done = await until('completion', async () => {
      const v = JSON.parse((await fh('flow', 'show', id, '--json')).stdout);
      return v.status === 'completed' ? v : undefined;
    });
    const results = done.context['parallel.fan_in.results'] as Array<{ id: string; updates: Record<string, unknown> }>;
    expect(results.map((r) => [r.id, r.updates['human.gate.selected']])).toEqual([['ui', 'A'], ['api', 'D']]);
  });
});

const BRANCH_GATES_FLOW = `digraph BranchGates {
  start  [shape=Mdiamond]
  fan    [shape=component]
  ui     [script="echo ui"]
  ui_ok  [shape=hexagon]
  api    [script="echo api"]
  api_ok [shape=hexagon]
  join   [shape=tripleoctagon]
  exit   [shape=Msquare]
  start -> fan
  fan -> ui
  fan -> api
  ui -> ui_ok
  ui_ok -> join [label="[A] Accept"]
  ui_ok -> join [label="[D] Drop"]
  api -> api_ok
  api_ok -> join [label="[A] Accept"]
  api_ok -> join [label="[D] Drop"]
  join -> exit
}`;
