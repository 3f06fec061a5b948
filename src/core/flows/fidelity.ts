/**
 * Which fidelity a node runs at: the edge taken into it, else the node's own, else the graph's
 * default_fidelity, else `compact`. The first node after a resume runs `full` as `summary:high`: the
 * conversation it would continue is not in the new run.
 */
import type { Fidelity, FlowEdge, FlowGraph, FlowNode } from './graph';

export const DEFAULT_FIDELITY: Fidelity = 'compact';

export function resolveFidelity(graph: FlowGraph, node: FlowNode, via: FlowEdge | undefined, firstAfterResume = false): Fidelity {
  const chosen = via?.fidelity ?? node.fidelity ?? (graph.attrs.default_fidelity as Fidelity | undefined) ?? DEFAULT_FIDELITY;
  return firstAfterResume && chosen === 'full' ? 'summary:high' : chosen;
}
