/**
 * The flow workflows. `fhFlow` runs a flow: it validates the graph first (nothing starts on a bad
 * one), answers the state query and the gate update, and fails typed (FLOW_STAGE_FAILED, …) where
 * the run cannot go on; `fh flow resume` starts a new run from the failed one's saved context.
 * `fhFlowBranch` runs one parallel branch from its first node to the fan-in, on its own copy of
 * the context, and returns what it changed.
 */
import { allHandlersFinished, condition, setHandler } from '@temporalio/workflow';
import { checkUserContext, diffContext, type FlowContext } from '../core/flows/context';
import { initialEngineKeys, gateChoices } from '../core/flows/engine';
import { FlowStageFailedError } from '../core/flows/errors';
import { flowGraphSchema, nodeById, startNode, type FlowGraph } from '../core/flows/graph';
import { validateFlow } from '../core/flows/validate';
import { FabricError } from '../core/errors';
import { parseWith } from '../core/validate';
import { encodeFailure, rejectWith } from '../wire/failures';
import { flowGateUpdate, flowStateQuery, type BranchInput, type BranchResult, type FlowInput, type FlowResult, type FlowState } from '../wire/flow-messages';
import { FlowRunner } from './flow-runner';

export async function fhFlow(input: FlowInput): Promise<FlowResult> {
  let runner: FlowRunner | undefined;
  let status: FlowState['status'] = 'running';
  let failure: { node?: string; message: string } | undefined;
  setHandler(flowStateQuery, () => stateOf(runner, status, failure));
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
    runner = new FlowRunner(graph, { workDir: input.workDir, model: input.model, system: input.system }, ctx, resume?.stages ?? []);
    // The run's identity, then the user's values: committed with the first stage, under it.
    runner.stageLater({ ...initialEngineKeys(graph, runner.runId, input.workDir), ...(resume ? { 'internal.resumed_from': resume.fromWorkflowId } : (input.context ?? {})) });
    const from = resume ? nodeById(graph, resume.node)! : startNode(graph);
    const exit = await runner.run(from, { firstAfterResume: resume !== undefined });
    status = 'completed';
    await condition(allHandlersFinished);
    return { exit: exit.id, context: runner.ctx, stages: runner.stages.length };
  } catch (err) {
    status = 'failed';
    failure = { ...(runner?.current !== undefined ? { node: err instanceof FlowStageFailedError ? err.node : runner.current } : {}), message: err instanceof Error ? err.message : String(err) };
    await condition(allHandlersFinished);
    throw encodeFailure(err);
  }
}

export async function fhFlowBranch(input: BranchInput): Promise<BranchResult> {
  const graph = checkedGraph(input.graph);
  const runner = new FlowRunner(graph, { workDir: input.workDir, model: input.model, system: input.system }, { ...input.context }, input.stages);
  const from = nodeById(graph, input.start)!;
  const via = graph.edges.find((e) => e.to === input.start && nodeById(graph, e.from)?.kind === 'parallel');
  const own = (): BranchResult['stages'] => runner.stages.slice(input.stages.length);
  try {
    await runner.run(from, { stopAt: input.stopAt, ...(via ? { via } : {}) });
    return { id: input.start, outcome: 'success', updates: diffContext(input.context, runner.ctx), stages: own() };
  } catch (err) {
    // A stage that failed ends the branch as failed (the fan-in weighs it); anything else fails the workflow.
    if (!(err instanceof FabricError)) throw err;
    return {
      id: input.start,
      outcome: 'fail',
      updates: diffContext(input.context, runner.ctx),
      stages: own(),
      failure: { node: err instanceof FlowStageFailedError ? err.node : (runner.current ?? input.start), message: err.message },
    };
  }
}

/** The graph as the workflow's input: its shape, then the same checks the client ran. */
function checkedGraph(raw: FlowGraph): FlowGraph {
  const graph = parseWith(flowGraphSchema, raw, 'flow graph') as FlowGraph;
  validateFlow(graph);
  return graph;
}

function stateOf(runner: FlowRunner | undefined, status: FlowState['status'], failure: { node?: string; message: string } | undefined): FlowState {
  const waiting = runner?.handlers.waiting;
  return {
    ...(runner ? { graph: runner.graph, settings: runner.settings } : {}),
    status: waiting && status === 'running' ? 'waiting' : status,
    ...(runner?.current !== undefined ? { currentNode: runner.current } : {}),
    context: runner?.ctx ?? {},
    stages: runner?.stages ?? [],
    nodeStates: runner?.nodeStates ?? {},
    ...(waiting ? { waitingGate: { node: waiting.node.id, choices: gateChoices(runner!.graph, waiting.node).map(({ key, label, freeform }) => ({ key, label, freeform })) } } : {}),
    ...(failure?.node !== undefined ? { failedNode: failure.node } : {}),
    ...(failure ? { failure: failure.message } : {}),
    events: runner?.events ?? [],
  };
}
