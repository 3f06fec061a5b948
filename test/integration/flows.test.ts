/**
 * Flows on the real dev server, with the scripted fake model: the seed's examples run as flows (the
 * plan -> implement -> test context keys, the preamble the implement node gets, a thread_id cluster
 * sharing one conversation, a loop bounded by node_visit_count, a conditioned route), human gates
 * answered by a client, retries, a failed run resumed, and bad input refused at once.
 */
import { promises as fs } from 'node:fs';
import { readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FakeAnthropicServer, callTools, fail, say } from '@fabric-harness/sdk/testing';
import { FlowHandle, resumeFlow, startFlow } from '../../src/client/flows';
import { dotToGraph } from '../../src/core/flows/dot';
import { FLOW_WORKFLOW, type FlowInput } from '../../src/wire/flow-messages';
import { startTestWorker, type TestWorker } from '../support/test-worker';
import { rejection, until } from '../support/waiting';

const fixture = (name: string) => readFileSync(path.join(__dirname, '../fixtures/flows', name), 'utf8');
const fid = (p: string) => `${p}-${process.pid}-${Date.now() % 1_000_000}`;
/** The text of the last user message of a recorded model request. */
const lastUserText = (body: any): string => {
  const m = body.messages.at(-1);
  return typeof m.content === 'string' ? m.content : m.content.map((b: any) => b.text ?? '').join('');
};

describe('flows on Temporal', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;
  let workDir: string;

  beforeAll(async () => {
    fake = await FakeAnthropicServer.start();
    w = await startTestWorker({ name: 'flows', baseURL: fake.url });
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });
  beforeEach(async () => {
    workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-flow-'));
  });

  it('plan -> implement -> test: each handler sets its keys, later stages see earlier updates, implement gets the preamble', async () => {
    fake.enqueue(callTools({ name: 'write_file', input: { path: 'docs/plan.md', content: '1. add the route' } }), say('Plan: add GET /health returning 200.'), say('Implemented the /health handler.'));
    const h = await startFlow(w.client, fixture('plan-implement-test.dot'), { workDir, taskQueue: w.taskQueue, workflowId: fid('pit'), context: { tests_passed: false } });
    const result = await h.result();
    expect(result.exit).toBe('exit');
    const ctx = result.context;
    expect(ctx).toMatchObject({
      'response.plan': 'Plan: add GET /health returning 200.',
      'response.implement': 'Implemented the /health handler.',
      last_stage: 'implement',
      last_response: 'Implemented the /health handler.',
      'command.output': 'running 42 tests … 41 passed, 1 failed\n',
      'command.stderr': '',
      outcome: 'success',
      current_node: 'exit',
      'graph.goal': 'Add a /health endpoint to the API server',
      'internal.run_id': h.workflowId,
      'internal.work_dir': workDir,
      tests_passed: false,
    });
    // The implement node's prompt starts with the preamble: the goal, plan's model, tokens and file, the context.
    const implementPrompt = lastUserText(fake.messageRequests().at(-1)!.body);
    expect(implementPrompt).toMatch(/^Goal: Add a \/health endpoint to the API server\n\n## Completed stages\n- \*\*plan\*\*: success\n  - Model: .+, [\d.]+k? tokens in \/ [\d.]+k? out\n  - Files: docs\/plan.md\n\n## Context\n- tests_passed: false\n\nImplement the plan\.$/);
    expect(implementPrompt).not.toContain('internal.');
    const state = await h.state();
    expect(state.stages.map((s) => `${s.node}:${s.status}`)).toEqual(['start:success', 'plan:success', 'implement:success', 'test:success', 'exit:success']);
    expect(state.stages.find((s) => s.node === 'plan')!.agent!.files).toEqual(['docs/plan.md']);
    expect(state.nodeStates).toMatchObject({ plan: 'success', implement: 'success', test: 'success' });
    expect(state.events.map((e) => e.type)).toEqual(expect.arrayContaining(['flow.stage_started', 'flow.context_updated', 'flow.stage_finished']));
  });

  it('thread_id cluster: implement sees plan\'s conversation, review sees both', async () => {
    fake.enqueue(say('PLAN-REPLY'), say('IMPLEMENT-REPLY'), say('REVIEW-REPLY'));
    const before = fake.messageRequests().length;
    const h = await startFlow(w.client, fixture('thread-cluster.dot'), { workDir, taskQueue: w.taskQueue, workflowId: fid('threads') });
    await h.result();
    const reqs = fake.messageRequests().slice(before).filter((r) => r.path === '/v1/messages').map((r) => JSON.stringify(r.body.messages));
    expect(reqs).toHaveLength(3);
    expect(reqs[1]).toContain('PLAN-REPLY');
    expect(reqs[2]).toContain('PLAN-REPLY');
    expect(reqs[2]).toContain('IMPLEMENT-REPLY');
    // `full`: no preamble on the nodes that continue the thread.
    const implementText = JSON.parse(reqs[1]!).at(-1).content;
    expect(JSON.stringify(implementText)).not.toContain('## Completed stages');
  });

  it('a loop bounded by internal.node_visit_count >= 5', async () => {
    const h = await startFlow(w.client, fixture('loop.dot'), { workDir, taskQueue: w.taskQueue, workflowId: fid('loop') });
    const result = await h.result();
    const state = await h.state();
    expect(state.stages.filter((s) => s.node === 'improve').map((s) => s.visit)).toEqual([1, 2, 3, 4, 5]);
    expect(result.context['internal.node_visit_count']).toBe(1); // the exit's own first visit
    expect(state.stages.filter((s) => s.node === 'gate')).toHaveLength(5);
  });

  it('a conditioned route: deploy when the tests passed, fix when the test stage failed', async () => {
    const pass = await startFlow(w.client, fixture('gate-route.dot'), { workDir, taskQueue: w.taskQueue, workflowId: fid('route-pass'), context: { tests_passed: true } });
    const passed = await pass.state().then(async () => (await pass.result(), pass.state()));
    expect(passed.stages.map((s) => s.node)).toEqual(['start', 'test', 'gate', 'deploy', 'exit']);

    const failing = fixture('gate-route.dot').replace('script="echo ok"', 'script="echo boom >&2; exit 3"');
    const fail = await startFlow(w.client, failing, { workDir, taskQueue: w.taskQueue, workflowId: fid('route-fail'), context: { tests_passed: true } });
    const result = await fail.result();
    const failed = await fail.state();
    expect(failed.stages.map((s) => s.node)).toEqual(['start', 'test', 'gate', 'fix', 'exit']);
    expect(failed.stages.find((s) => s.node === 'test')).toMatchObject({ status: 'fail', command: { exitCode: 3, stderr: 'boom\n' }, failure: { class: 'command_exit' } });
    expect(result.context).toMatchObject({ 'command.output': 'fixed\n', outcome: 'success', failure_class: 'command_exit' });
  });

  it('a human gate waits for a client; an unknown choice is a typed error and the gate keeps waiting', async () => {
    const dot = `digraph Gate {
      start [shape=Mdiamond]
      review [shape=hexagon, label="Ship it?"]
      ship [label="Ship", script="echo shipped"]
      rework [label="Rework", script="echo reworked"]
      exit [shape=Msquare]
      start -> review
      review -> ship [label="[A] Approve"]
      review -> rework [label="[R] Revise", freeform="true"]
      ship -> exit
      rework -> exit
    }`;
    const h = await startFlow(w.client, dot, { workDir, taskQueue: w.taskQueue, workflowId: fid('gate') });
    const waiting = await until('the gate', async () => ((await h.state()).status === 'waiting' ? h.state() : undefined));
    expect(waiting.waitingGate).toEqual({ node: 'review', choices: [{ key: 'A', label: '[A] Approve', freeform: false }, { key: 'R', label: '[R] Revise', freeform: true }] });
    const desc = await h.workflow.describe();
    expect(desc.raw.pendingActivities ?? []).toHaveLength(0); // waiting holds no worker slot

    expect(await rejection(h.gate(''))).toMatchObject({ code: 'INVALID_INPUT', field: 'choice' });
    const err = await rejection(h.gate('X'));
    expect(err).toMatchObject({ code: 'FLOW_UNKNOWN_CHOICE', choice: 'X', gate: 'review' });
    expect((await h.state()).status).toBe('waiting');

    // The flow's events are on its stream while it waits: a client following it sees the gate waiting.
    const seen: string[] = [];
    const follow = new AbortController();
    for await (const { event } of h.stream({ signal: follow.signal })) {
      if (event.type === 'custom') seen.push(event.name);
      if (event.type === 'custom' && event.name === 'flow.gate_waiting') break;
    }
    follow.abort();
    expect(seen).toEqual(['flow.stage_started', 'flow.context_updated', 'flow.stage_finished', 'flow.stage_started', 'flow.gate_waiting']);

    expect(await h.gate('freeform', { text: 'add a changelog entry' })).toEqual({ gate: 'review', selected: 'freeform', label: '[R] Revise' });
    const result = await h.result();
    expect(result.context).toMatchObject({ 'human.gate.selected': 'freeform', 'human.gate.label': '[R] Revise', 'human.gate.text': 'add a changelog entry', preferred_label: '[R] Revise', 'command.output': 'reworked\n' });
    // The refused answer never entered history: one accepted update.
    const history = await h.workflow.fetchHistory();
    expect(history.events!.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes)).toHaveLength(1);
  });

  it('retries a failed command with the retry count in the context', async () => {
    const dot = `digraph Retry {
      start [shape=Mdiamond]
      flaky [label="Flaky", max_retries=2, script="if [ -f tried ]; then echo second; else touch tried; echo first >&2; exit 1; fi"]
      exit [shape=Msquare]
      start -> flaky -> exit
    }`;
    const h = await startFlow(w.client, dot, { workDir, taskQueue: w.taskQueue, workflowId: fid('retry') });
    const result = await h.result();
    expect(result.context).toMatchObject({ 'internal.retry_count.flaky': 1, 'command.output': 'second\n', outcome: 'success' });
    expect((await h.state()).stages.find((s) => s.node === 'flaky')!.attempts).toBe(2);
  });

  it('a failed run resumes from the failed stage with its saved context; full degrades to summary:high', async () => {
    const dot = `digraph Resume {
      graph [goal="Resume me"]
      start [shape=Mdiamond]
      prep  [label="Prep", script="echo prepared"]
      write [label="Write", fidelity="full", thread_id="w", prompt="Write it."]
      check [label="Check", script="test -f ok || exit 7"]
      exit  [shape=Msquare]
      start -> prep -> write -> check -> exit
    }`;
    // First run: write fails (the model refuses the request), then the resumed run fails at check.
    fake.enqueue(fail(400, { message: 'bad request' }));
    const h = await startFlow(w.client, dot, { workDir, taskQueue: w.taskQueue, workflowId: fid('resume') });
    expect(await rejection(h.result())).toMatchObject({ code: 'FLOW_STAGE_FAILED', node: 'write' });
    expect(await h.state()).toMatchObject({ status: 'failed', failedNode: 'write' });

    fake.enqueue(say('written'));
    const second = await resumeFlow(w.client, h.workflowId, { taskQueue: w.taskQueue });
    expect(await rejection(second.result())).toMatchObject({ code: 'FLOW_STAGE_FAILED', node: 'check' });
    // write was the first node after the resume: its `full` ran as summary:high, with a preamble.
    const resumedWrite = (await second.state()).stages.find((s) => s.node === 'write' && s.status === 'success')!;
    expect(resumedWrite.fidelity).toBe('summary:high');
    expect(lastUserText(fake.messageRequests().at(-1)!.body)).toMatch(/^Goal: Resume me\n\n## Completed stages\n### prep: success\n- Script: `echo prepared`\n- Stdout:\nprepared\n/);

    await fs.writeFile(path.join(workDir, 'ok'), '');
    const third = await resumeFlow(w.client, second.workflowId, { taskQueue: w.taskQueue });
    const result = await third.result();
    const state = await third.state();
    expect(state.stages.map((s) => `${s.node}:${s.status}`)).toEqual(['start:success', 'prep:success', 'write:fail', 'write:success', 'check:fail', 'check:success', 'exit:success']);
    expect(result.context).toMatchObject({ 'internal.resumed_from': second.workflowId, 'internal.run_id': third.workflowId, 'response.write': 'written', 'command.output': '' });
    expect(state.stages.find((s) => s.node === 'check' && s.status === 'success')!.fidelity).toBe('compact'); // not full: nothing to degrade
  });

  it('first_success joins on the first branch to succeed and cancels the rest; max_parallel bounds branches at once', async () => {
    const dot = (limit: number) => `digraph Race {
      start [shape=Mdiamond]
      fan   [shape=component, join="first_success", max_parallel=${limit}]
      slow  [label="Slow", script="sleep 30; echo slow"]
      fast  [label="Fast", script="echo fast"]
      broke [label="Broke", script="exit 1"]
      join  [shape=tripleoctagon]
      exit  [shape=Msquare]
      start -> fan
      fan -> slow
      fan -> fast
      fan -> broke
      slow -> join
      fast -> join
      broke -> join
      join -> exit
    }`;
    const race = await startFlow(w.client, dot(3), { workDir, taskQueue: w.taskQueue, workflowId: fid('race') });
    const raced = await race.result();
    expect(raced.context['parallel.fan_in.best_id']).toBe('fast');
    const outcomes = Object.fromEntries((raced.context['parallel.fan_in.results'] as Array<{ id: string; outcome: string }>).map((r) => [r.id, r.outcome]));
    expect(outcomes.slow).toBe('cancelled');
    expect(outcomes.fast).toBe('success');
    const slowRun = await w.client.workflow.getHandle(`${race.workflowId}/slow-1`).describe();
    expect(slowRun.status.name).toBe('CANCELLED');

    // One at a time, in edge order: slow would run first; with fast second and a limit of 1, slow must finish first.
    const oneAtATime = dot(1).replace('sleep 30; echo slow', 'echo slow-done');
    const serial = await startFlow(w.client, oneAtATime, { workDir, taskQueue: w.taskQueue, workflowId: fid('serial') });
    const done = await serial.result();
    expect(done.context['parallel.fan_in.best_id']).toBe('slow'); // the first to succeed; fast and broke never started
    const events = (await serial.state()).events.filter((e) => e.type === 'flow.branch_started' || e.type === 'flow.branch_joined').map((e) => `${e.type}:${(e as { branch: string }).branch}`);
    expect(events).toEqual(['flow.branch_started:slow', 'flow.branch_joined:slow']);
  });

  it('an agent node runs a registered agent as a child workflow, with the preamble in its input', async () => {
    fake.enqueue(callTools({ name: 'add', input: { a: 2, b: 3 } }), say('5'));
    const dot = `digraph AgentNode {
      graph [goal="Add numbers"]
      start [shape=Mdiamond]
      calc  [label="Calc", agent="calculator", prompt="Add 2 and 3.", input="{\\"task\\": \\"$prompt\\", \\"dir\\": \\"${workDir}\\"}"]
      exit  [shape=Msquare]
      start -> calc -> exit
    }`;
    const h = await startFlow(w.client, dot, { workDir, taskQueue: w.taskQueue, workflowId: fid('agent-node') });
    const result = await h.result();
    expect(JSON.parse(String(result.context['response.calc']))).toMatchObject({ reply: '5' });
    expect(result.context.last_stage).toBe('calc');
    const child = await w.client.workflow.getHandle(`${h.workflowId}/calc-1-1`).describe();
    expect(child.type).toBe('calculator');
    const asked = lastUserText(fake.messageRequests().filter((r) => r.path === '/v1/messages').at(-2)!.body);
    expect(asked).toBe('Goal: Add numbers\n\nAdd 2 and 3.');
  });

  it('bad input is refused at once, before anything starts', async () => {
    const before = fake.messageRequests().length;
    await expect(startFlow(w.client, fixture('malformed.dot'), { workDir, taskQueue: w.taskQueue })).rejects.toMatchObject({ code: 'FLOW_DOT_SYNTAX', line: 4 });
    await expect(startFlow(w.client, fixture('missing-node-condition.dot'), { workDir, taskQueue: w.taskQueue })).rejects.toMatchObject({ code: 'FLOW_INVALID', element: 'edge plan -> exit' });
    await expect(startFlow(w.client, fixture('plan-implement-test.dot'), { workDir, taskQueue: w.taskQueue, context: { 'internal.run_id': 'mine' } })).rejects.toMatchObject({ code: 'FLOW_RESERVED_KEY', key: 'internal.run_id' });
    expect(fake.messageRequests().length).toBe(before);
  });

  it("a node id with a quote or a path is refused by the client and by the run itself; it never reaches the shell", async () => {
    const escaped = `escaped-${process.pid}`;
    const dot = `digraph {\n  start [shape=Mdiamond]\n  exit [shape=Msquare]\n  "q'; touch PWNED; echo '" [script="echo one"]\n  "../../${escaped}" [script="echo two"]\n  start -> "q'; touch PWNED; echo '" -> "../../${escaped}" -> exit\n}`;
    await expect(startFlow(w.client, dot, { workDir, taskQueue: w.taskQueue })).rejects.toMatchObject({ code: 'FLOW_INVALID', element: `node "q'; touch PWNED; echo '"`, line: 4 });
    // A client that skips the checks (the raw graph, started by hand): the run checks the ids itself.
    const input: FlowInput = { graph: dotToGraph(dot), workDir };
    const h = new FlowHandle(await w.client.workflow.start(FLOW_WORKFLOW, { taskQueue: w.taskQueue, workflowId: fid('bad-ids'), args: [input] }), w.client);
    const outcome = await h.result().then(() => 'completed', (err: unknown) => err);
    // Nothing ran: no file the injected command would make, none outside the run's directory.
    expect(await fs.readdir(workDir)).toEqual([]);
    await expect(fs.stat(path.join(path.dirname(path.dirname(workDir)), `${escaped}-1-1.out`))).rejects.toThrow();
    await expect(fs.stat(path.join(path.dirname(workDir), `${escaped}-1-1.out`))).rejects.toThrow();
    expect(outcome).toMatchObject({ code: 'FLOW_INVALID', element: `node "q'; touch PWNED; echo '"` });
  });
});
