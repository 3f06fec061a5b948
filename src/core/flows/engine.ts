/**
 * The engine's pure steps, shared by the flow workflow and its branch workflows: the keys it manages,
 * entering a node, turning a stage's outcome into context updates, and choosing the edge out. Routing:
 * the first conditioned edge whose condition holds wins; else an unconditioned edge (the one labelled
 * as preferred, if any, else the first). A failed stage continues only along a condition that matched
 * or into a route node (a diamond exists to route failures); otherwise the run fails at that stage.
 */
import { hashString } from '../hash';
import { evaluateCondition, normalizeKey, parseCondition } from './conditions';
import { truncateResponse, type ContextValue, type FlowContext } from './context';
import { FlowNoRouteError, FlowStageFailedError, UnknownGateChoiceError } from './errors';
import { nodeById, outgoing, type Fidelity, type FlowEdge, type FlowGraph, type FlowNode } from './graph';
import type { StageRecord, StageResult } from './stage';

/** Stages a run may take before FLOW_STEP_LIMIT (graph attribute max_steps). */
export const DEFAULT_MAX_STEPS = 500;

/** graph.{attr} for every graph attribute (graph.goal among them) and the run's identity. */
export function initialEngineKeys(graph: FlowGraph, runId: string, workDir: string): FlowContext {
  const out: FlowContext = {};
  for (const [k, v] of Object.entries(graph.attrs)) out[`graph.${k}`] = v;
  out['internal.run_id'] = runId;
  out['internal.work_dir'] = workDir;
  return out;
}

/** The keys set as a node starts. */
export function enteringKeys(node: FlowNode, fidelity: Fidelity, visit: number, threadId: string | undefined): FlowContext {
  return {
    current_node: node.id,
    'internal.fidelity': fidelity,
    'internal.thread_id': threadId ?? null,
    'internal.node_visit_count': visit,
  };
}

/** The keys a retry sets. */
export function retryKeys(node: FlowNode, retries: number): FlowContext {
  return { [`internal.retry_count.${node.id}`]: retries };
}

/** A stage's outcome as context updates: the handler's keys, then outcome and the failure keys. */
export function outcomeUpdates(node: FlowNode, result: StageResult): FlowContext {
  const out: FlowContext = { ...result.updates, outcome: result.status };
  if (result.record.failure) {
    out.failure_class = result.record.failure.class;
    out.failure_signature = result.record.failure.signature;
  }
  if (result.preferredLabel !== undefined) out.preferred_label = result.preferredLabel;
  void node;
  return out;
}

/** What an agent/prompt node's reply sets. */
export function responseKeys(node: FlowNode, reply: string): FlowContext {
  return { last_stage: node.id, last_response: truncateResponse(reply), [`response.${node.id}`]: reply };
}

/** A failure's class and a signature that is equal for the same failure at the same node (for dedup). */
export function failure(node: FlowNode, failureClass: string, detail: string): { class: string; signature: string; detail: string } {
  const firstLine = detail.split('\n').find((l) => l.trim() !== '') ?? '';
  return { class: failureClass, signature: hashString(`${node.id}|${failureClass}|${firstLine.trim()}`), detail };
}

/** Reads a context key for conditions (`outcome`, `context.x`, `internal.node_visit_count`, …). */
export function lookup(ctx: FlowContext): (key: string) => ContextValue | undefined {
  return (key) => ctx[normalizeKey(key)];
}

export interface Route {
  edge: FlowEdge;
  to: FlowNode;
}

/** The edge out of `node` the context selects (see the module comment for the rules). */
export function selectEdge(graph: FlowGraph, node: FlowNode, ctx: FlowContext, preferredLabel?: string): Route {
  const edges = outgoing(graph, node.id);
  const read = lookup(ctx);
  const failed = ctx.outcome === 'fail';
  for (const e of edges) {
    if (e.condition !== undefined && evaluateCondition(parseCondition(e.condition), read)) return route(graph, e);
  }
  const plain = edges.filter((e) => e.condition === undefined);
  const preferred = preferredLabel !== undefined ? plain.find((e) => e.label === preferredLabel) : undefined;
  const chosen = preferred ?? plain[0];
  if (!chosen) throw new FlowNoRouteError(node.id, String(ctx.outcome ?? '(none)'));
  if (failed && nodeById(graph, chosen.to)?.kind !== 'route' && node.kind !== 'route') {
    throw new FlowStageFailedError(node.id, String(ctx.failure_class ?? 'fail'), 'its outcome is fail and no condition routes it');
  }
  return route(graph, chosen);
}

function route(graph: FlowGraph, edge: FlowEdge): Route {
  return { edge, to: nodeById(graph, edge.to)! };
}

/** A gate's choices, in edge order. */
export function gateChoices(graph: FlowGraph, gate: FlowNode): Array<{ key: string; label: string; freeform: boolean; to: string }> {
  return outgoing(graph, gate.id).map((e) => ({ key: e.key ?? '', label: e.label ?? e.to, freeform: e.freeform === true, to: e.to }));
}

/**
 * The choice an answer names: its accelerator key or its label (case-insensitive), or `freeform` for
 * the gate's free-text choice. Anything else is UnknownGateChoiceError (and the gate keeps waiting).
 */
export function matchGateChoice(graph: FlowGraph, gate: FlowNode, choice: string, text?: string): { selected: string; label: string; to: string; text?: string } {
  const choices = gateChoices(graph, gate);
  const c = choice.trim().toLowerCase();
  if (c === 'freeform') {
    const free = choices.find((x) => x.freeform);
    if (free && text !== undefined) return { selected: 'freeform', label: free.label, to: free.to, text };
  }
  const hit = choices.find((x) => x.key.toLowerCase() === c || x.label.toLowerCase() === c || stripKey(x.label).toLowerCase() === c);
  if (!hit) throw new UnknownGateChoiceError(gate.id, choice, choices.map((x) => `${x.key} (${x.label})${x.freeform ? ' [freeform]' : ''}`));
  return text !== undefined ? { selected: hit.key, label: hit.label, to: hit.to, text } : { selected: hit.key, label: hit.label, to: hit.to };
}

/** What a gate's decision sets. */
export function gateKeys(decision: { selected: string; label: string; text?: string }): FlowContext {
  const out: FlowContext = { 'human.gate.selected': decision.selected, 'human.gate.label': decision.label };
  if (decision.text !== undefined) out['human.gate.text'] = decision.text;
  return out;
}

function stripKey(label: string): string {
  return label.replace(/^\s*\[[A-Za-z0-9]\]\s*/, '');
}

/** The records of stages that completed, for the preamble (a stage revisited shows its latest visit). */
export function completedStages(stages: readonly StageRecord[]): StageRecord[] {
  const last = new Map<string, StageRecord>();
  for (const s of stages) {
    last.delete(s.node);
    last.set(s.node, s);
  }
  return [...last.values()];
}
