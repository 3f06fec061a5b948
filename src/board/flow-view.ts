/**
 * What the board draws for one flow run, made from its state query (pure: no I/O). Each node gets a
 * board state (the run's node state, plus `skipped` for nodes a finished run never reached, and
 * `running` for the first node of a branch that started and has not joined: the branch's own stages
 * reach the parent only at the join) and a place in a layered layout, top to bottom, so the page only
 * draws boxes and lines at the coordinates it is given. The context is shown without `internal.*` keys.
 */
import type { ContextValue } from '../core/flows/context';
import type { FlowEvent } from '../core/flows/events';
import type { FlowGraph, NodeKind } from '../core/flows/graph';
import type { FlowState } from '../wire/flow-messages';

export const BOARD_NODE_STATES = ['pending', 'running', 'waiting', 'succeeded', 'failed', 'skipped'] as const;
export type BoardNodeState = (typeof BOARD_NODE_STATES)[number];

export interface FlowViewNode {
  id: string;
  label: string;
  kind: NodeKind;
  state: BoardNodeState;
  /** The node the run is at (or stopped at). */
  current: boolean;
  /** Stages run at this node (a loop visits a node more than once). */
  visits: number;
  x: number;
  y: number;
}

export interface FlowViewEdge {
  from: string;
  to: string;
  label?: string;
  /** An edge back to an earlier layer (a loop): drawn as a curve beside the nodes. */
  back: boolean;
  /** Where it starts and ends (bottom centre of `from`, top centre of `to`; for a back edge, the sides). */
  points: [number, number, number, number];
}

export interface FlowView {
  id: string;
  name: string;
  goal?: string;
  status: FlowState['status'];
  currentNode?: string;
  nodes: FlowViewNode[];
  edges: FlowViewEdge[];
  width: number;
  height: number;
  node: { width: number; height: number };
  /** The context without the engine's `internal.*` keys, each value as display text (long ones cut). */
  context: Array<{ key: string; value: string }>;
  waitingGate?: FlowState['waitingGate'];
  failure?: string;
  failedNode?: string;
  /** The newest events (at most 30), oldest first. */
  events: FlowEvent[];
}

export const NODE_W = 160;
export const NODE_H = 44;
const GAP_X = 40;
const GAP_Y = 46;
const MARGIN = 30;
const VALUE_CHARS = 2_000;

export function flowView(id: string, state: FlowState): FlowView {
  const graph: FlowGraph = state.graph ?? { name: id, attrs: {}, nodes: [], edges: [] };
  const { rank, back } = layers(graph);
  const rows = new Map<number, string[]>();
  for (const n of graph.nodes) rows.set(rank.get(n.id)!, [...(rows.get(rank.get(n.id)!) ?? []), n.id]);
  const widest = Math.max(1, ...[...rows.values()].map((r) => r.length));
  const width = MARGIN * 2 + widest * NODE_W + (widest - 1) * GAP_X;
  const pos = new Map<string, { x: number; y: number }>();
  for (const [r, ids] of rows) {
    const rowWidth = ids.length * NODE_W + (ids.length - 1) * GAP_X;
    const left = (width - rowWidth) / 2;
    ids.forEach((nid, i) => pos.set(nid, { x: left + i * (NODE_W + GAP_X), y: MARGIN + r * (NODE_H + GAP_Y) }));
  }
  const height = MARGIN * 2 + Math.max(1, rows.size) * NODE_H + Math.max(0, rows.size - 1) * GAP_Y;
  const states = boardStates(graph, state);
  const visits = new Map<string, number>();
  for (const s of state.stages) visits.set(s.node, (visits.get(s.node) ?? 0) + 1);
  const nodes: FlowViewNode[] = graph.nodes.map((n) => ({
    id: n.id,
    label: n.label || n.id,
    kind: n.kind,
    state: states.get(n.id)!,
    current: n.id === state.currentNode,
    visits: visits.get(n.id) ?? 0,
    ...pos.get(n.id)!,
  }));
  const edges: FlowViewEdge[] = graph.edges.map((e, i) => {
    const a = pos.get(e.from)!;
    const b = pos.get(e.to)!;
    const isBack = back.has(i);
    const points: FlowViewEdge['points'] = isBack ? [a.x + NODE_W, a.y + NODE_H / 2, b.x + NODE_W, b.y + NODE_H / 2] : [a.x + NODE_W / 2, a.y + NODE_H, b.x + NODE_W / 2, b.y];
    return { from: e.from, to: e.to, ...(e.label ? { label: e.label } : {}), back: isBack, points };
  });
  return {
    id,
    name: graph.name,
    ...(graph.attrs.goal !== undefined ? { goal: graph.attrs.goal } : {}),
    status: state.status,
    ...(state.currentNode !== undefined ? { currentNode: state.currentNode } : {}),
    nodes,
    edges,
    // Room on the right for a loop's curve and for edge labels, which are drawn beside their lines.
    width: width + (edges.some((e) => e.back) ? 60 : 0) + (edges.some((e) => e.label) ? 120 : 0),
    height,
    node: { width: NODE_W, height: NODE_H },
    context: Object.entries(state.context)
      .filter(([k]) => !k.startsWith('internal.'))
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([key, value]) => ({ key, value: display(value) })),
    ...(state.waitingGate ? { waitingGate: state.waitingGate } : {}),
    ...(state.failure !== undefined ? { failure: state.failure } : {}),
    ...(state.failedNode !== undefined ? { failedNode: state.failedNode } : {}),
    events: state.events.slice(-30),
  };
}

/** Each node's state as the board names it. */
function boardStates(graph: FlowGraph, state: FlowState): Map<string, BoardNodeState> {
  const open = new Set<string>();
  for (const e of state.events) {
    if (e.type === 'flow.branch_started') open.add(e.branch);
    if (e.type === 'flow.branch_joined') open.delete(e.branch);
  }
  const out = new Map<string, BoardNodeState>();
  for (const n of graph.nodes) {
    const s = state.nodeStates[n.id] ?? 'pending';
    let b: BoardNodeState = s === 'success' ? 'succeeded' : s === 'fail' ? 'failed' : s;
    if (b === 'pending' && open.has(n.id) && state.status !== 'completed' && state.status !== 'failed') b = 'running';
    if (b === 'pending' && state.status === 'completed') b = 'skipped';
    out.set(n.id, b);
  }
  return out;
}

/**
 * Layers by the longest path from the start over the graph without its back edges (found by a depth-first
 * walk from the start: an edge to a node still on the walk's stack closes a loop). Nodes the walk does
 * not reach (a checked graph has none) go below the rest.
 */
function layers(graph: FlowGraph): { rank: Map<string, number>; back: Set<number> } {
  const out = new Map<string, number[]>();
  graph.edges.forEach((e, i) => out.set(e.from, [...(out.get(e.from) ?? []), i]));
  const start = graph.nodes.find((n) => n.kind === 'start') ?? graph.nodes[0];
  const back = new Set<number>();
  const order: string[] = [];
  const mark = new Map<string, 'open' | 'done'>();
  const visit = (id: string): void => {
    mark.set(id, 'open');
    for (const i of out.get(id) ?? []) {
      const to = graph.edges[i]!.to;
      if (mark.get(to) === 'open') back.add(i);
      else if (!mark.has(to)) visit(to);
    }
    mark.set(id, 'done');
    order.push(id);
  };
  if (start) visit(start.id);
  const rank = new Map<string, number>();
  for (const id of order.reverse()) {
    rank.set(id, rank.get(id) ?? 0);
    for (const i of out.get(id) ?? []) {
      if (back.has(i)) continue;
      const to = graph.edges[i]!.to;
      rank.set(to, Math.max(rank.get(to) ?? 0, rank.get(id)! + 1));
    }
  }
  let below = Math.max(-1, ...rank.values()) + 1;
  for (const n of graph.nodes) if (!rank.has(n.id)) rank.set(n.id, below++);
  return { rank, back };
}

function display(v: ContextValue): string {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s.length > VALUE_CHARS ? `${s.slice(0, VALUE_CHARS)}… (${s.length} characters)` : s;
}
