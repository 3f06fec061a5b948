/**
 * Flows, pure: DOT -> typed graph, validation errors naming the element and line, conditions,
 * fidelity precedence, context rules and the preamble (the seed's example rendered exactly).
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parseFlow } from '../../src/core/flows/dot';
import {
  checkUserContext,
  completedStages,
  evaluateCondition,
  gateChoices,
  matchGateChoice,
  parseAgentDirectives,
  parseCondition,
  renderPreamble,
  resolveFidelity,
  responseKeys,
  selectEdge,
  oversizedKeys,
  nodeById,
  type FlowContext,
  type StageRecord,
} from '../../src/core/flows';

const fixture = (name: string) => readFileSync(path.join(__dirname, '../fixtures/flows', name), 'utf8');
const node = (g: ReturnType<typeof parseFlow>, id: string) => nodeById(g, id)!;

describe('DOT -> typed graph', () => {
  it('reads the plan -> implement -> test flow: kinds, goal, prompts, script', () => {
    const g = parseFlow(fixture('plan-implement-test.dot'));
    expect(g.attrs.goal).toBe('Add a /health endpoint to the API server');
    expect(g.nodes.map((n) => [n.id, n.kind])).toEqual([['start', 'start'], ['plan', 'prompt'], ['implement', 'prompt'], ['test', 'command'], ['exit', 'exit']]);
    expect(g.edges.map((e) => `${e.from}->${e.to}`)).toEqual(['start->plan', 'plan->implement', 'implement->test', 'test->exit']);
    expect(node(g, 'test').script).toContain('running 42 tests');
  });

  it('applies subgraph node defaults (fidelity, thread_id) to the nodes inside only', () => {
    const g = parseFlow(fixture('thread-cluster.dot'));
    for (const id of ['plan', 'implement', 'review']) expect([node(g, id).fidelity, node(g, id).threadId]).toEqual(['full', 'impl']);
    expect(node(g, 'exit').threadId).toBeUndefined();
  });

  it('expands edge chains and groups, with edge defaults by scope', () => {
    const g = parseFlow(`digraph {
      start [shape=Mdiamond]; a [label="A"]; b [label="B"]; c [label="C"]; exit [shape=Msquare]
      edge [fidelity="truncate"]
      start -> a -> { b c }
      subgraph s { edge [fidelity="full"]; b -> exit }
      c -> exit
    }`);
    expect(g.edges.map((e) => `${e.from}->${e.to}:${e.fidelity}`)).toEqual(['start->a:truncate', 'a->b:truncate', 'a->c:truncate', 'b->exit:full', 'c->exit:truncate']);
  });

  it("reads a stage's model connection (connection=\"openai\" with model=\"gpt-5.1\") and refuses a bad name with its line", () => {
    const g = parseFlow(`digraph {
      start [shape=Mdiamond]; exit [shape=Msquare]
      a [prompt="A", connection="openai", model="gpt-5.1"]; b [prompt="B", model="llama3:8b"]
      start -> a -> b -> exit
    }`);
    expect([node(g, 'a').connection, node(g, 'a').model]).toEqual(['openai', 'gpt-5.1']);
    // A colon stays in the model id (Ollama's llama3:8b, Bedrock's …-v1:0): the connection is its own attribute.
    expect([node(g, 'b').connection, node(g, 'b').model]).toEqual([undefined, 'llama3:8b']);
    expect(() => parseFlow(`digraph {\n start [shape=Mdiamond]; exit [shape=Msquare]\n a [prompt="A", connection="not a name"]\n start -> a -> exit }`)).toThrow(
      expect.objectContaining({ code: 'FLOW_INVALID', line: 3, message: expect.stringContaining("connection 'not a name'") }),
    );
  });

  it('refuses malformed DOT with the line', () => {
    expect(() => parseFlow(fixture('malformed.dot'))).toThrow(expect.objectContaining({ code: 'FLOW_DOT_SYNTAX', line: 4 }));
  });

  it('refuses a condition that reads a missing node, naming the edge and line', () => {
    expect(() => parseFlow(fixture('missing-node-condition.dot'))).toThrow(
      expect.objectContaining({ code: 'FLOW_INVALID', element: 'edge plan -> exit', line: 6, message: expect.stringContaining("no node 'review'") }),
    );
  });

  it.each([
    ['an unknown node', 'digraph { start [shape=Mdiamond]; exit [shape=Msquare]; start -> plna; plna -> exit }', /node plna.*unknown node/],
    ['an unreachable exit', 'digraph { start [shape=Mdiamond]; a [label="A"]; exit [shape=Msquare]; start -> a; a -> a }', /(no exit is reachable|cannot reach an exit|unreachable)/],
    ['a condition that does not parse', 'digraph { start [shape=Mdiamond]; exit [shape=Msquare]; start -> exit [condition="outcome=="] }', /edge start -> exit.*does not parse/],
    ['an unknown attribute', 'digraph { start [shape=Mdiamond]; a [label="A", fidelty="full"]; exit [shape=Msquare]; start -> a -> exit }', /node a.*unknown attribute 'fidelty'/],
    ['a bad fidelity', 'digraph { start [shape=Mdiamond]; a [fidelity="medium"]; exit [shape=Msquare]; start -> a -> exit }', /fidelity 'medium'/],
    ['two start nodes', 'digraph { start [shape=Mdiamond]; s2 [shape=Mdiamond]; exit [shape=Msquare]; start -> exit; s2 -> exit }', /exactly one start/],
    ['a gate choice without a label', 'digraph { start [shape=Mdiamond]; g [shape=hexagon]; exit [shape=Msquare]; start -> g; g -> exit }', /needs a label/],
  ])('refuses %s', (_what, dot, message) => {
    expect(() => parseFlow(dot)).toThrow(message);
  });

  it('takes a human gate inside a parallel branch (it waits in the branch workflow), still refusing a branch that exits', () => {
    const gated = 'digraph { start [shape=Mdiamond]; fan [shape=component]; a [script="true"]; g [shape=hexagon]; b [script="true"]; join [shape=tripleoctagon]; exit [shape=Msquare]\n start -> fan; fan -> a; fan -> b; a -> g; g -> join [label="[A] Accept"]; g -> join [label="[D] Drop"]; b -> join; join -> exit }';
    expect(nodeById(parseFlow(gated), 'g')!.kind).toBe('gate');
    expect(() => parseFlow(gated.replace('g -> join [label="[D] Drop"]', 'g -> exit [label="[D] Drop"]'))).toThrow(expect.objectContaining({ code: 'FLOW_INVALID', element: 'node fan', message: expect.stringContaining("branch 'a' reaches exit 'exit'") }));
  });

  it('gives the line of the offending element', () => {
    const dot = 'digraph {\n  start [shape=Mdiamond]\n  exit [shape=Msquare]\n  start -> exit [colour="red"]\n}';
    expect(() => parseFlow(dot)).toThrow(expect.objectContaining({ element: 'edge start -> exit', line: 4 }));
  });
});

describe('conditions', () => {
  const ctx: FlowContext = { outcome: 'success', tests_passed: true, 'internal.node_visit_count': 5, score: '0.8' };
  const holds = (c: string) => evaluateCondition(parseCondition(c), (k) => ctx[k]);

  it('reads outcome and context keys, with or without the context. prefix', () => {
    expect(holds('outcome=success && context.tests_passed=true')).toBe(true);
    expect(holds('outcome=success && tests_passed=true')).toBe(true);
    expect(holds('outcome=fail')).toBe(false);
    expect(holds('outcome=fail || tests_passed=true')).toBe(true);
    expect(holds('outcome!=success')).toBe(false);
  });

  it('compares numbers as numbers', () => {
    expect(holds('context.internal.node_visit_count >= 5')).toBe(true);
    expect(holds('internal.node_visit_count > 5')).toBe(false);
    expect(holds('internal.node_visit_count < 10')).toBe(true);
    expect(holds('internal.node_visit_count <= 4')).toBe(false);
    expect(holds('score > 0.75')).toBe(true);
  });

  it('refuses what does not parse', () => {
    expect(() => parseCondition('outcome')).toThrow(/not 'key op value'/);
    expect(() => parseCondition('outcome=')).toThrow(/no value/);
    expect(() => parseCondition('')).toThrow(/empty/);
  });
});

describe('routing', () => {
  it('loops until node_visit_count >= 5, then exits (first matching edge wins, unconditioned is the fallback)', () => {
    const g = parseFlow(fixture('loop.dot'));
    const gate = node(g, 'gate');
    const at = (visits: number) => selectEdge(g, gate, { outcome: 'success', 'internal.node_visit_count': visits }).to.id;
    expect([1, 2, 3, 4].map(at)).toEqual(['improve', 'improve', 'improve', 'improve']);
    expect(at(5)).toBe('exit');
  });

  it('routes gate -> deploy on success with tests passed, -> fix on fail, else the fallback', () => {
    const g = parseFlow(fixture('gate-route.dot'));
    const gate = node(g, 'gate');
    expect(selectEdge(g, gate, { outcome: 'success', tests_passed: true }).to.id).toBe('deploy');
    expect(selectEdge(g, gate, { outcome: 'fail', failure_class: 'command_exit' }).to.id).toBe('fix');
    expect(selectEdge(g, gate, { outcome: 'success', tests_passed: false }).to.id).toBe('exit');
  });

  it('a failed stage does not fall through an unconditioned edge into the next stage', () => {
    const g = parseFlow(fixture('plan-implement-test.dot'));
    expect(() => selectEdge(g, node(g, 'plan'), { outcome: 'fail', failure_class: 'agent_error' })).toThrow(expect.objectContaining({ code: 'FLOW_STAGE_FAILED', node: 'plan' }));
  });

  it('gate choices: accelerator keys and labels; an unknown choice is a typed error', () => {
    const g = parseFlow('digraph { start [shape=Mdiamond]; g [shape=hexagon]; a [label="A"]; b [label="B"]; exit [shape=Msquare]; start -> g; g -> a [label="[A] Approve"]; g -> b [label="Revise", freeform="true"]; a -> exit; b -> exit }');
    const gate = node(g, 'g');
    expect(gateChoices(g, gate).map((c) => c.key)).toEqual(['A', 'R']);
    expect(matchGateChoice(g, gate, 'a')).toMatchObject({ selected: 'A', label: '[A] Approve', to: 'a' });
    expect(matchGateChoice(g, gate, 'revise')).toMatchObject({ selected: 'R', to: 'b' });
    expect(matchGateChoice(g, gate, 'freeform', 'make it shorter')).toEqual({ selected: 'freeform', label: 'Revise', to: 'b', text: 'make it shorter' });
    expect(() => matchGateChoice(g, gate, 'X')).toThrow(expect.objectContaining({ code: 'FLOW_UNKNOWN_CHOICE', choice: 'X' }));
  });
});

describe('fidelity', () => {
  const g = parseFlow(fixture('fidelity.dot'));
  const edgeInto = (id: string) => g.edges.find((e) => e.to === id);

  it('edge, then node, then graph default', () => {
    expect(resolveFidelity(g, node(g, 'implement'), edgeInto('implement'))).toBe('full'); // edge beats node
    expect(resolveFidelity(g, node(g, 'review'), edgeInto('review'))).toBe('truncate'); // node
    expect(resolveFidelity(g, node(g, 'plan'), edgeInto('plan'))).toBe('summary:medium'); // graph default
  });

  it('compact when nothing is set; full degrades to summary:high on the first node after a resume', () => {
    const plain = parseFlow(fixture('plan-implement-test.dot'));
    expect(resolveFidelity(plain, node(plain, 'plan'), undefined)).toBe('compact');
    expect(resolveFidelity(g, node(g, 'implement'), edgeInto('implement'), true)).toBe('summary:high');
  });
});

describe('context and preamble', () => {
  const stages: StageRecord[] = [
    { node: 'start', kind: 'start', visit: 1, attempts: 1, status: 'success', updated: [] },
    { node: 'plan', kind: 'prompt', visit: 1, attempts: 1, status: 'success', agent: { model: 'claude-sonnet-4-5', inputTokens: 12_400, outputTokens: 3_200, files: ['docs/plan.md'] }, updated: [] },
    { node: 'test', kind: 'command', visit: 1, attempts: 1, status: 'success', command: { script: 'cargo test 2>&1 || true', exitCode: 0, stdout: 'running 42 tests … 41 passed, 1 failed\n', stderr: '' }, updated: [] },
  ];
  const context: FlowContext = {
    'graph.goal': 'Add a /health endpoint to the API server',
    'internal.run_id': 'flow-1',
    'internal.work_dir': '/tmp/w',
    'internal.fidelity': 'compact',
    'internal.node_visit_count': 1,
    current_node: 'implement',
    outcome: 'success',
    ...responseKeys({ id: 'plan' } as never, 'Plan: add a handler for GET /health …'),
    'command.output': 'running 42 tests … 41 passed, 1 failed\n',
    'command.stderr': '',
    'thread.x': 'hidden',
    tests_passed: false,
  };

  it("renders the seed's example preamble for the implement node", () => {
    const text = renderPreamble({ fidelity: 'compact', goal: 'Add a /health endpoint to the API server', runId: 'flow-1', stages: completedStages(stages), context });
    expect(text).toBe(fixture('preamble-implement.txt'));
  });

  it('never shows internal keys or the excluded prefixes, at any fidelity', () => {
    for (const fidelity of ['compact', 'summary:high', 'summary:medium', 'summary:low', 'truncate'] as const) {
      const text = renderPreamble({ fidelity, goal: 'g', runId: 'flow-1', stages, context });
      for (const hidden of ['internal.', 'current_node', 'graph.goal', 'thread.x', 'response.plan']) expect(text).not.toContain(hidden);
    }
    expect(renderPreamble({ fidelity: 'full', goal: 'g', runId: 'r', stages, context })).toBe('');
    expect(renderPreamble({ fidelity: 'truncate', goal: 'g', runId: 'flow-1', stages, context })).toBe('Goal: g\nRun: flow-1');
    expect(renderPreamble({ fidelity: 'summary:low', goal: 'g', runId: 'r', stages, context })).toBe('Goal: g\n\n## Completed stages\n- plan: success\n- test: success');
  });

  it('summary:high is a per-stage report with replies; summary:medium leaves outputs out', () => {
    const high = renderPreamble({ fidelity: 'summary:high', goal: 'g', runId: 'r', stages: completedStages(stages), context });
    expect(high).toContain('### plan: success\n- Model: claude-sonnet-4-5, 12.4k tokens in / 3.2k out\n- Files: docs/plan.md\n- Response:\nPlan: add a handler for GET /health …');
    expect(high).toContain('### test: success\n- Script: `cargo test 2>&1 || true`\n- Stdout:\nrunning 42 tests');
    const medium = renderPreamble({ fidelity: 'summary:medium', goal: 'g', runId: 'r', stages: completedStages(stages), context });
    expect(medium).toContain('- **test**: success\n  - Script: `cargo test 2>&1 || true`\n\n## Context');
    expect(medium).not.toContain('running 42 tests');
    const long = renderPreamble({ fidelity: 'summary:medium', goal: 'g', runId: 'r', stages: [], context: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, 'v'.repeat(400)])) });
    expect(long.length).toBeLessThanOrEqual(6_000 + 60);
    expect(long).toMatch(/…\[preamble cut to ~1500 tokens\]$/);
  });

  it('shows an offloaded value as a reference the agent can read back', () => {
    const text = renderPreamble({ fidelity: 'compact', goal: 'g', runId: 'r', stages: [], context: { big: 'artifact://abc123#300000' } });
    expect(text).toContain('- big: [stored artifact abc123, 300.0 KB: read_artifact({"ref":"abc123","offset":0})]');
  });

  it('agent keys: last_stage, last_response cut to 200 characters, response.{node} whole', () => {
    const reply = 'x'.repeat(450);
    expect(responseKeys({ id: 'plan' } as never, reply)).toEqual({ last_stage: 'plan', last_response: 'x'.repeat(200), 'response.plan': reply });
  });

  it("reads an agent's context_updates from a JSON reply, dropping engine keys", () => {
    const d = parseAgentDirectives('Done.\n```json\n{"context_updates": {"tests_passed": true, "internal.run_id": "x", "outcome": "fail"}, "preferred_label": "Ship"}\n```');
    expect(d).toEqual({ updates: { tests_passed: true }, preferredLabel: 'Ship', refused: ['internal.run_id', 'outcome'] });
  });

  it('refuses --set of engine keys', () => {
    expect(() => checkUserContext({ 'internal.run_id': 'x' })).toThrow(expect.objectContaining({ code: 'FLOW_RESERVED_KEY', key: 'internal.run_id' }));
    expect(() => checkUserContext({ tests_passed: true })).not.toThrow();
  });

  it('finds values over 100 KB serialized', () => {
    expect(oversizedKeys({ small: 'x'.repeat(99_000), big: 'y'.repeat(100_001), obj: { a: 'z'.repeat(100_000) } })).toEqual(['big', 'obj']);
  });
});
