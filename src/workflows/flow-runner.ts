/**
 * Walks a flow graph in workflow code: enters a node, runs its stage (activities, a child workflow, a
 * durable wait for a gate), commits the stage's context updates through one activity (their record
 * in history, under the stage), and routes. The flow workflow and each branch workflow run one.
 */
import { workflowInfo } from '@temporalio/workflow';
import { OFFLOAD_VALUE_BYTES, type FlowContext } from '../core/flows/context';
import { DEFAULT_MAX_STEPS, enteringKeys, outcomeUpdates, retryKeys, selectEdge, type Route } from '../core/flows/engine';
import { FlowStepLimitError } from '../core/flows/errors';
import type { FlowEvent, FlowEventInput } from '../core/flows/events';
import { resolveFidelity } from '../core/flows/fidelity';
import { nodeById, type FlowEdge, type FlowGraph, type FlowNode } from '../core/flows/graph';
import type { StageRecord, StageResult } from '../core/flows/stage';
import type { FlowRunSettings, NodeState } from '../wire/flow-messages';
import { FlowStages, type JoinResult, type StageHost } from './flow-stages';
import { publishStreamEvent } from './stream/publish';
import { createFlowPorts } from './flow-ports';

const flowPorts = createFlowPorts();

const EVENT_BUFFER = 1_000;

export class FlowRunner implements StageHost {
  readonly stages: StageRecord[];
  readonly nodeStates: Record<string, NodeState> = {};
  readonly events: FlowEvent[] = [];
  readonly visits = new Map<string, number>();
  current: string | undefined;
  /** The join of the last fan-out, for its fan-in stage. */
  lastJoin: JoinResult | undefined;
  /** Keys to commit with the next stage (a resumed run's new identity). */
  private pending: FlowContext = {};
  private seq = 0;
  readonly handlers: FlowStages;

  constructor(
    readonly graph: FlowGraph,
    readonly settings: FlowRunSettings,
    readonly ctx: FlowContext,
    stages: StageRecord[],
    /** The bundle's agent set: tool calls go to its tool queue (wire/tool-queue.ts). */
    readonly toolSet?: string,
  ) {
    this.stages = [...stages];
    for (const s of stages) {
      this.visits.set(s.node, Math.max(this.visits.get(s.node) ?? 0, s.visit));
      this.nodeStates[s.node] = s.status;
    }
    for (const n of graph.nodes) this.nodeStates[n.id] ??= 'pending';
    this.handlers = new FlowStages(this);
  }

  get runId(): string {
    return workflowInfo().workflowId;
  }

  /** Sets keys now (visible to the next stage) and commits them with it. */
  stageLater(updates: FlowContext): void {
    Object.assign(this.ctx, updates);
    Object.assign(this.pending, updates);
  }

  emit(event: FlowEventInput): void {
    const full = { ...event, seq: ++this.seq } as FlowEvent;
    this.events.push(full);
    // Also on the run's stream (workflow state, never history), where clients follow it live.
    publishStreamEvent({ type: 'custom', name: full.type, data: full });
    if (this.events.length > EVENT_BUFFER) this.events.splice(0, this.events.length - EVENT_BUFFER);
  }

  /**
   * Runs from `from` until an exit (returned) or until `stopAt` is next (a branch's fan-in: returned
   * without running it). `firstAfterResume` degrades the first node's `full` fidelity.
   */
  async run(from: FlowNode, options: { stopAt?: string; via?: FlowEdge; firstAfterResume?: boolean } = {}): Promise<FlowNode> {
    let node = from;
    let via = options.via;
    let resumed = options.firstAfterResume === true;
    const maxSteps = Number(this.graph.attrs.max_steps ?? DEFAULT_MAX_STEPS);
    for (let steps = 1; ; steps++) {
      if (options.stopAt !== undefined && node.id === options.stopAt) return node;
      if (steps > maxSteps) throw new FlowStepLimitError(maxSteps, node.id);
      const preferred = await this.runStage(node, via, resumed);
      resumed = false;
      if (node.kind === 'exit') return node;
      const next = this.route(node, preferred);
      node = next.to;
      via = next.edge;
    }
  }

  private route(node: FlowNode, preferred: string | undefined): Route {
    if (node.kind === 'parallel') {
      // After the join the run continues at the fan-in, whichever branch edge led there.
      return { edge: { from: node.id, to: this.lastJoin!.fanIn }, to: nodeById(this.graph, this.lastJoin!.fanIn)! };
    }
    if (node.kind === 'gate') {
      const label = this.ctx['human.gate.label'];
      const edge = this.graph.edges.find((e) => e.from === node.id && e.label === label)!;
      return { edge, to: nodeById(this.graph, edge.to)! };
    }
    return selectEdge(this.graph, node, this.ctx, preferred);
  }

  /** One stage: enter, attempt (with retries), commit, record. Returns the label it prefers to route by. */
  private async runStage(node: FlowNode, via: FlowEdge | undefined, resumed: boolean): Promise<string | undefined> {
    const visit = (this.visits.get(node.id) ?? 0) + 1;
    this.visits.set(node.id, visit);
    const fidelity = resolveFidelity(this.graph, node, via, resumed);
    this.current = node.id;
    const updates: FlowContext = { ...this.pending, ...enteringKeys(node, fidelity, visit, node.threadId) };
    this.pending = {};
    Object.assign(this.ctx, updates);
    this.nodeStates[node.id] = 'running';
    this.emit({ type: 'flow.stage_started', node: node.id, visit, fidelity });

    const maxRetries = node.maxRetries ?? 0;
    let attempt = 1;
    let result: StageResult;
    for (;;) {
      result = await this.handlers.run({ node, visit, attempt, fidelity, via });
      if (result.status === 'success' || attempt > maxRetries) break;
      const retry = retryKeys(node, attempt);
      Object.assign(this.ctx, retry);
      Object.assign(updates, retry);
      attempt += 1;
    }
    const stageUpdates = isPassThrough(node) ? {} : outcomeUpdates(node, result);
    Object.assign(updates, stageUpdates);
    const { offloaded } = await flowPorts.commit({ workflowId: this.runId, node: node.id, visit, attempt, updates, offloadBytes: OFFLOAD_VALUE_BYTES });
    Object.assign(updates, offloaded);
    Object.assign(this.ctx, updates);

    const record: StageRecord = {
      node: node.id,
      kind: node.kind,
      visit,
      attempts: attempt,
      status: isPassThrough(node) ? ((this.ctx.outcome as 'success' | 'fail' | undefined) ?? 'success') : result.status,
      fidelity,
      ...(node.threadId !== undefined ? { threadId: node.threadId } : {}),
      ...result.record,
      updated: Object.keys(updates),
    };
    if (record.command) record.command = { ...record.command, stdout: this.ctx['command.output'] ?? '', stderr: this.ctx['command.stderr'] ?? '' };
    this.stages.push(record);
    this.nodeStates[node.id] = record.status;
    this.emit({ type: 'flow.context_updated', node: node.id, keys: Object.keys(updates) });
    this.emit({ type: 'flow.stage_finished', node: node.id, visit, status: record.status });
    return result.preferredLabel;
  }
}

/** Nodes that do no work of their own: they keep the last stage's outcome. */
function isPassThrough(node: FlowNode): boolean {
  return node.kind === 'start' || node.kind === 'exit' || node.kind === 'route';
}
