/**
 * Flow events, in run order: a stage starting and finishing, the context updated, a gate waiting and
 * decided, a branch started and joined. Kept in the workflow's state (the flow state query returns
 * them) until the shared run stream lands; their shapes are these.
 */
import type { StageStatus } from './stage';

export type FlowEvent =
  | { type: 'flow.stage_started'; seq: number; node: string; visit: number; fidelity?: string }
  | { type: 'flow.stage_finished'; seq: number; node: string; visit: number; status: StageStatus }
  | { type: 'flow.context_updated'; seq: number; node: string; keys: string[] }
  | { type: 'flow.gate_waiting'; seq: number; node: string; choices: string[]; branch?: string }
  | { type: 'flow.gate_decided'; seq: number; node: string; selected: string; label: string; branch?: string }
  | { type: 'flow.branch_started'; seq: number; node: string; branch: string; workflowId: string }
  | { type: 'flow.branch_joined'; seq: number; node: string; branch: string; outcome: string; gitBranch?: string; headSha?: string; sharedWorkDir?: string };

export type FlowEventType = FlowEvent['type'];

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
export type FlowEventInput = DistributiveOmit<FlowEvent, 'seq'>;
