/**
 * Stage handlers, in workflow code. Command nodes run through the bash tool activity (the worker's
 * sandbox settings apply, confinement included): stdout and stderr go to files under `.fh-flow/` in
 * the work dir, read back through the read_file tool activity with the 100 KB offload threshold, so a
 * large output is stored and the context holds a reference. Prompt nodes run in a session of a harness
 * the run owns (one per thread_id for `full` fidelity); agent nodes run an agent as a child workflow;
 * gates wait durably for an update; parallel nodes run each branch as a child workflow.
 */
import {
  CancellationScope,
  ChildWorkflowCancellationType,
  condition,
  executeChild,
  getExternalWorkflowHandle,
  isCancellation,
} from '@temporalio/workflow';
import type { RuntimePorts } from '../core/ports';
import { z } from 'zod';
import { Harness } from '../core/harness';
import { parseWith } from '../core/validate';
import type { Conversation } from '../core/conversation';
import { deepCopy, OFFLOAD_VALUE_BYTES, parseAgentDirectives, type ContextValue, type FlowContext } from '../core/flows/context';
import { completedStages, failure, gateChoices, gateKeys, matchGateChoice, responseKeys } from '../core/flows/engine';
import { FlowGateAmbiguousError, FlowNotWaitingError } from '../core/flows/errors';
import { renderPreamble } from '../core/flows/preamble';
import { commandStageShell, FLOW_OUTPUT_DIR, type StageResult, type StageStatus } from '../core/flows/stage';
import { fanInFor } from '../core/flows/validate';
import { nodeById, outgoing, type Fidelity, type FlowEdge, type FlowGraph, type FlowNode } from '../core/flows/graph';
import type { FlowEventInput } from '../core/flows/events';
import type { StageRecord } from '../core/flows/stage';
import { decodeFailure } from '../wire/failures';
import { FLOW_BRANCH_WORKFLOW, flowGateAnswerSignal, type BranchGateNotice, type BranchInput, type BranchResult, type FlowRunSettings, type GateAnswer, type GateDecision, type NodeState, type WaitingGate } from '../wire/flow-messages';
import { createTemporalPorts } from './temporal-ports';
import { builtIn, exitCodeOf, filesTouched, stringOr, substitute, valueOf, visibleUpdates } from './flow-stage-values';
import { toPromise } from '../core/pending';
import { lazySchema } from '../core/lazy-schema';

const gateAnswerSchema = lazySchema(() => z.object({ choice: z.string().min(1), text: z.string().optional(), gate: z.string().optional(), branch: z.string().optional() }).strict());

export { FLOW_OUTPUT_DIR } from '../core/flows/stage';

/** One attempt of one stage, as the runner hands it to a handler. */
export interface StageContext {
  node: FlowNode;
  visit: number;
  attempt: number;
  fidelity: Fidelity;
  via?: FlowEdge;
}

/** What handlers read and write of the run (the FlowRunner). */
export interface StageHost {
  readonly graph: FlowGraph;
  readonly settings: FlowRunSettings;
  readonly ctx: FlowContext;
  readonly stages: StageRecord[];
  readonly nodeStates: Record<string, NodeState>;
  readonly runId: string;
  readonly toolSet?: string | undefined;
  lastJoin: JoinResult | undefined;
  emit(event: FlowEventInput): void;
}

export interface JoinResult {
  fanIn: string;
  branches: Array<BranchResult | { id: string; outcome: 'cancelled'; updates: FlowContext; stages: [] }>;
  best?: BranchResult;
}

export class FlowStages {
  private harness: Harness | undefined;
  private ports: RuntimePorts | undefined;
  private readonly threads = new Map<string, Conversation>();
  /** The gate the run waits at, and the answer once given. */
  waiting: { node: FlowNode; decision?: ReturnType<typeof matchGateChoice> } | undefined;
  /** Gates waiting inside parallel branches (the run's and nested ones), by the branch workflow's id. */
  readonly branchGates = new Map<string, BranchGateNotice>();
  /** In a branch workflow: tells the parent a gate of this branch waits (set by fhFlowBranch). */
  onGateWaiting: ((node: FlowNode) => Promise<void>) | undefined;
  /** In the run: the set of {@link waitingGates} may have changed (set by fhFlow, which keeps it in the memo). */
  onWaitingChanged: (() => void) | undefined;

  constructor(private readonly runner: StageHost) {}

  async run(s: StageContext): Promise<StageResult> {
    switch (s.node.kind) {
      case 'start':
      case 'exit':
      case 'route':
        return { status: 'success', updates: {}, record: {} };
      case 'command':
        return this.command(s);
      case 'prompt':
        return this.prompt(s);
      case 'agent':
        return this.agent(s);
      case 'gate':
        return this.gate(s);
      case 'parallel':
        return this.parallel(s);
      case 'fan_in':
        return this.fanIn(s);
    }
  }

  private async command({ node, visit, attempt }: StageContext): Promise<StageResult> {
    const base = `${FLOW_OUTPUT_DIR}/${node.id}-${visit}-${attempt}`;
    const script = node.script!;
    const cwd = this.runner.settings.workDir;
    const callId = `flow-${node.id}-${visit}-${attempt}`;
    // The script's own output goes to files: the bash tool caps what it returns, the files are whole.
    const wrapped = commandStageShell(script, base);
    // Through the ports, as a session's tool calls: on the agent set's tool queue (patch fh-tool-queue).
    const tool = (id: string, name: string, input: unknown, offloadBytes?: number) =>
      toPromise(this.portsFor().runTool({ sessionId: this.runner.runId, id, name, input, cwd, ...(offloadBytes !== undefined ? { offloadBytes } : {}) }, builtIn(name)));
    const ran = await tool(callId, 'bash', { command: wrapped });
    const exitCode = exitCodeOf(ran.content);
    const read = (suffix: string) => tool(`${callId}-${suffix}`, 'read_file', { path: `${base}.${suffix}` }, OFFLOAD_VALUE_BYTES);
    const out = await read('out');
    const err = await read('err');
    const stdout = valueOf(out);
    const stderr = valueOf(err);
    const status: StageStatus = exitCode === 0 ? 'success' : 'fail';
    const record: StageResult['record'] = { command: { script, exitCode, stdout, stderr } };
    if (status === 'fail') record.failure = failure(node, 'command_exit', `${ran.content.split('\n')[0]}; stderr: ${typeof stderr === 'string' ? stderr.slice(0, 500) : ''}`);
    return { status, updates: { 'command.output': stdout, 'command.stderr': stderr }, record };
  }

  private async prompt({ node, visit, attempt, fidelity }: StageContext): Promise<StageResult> {
    const text = node.prompt ?? node.label;
    const threadKey = fidelity === 'full' ? (node.threadId ?? 'main') : undefined;
    let session = threadKey !== undefined ? this.threads.get(threadKey) : undefined;
    // A thread's first node has no conversation to continue: it gets the default preamble.
    const preambleFidelity = fidelity === 'full' && !session ? 'compact' : fidelity;
    if (!session) {
      session = await this.harnessFor(node).session({ id: threadKey !== undefined ? `thread-${threadKey}`.slice(0, 64) : `${node.id}-${visit}-${attempt}`.slice(0, 64), ...(node.model ? { model: node.model } : {}), ...(node.connection ? { connection: node.connection } : {}) });
      if (threadKey !== undefined) this.threads.set(threadKey, session);
    }
    const preamble = renderPreamble({
      fidelity: preambleFidelity,
      goal: stringOr(this.runner.ctx['graph.goal']),
      runId: this.runner.runId,
      stages: completedStages(this.runner.stages),
      context: this.runner.ctx,
    });
    const sent = preamble ? `${preamble}\n\n${text}` : text;
    const before = session.usage();
    try {
      const reply = await session.prompt<string>(sent);
      const after = session.usage();
      const directives = parseAgentDirectives(reply);
      return {
        status: directives.outcome ?? 'success',
        updates: { ...responseKeys(node, reply), ...directives.updates },
        record: {
          agent: { model: session.model, inputTokens: after.inputTokens - before.inputTokens, outputTokens: after.outputTokens - before.outputTokens, files: filesTouched(session.messages(), sent) },
          ...(directives.outcome === 'fail' ? { failure: failure(node, 'agent_reported', reply.slice(0, 500)) } : {}),
        },
        ...(directives.preferredLabel !== undefined ? { preferredLabel: directives.preferredLabel } : {}),
      };
    } catch (err) {
      if (isCancellation(err)) throw err;
      const message = decodeFailure(err)?.message ?? (err instanceof Error ? err.message : String(err));
      return { status: 'fail', updates: { last_stage: node.id }, record: { failure: failure(node, 'agent_error', message) } };
    }
  }

  private async agent({ node, visit, attempt, fidelity }: StageContext): Promise<StageResult> {
    const text = node.prompt ?? node.label;
    const preamble = renderPreamble({ fidelity: fidelity === 'full' ? 'compact' : fidelity, goal: stringOr(this.runner.ctx['graph.goal']), runId: this.runner.runId, stages: completedStages(this.runner.stages), context: this.runner.ctx });
    const prompt = preamble ? `${preamble}\n\n${text}` : text;
    const input = node.attrs.input !== undefined ? substitute(JSON.parse(node.attrs.input) as unknown, prompt) : { prompt };
    try {
      const out = await executeChild(node.agent!, { args: [input], workflowId: `${this.runner.runId}/${node.id}-${visit}-${attempt}` });
      const reply = typeof out === 'string' ? out : JSON.stringify(out);
      const directives = parseAgentDirectives(reply);
      return { status: directives.outcome ?? 'success', updates: { ...responseKeys(node, reply), ...directives.updates }, record: {} };
    } catch (err) {
      if (isCancellation(err)) throw err;
      const message = decodeFailure(err)?.message ?? (err instanceof Error ? err.message : String(err));
      return { status: 'fail', updates: { last_stage: node.id }, record: { failure: failure(node, 'agent_error', message) } };
    }
  }

  private async gate({ node }: StageContext): Promise<StageResult> {
    this.waiting = { node };
    this.runner.nodeStates[node.id] = 'waiting';
    this.runner.emit({ type: 'flow.gate_waiting', node: node.id, choices: gateChoices(this.runner.graph, node).map((c) => c.label) });
    this.onWaitingChanged?.();
    // In a branch the run is told (a signal up), and its answer comes back as a signal.
    await this.onGateWaiting?.(node);
    // No timer and no activity: the run waits in history for the update, on no worker's slot.
    await condition(() => this.waiting?.decision !== undefined);
    const decision = this.waiting.decision!;
    this.waiting = undefined;
    this.runner.emit({ type: 'flow.gate_decided', node: node.id, selected: decision.selected, label: decision.label });
    return { status: 'success', updates: gateKeys(decision), record: { gate: decision.text !== undefined ? { selected: decision.selected, label: decision.label, text: decision.text } : { selected: decision.selected, label: decision.label } }, preferredLabel: decision.label };
  }

  /** Every gate waiting: the run's own first, then those in branches. */
  waitingGates(): WaitingGate[] {
    const graph = this.runner.graph;
    const choices = (node: FlowNode) => gateChoices(graph, node).map(({ key, label, freeform }) => ({ key, label, freeform }));
    const out: WaitingGate[] = [];
    if (this.waiting && this.waiting.decision === undefined) out.push({ node: this.waiting.node.id, choices: choices(this.waiting.node) });
    for (const n of this.branchGates.values()) out.push({ node: n.node, branch: n.branch, choices: choices(nodeById(graph, n.node)!) });
    return out;
  }

  /** The update's validator: refused answers never enter history, and the gate keeps waiting. */
  validateGate(answer: GateAnswer): void {
    parseWith(gateAnswerSchema, answer, 'gate answer');
    const target = this.target(answer);
    matchGateChoice(this.runner.graph, nodeById(this.runner.graph, target.node)!, answer.choice, answer.text);
  }

  async decideGate(answer: GateAnswer): Promise<GateDecision> {
    const target = this.target(answer);
    if (target.branch === undefined) {
      const w = this.waiting!;
      w.decision = matchGateChoice(this.runner.graph, w.node, answer.choice, answer.text);
      this.onWaitingChanged?.();
      return { gate: w.node.id, selected: w.decision.selected, label: w.decision.label };
    }
    const [workflowId, notice] = [...this.branchGates].find(([, n]) => n === target.notice)!;
    const decision = matchGateChoice(this.runner.graph, nodeById(this.runner.graph, notice.node)!, answer.choice, answer.text);
    this.branchGates.delete(workflowId);
    this.onWaitingChanged?.();
    this.runner.nodeStates[notice.node] = 'running';
    this.runner.emit({ type: 'flow.gate_decided', node: notice.node, selected: decision.selected, label: decision.label, branch: notice.branch });
    // Validated here against the same graph: the branch takes it as given.
    await getExternalWorkflowHandle(workflowId).signal(flowGateAnswerSignal, { choice: answer.choice, ...(answer.text !== undefined ? { text: answer.text } : {}), gate: notice.node });
    return { gate: notice.node, selected: decision.selected, label: decision.label };
  }

  /** A branch's gate waits (a signal from the branch workflow). */
  branchGateWaiting(notice: BranchGateNotice): void {
    this.branchGates.set(notice.workflowId, notice);
    this.runner.nodeStates[notice.node] = 'waiting';
    const node = nodeById(this.runner.graph, notice.node);
    if (node) this.runner.emit({ type: 'flow.gate_waiting', node: notice.node, branch: notice.branch, choices: gateChoices(this.runner.graph, node).map((c) => c.label) });
    this.onWaitingChanged?.();
  }

  /** In a branch workflow: the run's answer to this branch's gate (validated by the run). */
  answerFromRun(answer: GateAnswer): void {
    const w = this.waiting;
    if (!w || w.decision !== undefined || (answer.gate !== undefined && answer.gate !== w.node.id)) return;
    w.decision = matchGateChoice(this.runner.graph, w.node, answer.choice, answer.text);
  }

  /** The gate an answer is for: named by gate or branch, or the only one waiting. */
  private target(answer: GateAnswer): { node: string; branch?: string; notice?: BranchGateNotice } {
    const own = this.waiting && this.waiting.decision === undefined ? [{ node: this.waiting.node.id }] : [];
    const all: Array<{ node: string; branch?: string; notice?: BranchGateNotice }> = [...own, ...[...this.branchGates.values()].map((n) => ({ node: n.node, branch: n.branch, notice: n }))];
    const fits = all.filter((c) => (answer.gate === undefined || c.node === answer.gate) && (answer.branch === undefined || c.branch === answer.branch));
    if (fits.length === 0) throw new FlowNotWaitingError(answer.gate ?? answer.branch, all[0]?.node);
    if (fits.length > 1) throw new FlowGateAmbiguousError(fits.map((c) => (c.branch !== undefined ? `gate ${c.node} in branch ${c.branch}` : `gate ${c.node}`)));
    return fits[0]!;
  }

  /** A joined branch's gates (its own and nested ones) wait no more. */
  private forgetBranchGates(workflowId: string): void {
    for (const id of [...this.branchGates.keys()]) if (id === workflowId || id.startsWith(`${workflowId}/`)) this.branchGates.delete(id);
    this.onWaitingChanged?.();
  }

  private async parallel({ node, visit }: StageContext): Promise<StageResult> {
    const graph = this.runner.graph;
    const fanIn = fanInFor(graph, node.id);
    const edges = outgoing(graph, node.id);
    const policy = node.join ?? 'wait_all';
    const limit = Math.min(node.maxParallel ?? edges.length, edges.length);
    const snapshot = deepCopy(this.runner.ctx); // taken once, at the fan-out: every branch starts from it
    const stages = completedStages(this.runner.stages);
    const results: JoinResult['branches'] = [];
    const scopes: CancellationScope[] = [];
    let next = 0;
    let stopped = false;
    let best: BranchResult | undefined;
    const runBranch = async (i: number) => {
      const edge = edges[i]!;
      const workflowId = `${this.runner.runId}/${edge.to}-${visit}`;
      const input: BranchInput = { ...this.runner.settings, graph, start: edge.to, stopAt: fanIn, context: deepCopy(snapshot), stages };
      const scope = new CancellationScope();
      scopes.push(scope);
      this.runner.emit({ type: 'flow.branch_started', node: node.id, branch: edge.to, workflowId });
      let result: JoinResult['branches'][number];
      try {
        result = await scope.run(() =>
          executeChild<(i: BranchInput) => Promise<BranchResult>>(FLOW_BRANCH_WORKFLOW, { args: [input], workflowId, cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED }),
        );
      } catch (err) {
        if (!scope.consideredCancelled || !isCancellation(err)) throw err;
        result = { id: edge.to, outcome: 'cancelled', updates: {}, stages: [] };
      }
      results[i] = result;
      this.forgetBranchGates(workflowId);
      for (const s of result.stages) this.runner.nodeStates[s.node] = s.status;
      const where = 'workDir' in result ? result.workDir : undefined;
      this.runner.emit({
        type: 'flow.branch_joined',
        node: node.id,
        branch: edge.to,
        outcome: result.outcome,
        ...(where && 'headSha' in where ? { gitBranch: where.branch, headSha: where.headSha } : where ? { sharedWorkDir: where.shared } : {}),
      });
      if (result.outcome === 'success' && !best) best = result as BranchResult;
      if (policy === 'first_success' && result.outcome === 'success' && !stopped) {
        stopped = true;
        for (const s of scopes) if (s !== scope) s.cancel();
      }
    };
    const lane = async () => {
      while (!stopped && next < edges.length) await runBranch(next++);
    };
    await Promise.all(Array.from({ length: limit }, lane));
    const branches = edges.map((e, i) => results[i] ?? { id: e.to, outcome: 'cancelled' as const, updates: {}, stages: [] as [] });
    // wait_all: the best is the first branch (in edge order) that succeeded; first_success: the first to succeed.
    if (policy === 'wait_all') best = branches.find((b): b is BranchResult => b.outcome === 'success');
    this.runner.lastJoin = { fanIn, branches, ...(best ? { best } : {}) };
    // The fan-out itself ran; the fan-in stage says how the branches did.
    return { status: 'success', updates: {}, record: { branches: branches.map((b) => ({ id: b.id, outcome: b.outcome, updates: visibleUpdates(b.updates) })) } };
  }

  private async fanIn({ node }: StageContext): Promise<StageResult> {
    const join = this.runner.lastJoin;
    if (!join || join.fanIn !== node.id) {
      return { status: 'fail', updates: {}, record: { failure: failure(node, 'fan_in_without_fan_out', 'reached a fan-in that no fan-out of this run leads to') } };
    }
    const best = join.best ?? join.branches.find((b) => b.outcome !== 'cancelled') ?? join.branches[0]!;
    const results: ContextValue = join.branches.map((b) => ({ id: b.id, outcome: b.outcome, updates: visibleUpdates(b.updates), ...workDirKeys(b) }));
    const status: StageStatus = join.best ? 'success' : 'fail';
    const bestWorkDir = 'workDir' in best ? best.workDir : undefined;
    return {
      status,
      updates: {
        'parallel.fan_in.best_id': best.id,
        'parallel.fan_in.best_outcome': best.outcome,
        ...(bestWorkDir && 'headSha' in bestWorkDir ? { 'parallel.fan_in.best_head_sha': bestWorkDir.headSha } : {}),
        'parallel.fan_in.results': results,
      },
      record: {
        branches: join.branches.map((b) => ({ id: b.id, outcome: b.outcome, updates: visibleUpdates(b.updates) })),
        ...(status === 'fail' ? { failure: failure(node, 'all_branches_failed', join.branches.map((b) => `${b.id}: ${b.outcome}`).join(', ')) } : {}),
      },
    };
  }

  /** The run's ports (one set: the harness's prompts and the command stages share them). */
  private portsFor(): RuntimePorts {
    this.ports ??= createTemporalPorts({ record: () => undefined, ...(this.runner.toolSet !== undefined ? { toolSet: this.runner.toolSet } : {}) });
    return this.ports;
  }

  private harnessFor(node: FlowNode): Harness {
    void node;
    const { workDir, model, system } = this.runner.settings;
    this.harness ??= new Harness(
      this.portsFor(),
      { sandbox: { type: 'local', cwd: workDir }, tools: ['bash', 'read_file', 'write_file', 'edit_file'], ...(model ? { model } : {}), ...(system ? { system } : {}) },
      'default',
      workDir,
    );
    return this.harness;
  }
}

/** A branch's result entry's work dir keys: its git branch and head, or the shared dir and why. */
function workDirKeys(b: JoinResult['branches'][number]): FlowContext {
  const where = 'workDir' in b ? b.workDir : undefined;
  if (!where) return {};
  return 'headSha' in where ? { git_branch: where.branch, head_sha: where.headSha } : { work_dir: 'shared', work_dir_reason: where.shared };
}
