/**
 * The flow activities' contract (types only: workflow code imports nothing else from here).
 */
import type { FlowContext } from '../core/flows/context';

export interface FlowCommitInput {
  workflowId: string;
  node: string;
  visit: number;
  attempt: number;
  /** Every key this stage set, in the form it had before the large-value rule. */
  updates: FlowContext;
  /** Offload values whose serialized JSON is over this many bytes. */
  offloadBytes: number;
}

export interface FlowCommitResult {
  /** Keys whose value was stored, with the pointer the context holds instead. */
  offloaded: Record<string, string>;
}

export interface FlowActivities {
  /**
   * Records one stage's context updates (the activity's input is the audit record, once, in history)
   * and stores the values over the threshold, answering their pointers.
   */
  fhFlowCommit(input: FlowCommitInput): Promise<FlowCommitResult>;
}
