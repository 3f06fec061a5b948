/**
 * The flow workflows' own activities (stage commits, branch worktrees, the run's cleanup), with their
 * options in one place, next to the ports every harness uses (temporal-ports.ts).
 */
import { proxyActivities, type ActivityOptions } from '@temporalio/workflow';
import type { FlowActivities } from '../wire/flow-activity-contract';

const retry = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 10 } as const;
/**
 * Short store and git calls. They heartbeat: with only the start-to-close bound, a worker killed in
 * the middle of one stalled the run for those 2 minutes.
 */
const options: ActivityOptions = { startToCloseTimeout: '2 minutes', heartbeatTimeout: '10s', retry };

function flowActivities(summary: string) {
  return proxyActivities<FlowActivities>({ ...options, summary });
}

export function createFlowPorts() {
  return {
    /** The stage's commit, named after it in the UI and in `temporal workflow show`. */
    commit: (input: Parameters<FlowActivities['fhFlowCommit']>[0]) => flowActivities(`flow stage ${input.node} #${input.visit}: context updates`).fhFlowCommit(input),
    branchWorkDir: (input: Parameters<FlowActivities['fhFlowBranchWorkDir']>[0]) => flowActivities(`flow branch ${input.name}: git worktree`).fhFlowBranchWorkDir(input),
    branchWorkDirDone: (input: Parameters<FlowActivities['fhFlowBranchWorkDirDone']>[0]) => flowActivities(`flow branch ${input.branch}: commit and remove the worktree`).fhFlowBranchWorkDirDone(input),
    cleanup: (input: Parameters<FlowActivities['fhFlowCleanup']>[0]) => flowActivities('flow: remove the command output files').fhFlowCleanup(input),
  };
}
export type FlowPorts = ReturnType<typeof createFlowPorts>;
