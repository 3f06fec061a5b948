/**
 * The wire contract of flow runs: the workflow types, their inputs and results, the state query and
 * the gate update, defined once for the workflow's handlers and the client handle.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { FlowContext } from '../core/flows/context';
import type { FlowEvent } from '../core/flows/events';
import type { FlowGraph } from '../core/flows/graph';
import type { StageRecord, StageStatus } from '../core/flows/stage';

export const FLOW_WORKFLOW = 'fhFlow';
export const FLOW_BRANCH_WORKFLOW = 'fhFlowBranch';
/** Memo key naming the flow's graph (for listings). */
export const FLOW_MEMO_KEY = 'fh.flow';
/**
 * Memo key of the gates a run waits at (their node ids), set while it waits and removed when none does:
 * a list of runs tells waiting from running without a query to each run. Runs started before 0.6.4
 * (patch fh-flow-gates-memo) never set it.
 */
export const FLOW_GATES_MEMO_KEY = 'fh.flow.gates';

export interface FlowRunSettings {
  /** Where command nodes run and prompt nodes' tools work (the sandbox directory on the worker). */
  workDir: string;
  /** Model for prompt nodes (default: the worker's). */
  model?: string;
  /** System prompt for prompt nodes. */
  system?: string;
}

export interface FlowInput extends FlowRunSettings {
  graph: FlowGraph;
  /** Values the run starts with (`--set`); engine keys are refused. */
  context?: FlowContext;
  /** Resuming a failed run: start at `node` with the saved context and stage records. */
  resume?: { fromWorkflowId: string; node: string; context: FlowContext; stages: StageRecord[] };
}

export interface BranchInput extends FlowRunSettings {
  graph: FlowGraph;
  /** The branch's first node, and the fan-in where it stops. */
  start: string;
  stopAt: string;
  /** The isolated deep copy of the parent's context at the fan-out. */
  context: FlowContext;
  stages: StageRecord[];
}

export interface BranchResult {
  id: string;
  outcome: StageStatus;
  /** The keys the branch changed (its copy against the one it was given). */
  updates: FlowContext;
  stages: StageRecord[];
  failure?: { node: string; message: string };
  /**
   * Where it worked: its git branch and head commit (a worktree of the run's work dir), or the shared
   * work dir and why (not a git repository). Absent for branches run before worktrees (0.5.0).
   */
  workDir?: { branch: string; headSha: string } | { shared: string };
}

export interface FlowResult {
  exit: string;
  context: FlowContext;
  stages: number;
}

export type NodeState = 'pending' | 'running' | 'waiting' | 'success' | 'fail';

export interface FlowState {
  /** The graph being run and its settings (what `fh flow resume` restarts with). */
  graph?: FlowGraph;
  settings?: FlowRunSettings;
  status: 'running' | 'waiting' | 'completed' | 'failed';
  currentNode?: string;
  context: FlowContext;
  stages: StageRecord[];
  nodeStates: Record<string, NodeState>;
  /** The gate an answer without `gate` or `branch` goes to: the run's own, else a branch's (`branch` set). */
  waitingGate?: WaitingGate;
  /** Every gate waiting, the run's own and those inside parallel branches. */
  waitingGates?: WaitingGate[];
  /** The stage the run failed at (resume starts there). */
  failedNode?: string;
  failure?: string;
  events: FlowEvent[];
}

export interface WaitingGate {
  node: string;
  choices: Array<{ key: string; label: string; freeform: boolean }>;
  /** The parallel branch (its first node) the gate waits in; absent for the run's own gate. */
  branch?: string;
}

export interface GateAnswer {
  choice: string;
  text?: string;
  /** The gate meant (optional): an answer for another gate than the one waiting is refused. */
  gate?: string;
  /** The parallel branch (its first node) whose gate is meant, when gates wait in several. */
  branch?: string;
}

/** A branch workflow's gate, told to its parent (and on up): the run answers it by signalling `workflowId`. */
export interface BranchGateNotice {
  workflowId: string;
  branch: string;
  node: string;
}

export interface GateDecision {
  gate: string;
  selected: string;
  label: string;
}

export const flowStateQuery = defineQuery<FlowState>('fh.flow.state');
export const flowGateUpdate = defineUpdate<GateDecision, [GateAnswer]>('fh.flow.gate');
/** From a branch workflow to its parent: a gate waits in it (relayed up to the run). */
export const flowBranchGateSignal = defineSignal<[BranchGateNotice]>('fh.flow.branch_gate');
/** From the run to the branch workflow whose gate it answers (validated by the run first). */
export const flowGateAnswerSignal = defineSignal<[GateAnswer]>('fh.flow.gate_answer');
