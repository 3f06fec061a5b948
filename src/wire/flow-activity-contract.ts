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

export interface FlowActivities extends FlowGitActivities {
  /**
   * Records one stage's context updates (the activity's input is the audit record, once, in history)
   * and stores the values over the threshold, answering their pointers.
   */
  fhFlowCommit(input: FlowCommitInput): Promise<FlowCommitResult>;
}

/** A parallel branch's working directory: a git worktree of the run's work dir, or that dir itself. */
export type BranchWorkDir =
  | { kind: 'worktree'; path: string; root: string; branch: string; base: string }
  | { kind: 'shared'; reason: string };

export interface BranchWorktreeDoneInput {
  /** The run's work dir (the repository the worktree belongs to). */
  workDir: string;
  path: string;
  root: string;
  branch: string;
  base: string;
}

export interface FlowGitActivities {
  /**
   * A worktree for one branch, on a branch named `name` (from the run and the branch node), from a
   * snapshot commit of the work dir as it is at the fan-out; `shared` (with why) when the work dir is
   * not in a git repository.
   */
  fhFlowBranchWorkDir(input: { workDir: string; name: string }): Promise<BranchWorkDir>;
  /** Commits the branch's changes on its branch, removes the worktree, answers the branch's head. */
  fhFlowBranchWorkDirDone(input: BranchWorktreeDoneInput): Promise<{ branch: string; headSha: string }>;
  /** Removes the run's command output files (`.fh-flow/`) from the work dir at the run's end. */
  fhFlowCleanup(input: { workDir: string }): Promise<void>;
}
