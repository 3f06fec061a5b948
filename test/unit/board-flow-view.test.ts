/**
 * The board's view of a flow run, from its state (no server): node states as the board names them
 * (skipped for what a completed run never reached, running for a branch's first node while the branch
 * runs), the current node, a loop's back edge found and laid beside the nodes, layers top to bottom, and
 * the context without internal keys.
 */
import { parseFlow } from '../../src/core/flows/dot';
import { flowView, NODE_H } from '../../src/board/flow-view';
import type { FlowState } from '../../src/wire/flow-messages';

const graph = parseFlow(`digraph Loop {
  start [shape=Mdiamond]
  work  [label="Work <b>hard</b>", script="echo w"]
  check [shape=hexagon, label="Again?"]
  done  [label="Done", script="echo d"]
  exit  [shape=Msquare]
  start -> work -> check
  check -> work [label="[A] Again"]
  check -> done [label="[D] Done"]
  done -> exit
}`);

const state = (over: Partial<FlowState>): FlowState => ({ graph, status: 'running', context: {}, stages: [], nodeStates: {}, events: [], ...over });

describe('the board view of a flow run', () => {
  it('names node states, marks the current node, and keeps labels as given', () => {
    const v = flowView('f1', state({ status: 'waiting', currentNode: 'check', nodeStates: { start: 'success', work: 'fail', check: 'waiting', done: 'pending', exit: 'pending' } }));
    expect(Object.fromEntries(v.nodes.map((n) => [n.id, n.state]))).toEqual({ start: 'succeeded', work: 'failed', check: 'waiting', done: 'pending', exit: 'pending' });
    expect(v.nodes.filter((n) => n.current).map((n) => n.id)).toEqual(['check']);
    expect(v.nodes.find((n) => n.id === 'work')!.label).toBe('Work <b>hard</b>');
  });

  it('shows what a completed run never reached as skipped', () => {
    const v = flowView('f1', state({ status: 'completed', nodeStates: { start: 'success', work: 'success', check: 'success', done: 'pending', exit: 'success' } }));
    expect(v.nodes.find((n) => n.id === 'done')!.state).toBe('skipped');
    expect(v.nodes.find((n) => n.id === 'exit')!.state).toBe('succeeded');
  });

  it("shows a started branch's first node running until it joins", () => {
    const started = { type: 'flow.branch_started' as const, seq: 1, node: 'fan', branch: 'work', workflowId: 'f1/work-1' };
    expect(flowView('f1', state({ events: [started] })).nodes.find((n) => n.id === 'work')!.state).toBe('running');
    const joined = { type: 'flow.branch_joined' as const, seq: 2, node: 'fan', branch: 'work', outcome: 'success' };
    expect(flowView('f1', state({ events: [started, joined] })).nodes.find((n) => n.id === 'work')!.state).toBe('pending');
  });

  it('lays nodes out in layers, with the loop as a back edge', () => {
    const v = flowView('f1', state({}));
    const y = Object.fromEntries(v.nodes.map((n) => [n.id, n.y]));
    expect(y.start).toBeLessThan(y.work!);
    expect(y.work).toBeLessThan(y.check!);
    expect(y.check).toBeLessThan(y.done!);
    expect(y.done).toBeLessThan(y.exit!);
    expect(v.edges.filter((e) => e.back).map((e) => `${e.from}->${e.to}`)).toEqual(['check->work']);
    const down = v.edges.find((e) => e.from === 'start')!;
    expect(down.points[1]).toBe(y.start! + NODE_H);
    expect(down.points[3]).toBe(y.work);
    for (const n of v.nodes) expect(n.x + v.node.width).toBeLessThanOrEqual(v.width);
  });

  it('shows the context without internal keys, long values cut', () => {
    const v = flowView('f1', state({ context: { 'internal.run_id': 'f1', note: '<img src=x>', big: 'x'.repeat(5000), n: 3 } }));
    expect(v.context.map((c) => c.key)).toEqual(['big', 'n', 'note']);
    expect(v.context.find((c) => c.key === 'note')!.value).toBe('<img src=x>');
    expect(v.context.find((c) => c.key === 'n')!.value).toBe('3');
    expect(v.context.find((c) => c.key === 'big')!.value).toMatch(/… \(5000 characters\)$/);
  });
});
