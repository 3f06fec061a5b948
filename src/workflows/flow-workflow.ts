/**
 * The flow workflows. `fhFlow` runs a flow: it validates the graph first (nothing starts on a bad
 * one), answers the state query and the gate update, and fails typed (FLOW_STAGE_FAILED, …) where
 * the run cannot go on; `fh flow resume` starts a new run from the failed one's saved context.
 * `fhFlowBranch` runs one parallel branch from its first node to the fan-in, on its own copy of
 * the context, and returns what it changed.
 */
import { allHandlersFinished, CancellationScope, CancelledFailure, condition, getExternalWorkflowHandle, isCancellation, patched, setHandler, workflowInfo } from '@temporalio/workflow';
import { checkUserContext, diffContext, type FlowContext } from '../core/flows/context';
import { initialEngineKeys } from '../core/flows/engine';
import { FlowStageFailedError } from '../core/flows/errors';
import { flowGraphSchema, nodeById, startNode, type FlowGraph } from '../core/flows/graph';
import { validateFlow } from '../core/flows/validate';
import { FabricError } from '../core/errors';
import { parseWith } from '../core/validate';
import { encodeFailure, rejectWith } from '../wire/failures';
import { FLOW_GATES_MEMO_KEY, flowBranchGateSignal, flowGateAnswerSignal, flowGateUpdate, flowStateQuery, type BranchGateNotice, type BranchInput, type BranchResult, type FlowInput, type FlowResult, type FlowState } from '../wire/flow-messages';
import { FlowRunner } from './flow-runner';
import { memoMirror } from './memo-mirror';
import { createFlowPorts } from './flow-ports';

const flowPorts = createFlowPorts();
/** Since this patch each parallel branch runs in a git worktree of the work dir, when it is in a repository. */
const BRANCH_WORKTREE_PATCH = 'fh-flow-branch-worktree';
/** Since this patch a run removes its command output files (`.fh-flow/`) from the work dir when it ends. */
const CLEANUP_PATCH = 'fh-flow-cleanup';
/** Since this patch a run keeps the gates it waits at in its memo (FLOW_GATES_MEMO_KEY). */
const GATES_MEMO_PATCH = 'fh-flow-gates-memo';
/**
 * Since this patch a run checks its node ids as the client does (no path separator, `..`, quote or
 * control character: ids name the command stages' files). Earlier runs did not, and replay so.
 */
const NODE_IDS_PATCH = 'fh-flow-node-ids';

export async function fhFlow(input: FlowInput, toolSet?: string): Promise<FlowResult> {
  let runner: FlowRunner | undefined;
  let status: FlowState['status'] = 'running';
  let failure: { node?: string; message: string } | undefined;
  setHandler(flowStateQuery, () => stateOf(runner, status, failure));
  // A gate inside a parallel branch waits in the branch workflow; the run answers it (see FlowStages).
  setHandler(flowBranchGateSignal, (notice) => runner?.handlers.branchGateWaiting(notice));
  setHandler(flowGateUpdate, (answer) => runner!.handlers.decideGate(answer), {
    validator: (answer) => rejectWith(() => {
      if (!runner) throw new FabricError('FLOW_NOT_WAITING', 'The flow is not waiting at a gate.');
      runner.handlers.validateGate(answer);
    }),
  });
  try {
    const graph = checkedGraph(input.graph);
    const resume = input.resume;
    const ctx: FlowContext = resume ? { ...resume.context } : {};
    if (!resume && input.context) {
      checkUserContext(input.context);
    }
    runner = new FlowRunner(graph, { workDir: input.workDir, model: input.model, system: input.system }, ctx, resume?.stages ?? [], toolSet);
    runner.handlers.onWaitingChanged = gatesInMemo(runner);
    // The run's identity, then the user's values: committed with the first stage, under it.
    runner.stageLater({ ...initialEngineKeys(graph, runner.runId, input.workDir), ...(resume ? { 'internal.resumed_from': resume.fromWorkflowId } : (input.context ?? {})) });
    const from = resume ? nodeById(graph, resume.node)! : startNode(graph);
    const exit = await runner.run(from, { firstAfterResume: resume !== undefined });
    await cleanUp(input.workDir);
    status = 'completed';
    await condition(allHandlersFinished);
    return { exit: exit.id, context: runner.ctx, stages: runner.stages.length };
  } catch (err) {
    if (runner && !isCancellation(err)) await cleanUp(input.workDir);
    status = 'failed';
    failure = { ...(runner?.current !== undefined ? { node: err instanceof FlowStageFailedError ? err.node : runner.current } : {}), message: err instanceof Error ? err.message : String(err) };
    await condition(allHandlersFinished);
    throw encodeFailure(err);
  }
}

export async function fhFlowBranch(input: BranchInput, toolSet?: string): Promise<BranchResult> {
  const graph = checkedGraph(input.graph);
  // Its own git worktree of the work dir (activities do the git work), or the shared dir, said so.
  const dir = patched(BRANCH_WORKTREE_PATCH) ? await flowPorts.branchWorkDir({ workDir: input.workDir, name: workflowInfo().workflowId }) : undefined;
  const workDir = dir?.kind === 'worktree' ? dir.path : input.workDir;
  const runner = new FlowRunner(graph, { workDir, ...(input.model ? { model: input.model } : {}), ...(input.system ? { system: input.system } : {}) }, { ...input.context }, input.stages, toolSet);
  const from = nodeById(graph, input.start)!;
  const via = graph.edges.find((e) => e.to === input.start && nodeById(graph, e.from)?.kind === 'parallel');
  const own = (): BranchResult['stages'] => runner.stages.slice(input.stages.length);
  // Gates: this branch's and nested branches' are told to the parent (on up to the run), which
  // validates the answer and signals it to the branch workflow that waits.
  const tellParent = async (notice: BranchGateNotice): Promise<void> => {
    const parent = workflowInfo().parent;
    if (parent) await getExternalWorkflowHandle(parent.workflowId).signal(flowBranchGateSignal, notice);
  };
  runner.handlers.onGateWaiting = (node) => tellParent({ workflowId: workflowInfo().workflowId, branch: input.start, node: node.id });
  setHandler(flowBranchGateSignal, (notice) => void tellParent(notice).catch(() => undefined)); // the parent gone: no one to tell
  setHandler(flowGateAnswerSignal, (answer) => runner.handlers.answerFromRun(answer));
  // The worktree is committed and removed however the branch ends (cancelled too: not cancellable).
  const finish = async (): Promise<BranchResult['workDir']> => {
    if (dir === undefined) return undefined;
    if (dir.kind === 'shared') return { shared: dir.reason };
    const done = await CancellationScope.nonCancellable(() => flowPorts.branchWorkDirDone({ workDir: input.workDir, path: dir.path, root: dir.root, branch: dir.branch, base: dir.base }));
    return { branch: done.branch, headSha: done.headSha };
  };
  let result: BranchResult;
  try {
    await runner.run(from, { stopAt: input.stopAt, ...(via ? { via } : {}) });
    result = { id: input.start, outcome: 'success', updates: diffContext(input.context, runner.ctx), stages: own() };
  } catch (err) {
    // A stage that failed ends the branch as failed (the fan-in weighs it); anything else fails the workflow.
    // Cancelled (first_success): the ports report a cancelled activity as INTERRUPTED, a FabricError.
    if (!(err instanceof FabricError) || CancellationScope.current().consideredCancelled) {
      await finish();
      throw CancellationScope.current().consideredCancelled && !isCancellation(err) ? new CancelledFailure('the branch was cancelled') : err;
    }
    result = {
      id: input.start,
      outcome: 'fail',
      updates: diffContext(input.context, runner.ctx),
      stages: own(),
      failure: { node: err instanceof FlowStageFailedError ? err.node : (runner.current ?? input.start), message: err.message },
    };
  }
  const workDirResult = await finish();
  return workDirResult ? { ...result, workDir: workDirResult } : result;
}

/** The run's command output files, removed when it ends (runs recorded before the patch keep them). */
async function cleanUp(workDir: string): Promise<void> {
  if (!patched(CLEANUP_PATCH)) return;
  try {
    await flowPorts.cleanup({ workDir });
  } catch (err) {
    // Leftover files do not fail a run (nor hide why it failed); a cancellation still ends it.
    if (isCancellation(err)) throw err;
  }
}

/** Keeps the gates the run waits at in its memo (see ./memo-mirror). */
function gatesInMemo(runner: FlowRunner): () => void {
  const mirror = memoMirror<string>(FLOW_GATES_MEMO_KEY, GATES_MEMO_PATCH);
  return () => mirror(runner.handlers.waitingGates().map((g) => g.node));
}

/** The graph as the workflow's input: its shape, then the same checks the client ran. */
function checkedGraph(raw: FlowGraph): FlowGraph {
  const graph = parseWith(flowGraphSchema, raw, 'flow graph') as FlowGraph;
  validateFlow(graph, { nodeIds: patched(NODE_IDS_PATCH) });
  return graph;
}

function stateOf(runner: FlowRunner | undefined, status: FlowState['status'], failure: { node?: string; message: string } | undefined): FlowState {
  const gates = runner?.handlers.waitingGates() ?? [];
  return {
    ...(runner ? { graph: runner.graph, settings: runner.settings } : {}),
    status: gates.length > 0 && status === 'running' ? 'waiting' : status,
    ...(runner?.current !== undefined ? { currentNode: runner.current } : {}),
    context: runner?.ctx ?? {},
    stages: runner?.stages ?? [],
    nodeStates: runner?.nodeStates ?? {},
    ...(gates.length > 0 && status === 'running' ? { waitingGate: gates[0]!, waitingGates: gates } : {}),
    ...(failure?.node !== undefined ? { failedNode: failure.node } : {}),
    ...(failure ? { failure: failure.message } : {}),
    events: runner?.events ?? [],
  };
}
