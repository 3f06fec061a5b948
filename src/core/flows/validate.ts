/**
 * Structural checks, before anything starts: one start, a reachable exit, no dead ends, parseable
 * conditions that name real nodes, gates with distinct choices, parallel fan-outs that meet at one
 * fan-in. Each error names the node or edge and its line.
 */
import { conditionKeys, parseCondition } from './conditions';
import { FlowConditionError, InvalidFlowError } from './errors';
import { edgeName, FIDELITIES, outgoing, type FlowGraph, type FlowNode } from './graph';
import { FLOW_OUTPUT_DIR } from './stage';

/** Context keys whose value is a node id: a condition comparing them to a missing node can never match. */
const NODE_VALUED_KEYS = new Set(['last_stage', 'current_node', 'parallel.fan_in.best_id']);
/** Key prefixes followed by a node id. */
const NODE_KEY_PREFIXES = ['response.', 'internal.retry_count.'];

/** `nodeIds: false` skips the node id check (a run recorded before the workflow made it replays without it). */
export function validateFlow(graph: FlowGraph, options: { nodeIds?: boolean } = {}): void {
  if (options.nodeIds !== false) for (const n of graph.nodes) checkNodeId(n);
  const ids = new Set(graph.nodes.map((n) => n.id));
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const starts = graph.nodes.filter((n) => n.kind === 'start');
  if (starts.length !== 1) throw new InvalidFlowError('graph', `needs exactly one start node (id 'start' or shape=Mdiamond), found ${starts.length}${starts.length ? `: ${starts.map((s) => s.id).join(', ')}` : ''}`);
  const exits = graph.nodes.filter((n) => n.kind === 'exit');
  if (exits.length === 0) throw new InvalidFlowError('graph', "has no exit node (id 'exit' or shape=Msquare)");
  const df = graph.attrs.default_fidelity;
  if (df !== undefined && !(FIDELITIES as readonly string[]).includes(df)) throw new InvalidFlowError('graph', `default_fidelity '${df}' is not one of ${FIDELITIES.join(', ')}`);
  if (graph.attrs.max_steps !== undefined && !(Number.isInteger(Number(graph.attrs.max_steps)) && Number(graph.attrs.max_steps) > 0)) {
    throw new InvalidFlowError('graph', `max_steps '${graph.attrs.max_steps}' is not a positive integer`);
  }

  for (const e of graph.edges) {
    for (const end of [e.from, e.to]) if (!ids.has(end)) throw new InvalidFlowError(edgeName(e), `unknown node '${end}'`, e.line);
    if (e.condition !== undefined) checkCondition(e.condition, edgeName(e), e.line, ids);
  }
  for (const n of graph.nodes) checkNode(graph, n);

  // Reachability: every node from the start, and an exit from every node (no dead ends).
  const reached = reach(graph, starts[0]!.id);
  for (const n of graph.nodes) if (!reached.has(n.id)) throw new InvalidFlowError(`node ${n.id}`, 'is unreachable from the start', n.line);
  if (!exits.some((x) => reached.has(x.id))) throw new InvalidFlowError('graph', 'no exit is reachable from the start');
  const toExit = reachBack(graph, new Set(exits.map((x) => x.id)));
  for (const n of graph.nodes) if (!toExit.has(n.id)) throw new InvalidFlowError(`node ${n.id}`, 'cannot reach an exit', n.line);

  for (const n of graph.nodes) if (n.kind === 'parallel') fanInFor(graph, n.id, byId);
}

/**
 * A node id names files (a command stage writes `.fh-flow/<id>-<visit>-<attempt>.out`) and goes into
 * the stage's shell command: an id with a path separator or `..` would write outside the run's
 * directory, a quote or control character would break the command.
 */
function checkNodeId(n: FlowNode): void {
  const why = unsafeIdReason(n.id);
  if (why) throw new InvalidFlowError(`node ${JSON.stringify(n.id)}`, `its id ${why}; ids name the node's files (${FLOW_OUTPUT_DIR}/<id>-<visit>-<attempt>.out), so use letters, digits, '_', '-' and single dots`, n.line);
}

function unsafeIdReason(id: string): string | undefined {
  if (id === '') return 'is empty';
  if (/[/\\]/.test(id)) return 'contains a path separator (/ or \\)';
  if (id.includes('..')) return "contains '..'";
  if (id.includes("'")) return "contains a quote (')";
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(id)) return 'contains a control character';
  return undefined;
}

function checkNode(graph: FlowGraph, n: FlowNode): void {
  const where = `node ${n.id}`;
  const out = outgoing(graph, n.id);
  const incoming = graph.edges.filter((e) => e.to === n.id);
  if (n.kind === 'start' && incoming.length) throw new InvalidFlowError(where, 'a start node has no incoming edges', n.line);
  if (n.kind === 'exit' && out.length) throw new InvalidFlowError(where, 'an exit node has no outgoing edges', n.line);
  if (n.kind !== 'exit' && out.length === 0) throw new InvalidFlowError(where, 'has no outgoing edge', n.line);
  if (n.kind === 'command' && !n.script) throw new InvalidFlowError(where, "a command node needs a 'script'", n.line);
  if (n.kind === 'agent' && !n.agent) throw new InvalidFlowError(where, "an agent node needs 'agent' (a registered agent's name)", n.line);
  if (n.kind === 'gate') {
    const keys = new Map<string, string>();
    for (const e of out) {
      if (!e.label) throw new InvalidFlowError(edgeName(e), "a gate's edges are its choices: each needs a label", e.line);
      if (!e.key) throw new InvalidFlowError(edgeName(e), `label '${e.label}' gives no accelerator key`, e.line);
      const prior = keys.get(e.key);
      if (prior) throw new InvalidFlowError(edgeName(e), `accelerator key '${e.key}' is also '${prior}'s (write '[K] Label' to choose one)`, e.line);
      keys.set(e.key, e.label);
    }
  }
  if (n.kind === 'parallel' && out.some((e) => e.condition !== undefined)) {
    throw new InvalidFlowError(where, 'a parallel node starts every branch: its edges take no condition', n.line);
  }
}

function checkCondition(text: string, where: string, line: number | undefined, ids: Set<string>): void {
  let clauses;
  try {
    clauses = conditionKeys(parseCondition(text));
  } catch (err) {
    if (err instanceof FlowConditionError) throw new InvalidFlowError(where, `condition '${text}' does not parse: ${err.problem}`, line);
    throw err;
  }
  for (const c of clauses) {
    for (const p of NODE_KEY_PREFIXES) {
      if (c.key.startsWith(p) && !ids.has(c.key.slice(p.length))) {
        throw new InvalidFlowError(where, `condition '${text}' reads '${c.key}', but there is no node '${c.key.slice(p.length)}'`, line);
      }
    }
    if (NODE_VALUED_KEYS.has(c.key) && !ids.has(c.value)) {
      throw new InvalidFlowError(where, `condition '${text}' compares ${c.key} with '${c.value}', which is not a node`, line);
    }
  }
}

function reach(graph: FlowGraph, from: string): Set<string> {
  const seen = new Set([from]);
  const todo = [from];
  while (todo.length) for (const e of outgoing(graph, todo.pop()!)) if (!seen.has(e.to)) (seen.add(e.to), todo.push(e.to));
  return seen;
}

function reachBack(graph: FlowGraph, to: Set<string>): Set<string> {
  const seen = new Set(to);
  const todo = [...to];
  while (todo.length) {
    const id = todo.pop()!;
    for (const e of graph.edges) if (e.to === id && !seen.has(e.from)) (seen.add(e.from), todo.push(e.from));
  }
  return seen;
}

/**
 * The fan-in where a parallel node's branches meet: the first fan_in node each branch reaches. Every
 * branch must reach the same one without passing an exit. A human gate inside a branch is fine: it
 * waits in the branch's workflow and the run answers it (workflows/flow-stages.ts).
 */
export function fanInFor(graph: FlowGraph, parallelId: string, byId = new Map(graph.nodes.map((n) => [n.id, n]))): string {
  const node = byId.get(parallelId)!;
  const found = new Set<string>();
  for (const e of outgoing(graph, parallelId)) {
    const seen = new Set<string>();
    const todo = [e.to];
    while (todo.length) {
      const id = todo.pop()!;
      if (seen.has(id)) continue;
      seen.add(id);
      const n = byId.get(id)!;
      if (n.kind === 'fan_in') {
        found.add(id);
        continue;
      }
      if (n.kind === 'exit') throw new InvalidFlowError(`node ${parallelId}`, `branch '${e.to}' reaches exit '${id}' before a fan_in node`, node.line);
      for (const o of outgoing(graph, id)) todo.push(o.to);
    }
  }
  if (found.size !== 1) throw new InvalidFlowError(`node ${parallelId}`, `its branches must meet at exactly one fan_in node, found ${found.size}${found.size ? `: ${[...found].join(', ')}` : ''}`, node.line);
  return [...found][0]!;
}
