/**
 * Starting and driving flow runs from a client: start (the DOT is parsed and validated here, before
 * anything starts), the state query, gate answers (an update: a refused one is a typed error at
 * once and the gate keeps waiting), and resuming a failed run from its saved context.
 */
import { WorkflowNotFoundError, type Client, type WorkflowHandle } from '@temporalio/client';
import { checkUserContext, type FlowContext } from '../core/flows/context';
import { parseFlow } from '../core/flows/dot';
import { FabricError } from '../core/errors';
import { FlowNotWaitingError } from '../core/flows/errors';
import { flowGraphSchema, type FlowGraph } from '../core/flows/graph';
import { validateFlow } from '../core/flows/validate';
import { parseWith } from '../core/validate';
import { typedFailure } from '../wire/failures';
import {
  FLOW_MEMO_KEY,
  FLOW_WORKFLOW,
  flowGateUpdate,
  flowStateQuery,
  type FlowInput,
  type FlowResult,
  type FlowState,
  type GateDecision,
} from '../wire/flow-messages';
import { DEFAULT_TASK_QUEUE } from './start';
import { guardClose, untilClosed } from './connection-close';
import { streamOf, type StreamOptions } from './stream/handles';
import type { StreamEnvelope } from '../wire/stream';

export interface StartFlowOptions {
  /** The sandbox directory on the worker: command nodes run there, prompt nodes' tools work there. */
  workDir: string;
  workflowId?: string;
  taskQueue?: string;
  /** Overrides the graph's goal attribute. */
  goal?: string;
  /** Initial context values (`--set`); engine keys (internal.*, graph.*, outcome, …) are refused. */
  context?: FlowContext;
  model?: string;
  system?: string;
}

/** A flow's DOT text or typed graph, checked: the typed graph, or a typed error naming the element and line. */
export function loadFlow(flow: string | FlowGraph): FlowGraph {
  if (typeof flow === 'string') return parseFlow(flow);
  const graph = parseWith(flowGraphSchema, flow, 'flow graph') as FlowGraph;
  validateFlow(graph);
  return graph;
}

export async function startFlow(client: Client, flow: string | FlowGraph, options: StartFlowOptions): Promise<FlowHandle> {
  const graph = loadFlow(flow);
  if (options.goal !== undefined) graph.attrs = { ...graph.attrs, goal: options.goal };
  if (options.context) checkUserContext(options.context);
  const input: FlowInput = {
    graph,
    workDir: options.workDir,
    ...(options.context ? { context: options.context } : {}),
    ...(options.model ? { model: options.model } : {}),
    ...(options.system ? { system: options.system } : {}),
  };
  const workflowId = options.workflowId ?? `flow-${slug(graph.name)}-${Date.now().toString(36)}`;
  const handle = await client.workflow.start(FLOW_WORKFLOW, {
    taskQueue: options.taskQueue ?? DEFAULT_TASK_QUEUE,
    workflowId,
    args: [input],
    memo: { [FLOW_MEMO_KEY]: graph.name },
  });
  return new FlowHandle(handle, client);
}

export function getFlowHandle(client: Client, workflowId: string): FlowHandle {
  return new FlowHandle(client.workflow.getHandle(workflowId), client);
}

/** A run that is not in a state to resume from (it did not fail, or its state has no failed stage). */
export class FlowNotResumableError extends FabricError {
  declare readonly code: 'FLOW_NOT_RESUMABLE';
  constructor(readonly workflowId: string, readonly status: string) {
    super('FLOW_NOT_RESUMABLE', `Flow run '${workflowId}' is ${status}: only a failed run resumes (from the stage it failed at).`);
  }
}

/**
 * Resumes a failed run: a new run starts at the stage the old one failed at, with the old run's
 * context and stage records; that first stage's `full` fidelity runs as `summary:high`.
 */
export async function resumeFlow(client: Client, workflowId: string, options: { workflowId?: string; taskQueue?: string } = {}): Promise<FlowHandle> {
  const old = getFlowHandle(client, workflowId);
  const state = await old.state();
  if (state.status !== 'failed' || state.failedNode === undefined || !state.graph || !state.settings) throw new FlowNotResumableError(workflowId, state.status);
  const input: FlowInput = {
    graph: state.graph,
    ...state.settings,
    resume: { fromWorkflowId: workflowId, node: state.failedNode, context: state.context, stages: state.stages },
  };
  const handle = await client.workflow.start(FLOW_WORKFLOW, {
    taskQueue: options.taskQueue ?? DEFAULT_TASK_QUEUE,
    workflowId: options.workflowId ?? `${workflowId}-resumed-${Date.now().toString(36)}`,
    args: [input],
    memo: { [FLOW_MEMO_KEY]: state.graph.name },
  });
  return new FlowHandle(handle, client);
}

export class FlowHandle {
  constructor(
    readonly workflow: WorkflowHandle,
    readonly client: Client,
  ) {
    guardClose(client.connection);
  }

  get workflowId(): string {
    return this.workflow.workflowId;
  }

  /**
   * The run's stream: its events (`type: 'custom'`, `name` a flow event type such as
   * `flow.stage_started`, `data` the event) as they happen, from offset `from`.
   */
  stream(options: StreamOptions = {}): AsyncIterable<StreamEnvelope> {
    return streamOf(this.client, this.workflowId, options);
  }

  /** The graph, each node's state, the context, the stages so far, the gate waiting (if any), the events. */
  state(): Promise<FlowState> {
    return this.workflow.query(flowStateQuery);
  }

  /**
   * Answers the gate the run waits at: `choice` is an accelerator key or a label (or `freeform` with
   * `text`). Refused at once with FLOW_UNKNOWN_CHOICE or FLOW_NOT_WAITING; the gate keeps waiting.
   * A gate inside a parallel branch is answered here too: name its `branch` (the branch's first node)
   * or `gate` when gates wait in several places (else FLOW_GATE_AMBIGUOUS).
   */
  async gate(choice: string, options: { text?: string; gate?: string; branch?: string; updateId?: string } = {}): Promise<GateDecision> {
    const { updateId, ...rest } = options;
    const args: [{ choice: string; text?: string; gate?: string; branch?: string }] = [{ choice, ...rest }];
    try {
      return await this.workflow.executeUpdate(flowGateUpdate, updateId === undefined ? { args } : { args, updateId });
    } catch (err) {
      throw (await this.endedRun(err)) ?? typedFailure(err);
    }
  }

  /**
   * The server refuses an update to a closed run as "workflow not found": a run that exists but has ended
   * waits at no gate (FLOW_NOT_WAITING, naming its status); a run it does not know stays not found.
   */
  private async endedRun(err: unknown): Promise<FlowNotWaitingError | undefined> {
    if (!(err instanceof WorkflowNotFoundError)) return undefined;
    const status = await this.workflow.describe().then((d) => d.status.name, () => undefined);
    if (status === undefined || status === 'RUNNING') return undefined;
    const ended = new FlowNotWaitingError(undefined, undefined, { workflowId: this.workflowId, status: status.toLowerCase().replace(/_/g, ' ') });
    (ended as { cause?: unknown }).cause = err;
    return ended;
  }

  /** The run's result; a failed run rejects with our typed error (FLOW_STAGE_FAILED, …), a closed connection with CONNECTION_CLOSED. */
  async result(): Promise<FlowResult> {
    try {
      return (await untilClosed(this.client, this.workflowId, () => this.workflow.result())) as FlowResult;
    } catch (err) {
      throw typedFailure(err);
    }
  }
}

function slug(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 40) || 'flow';
}
