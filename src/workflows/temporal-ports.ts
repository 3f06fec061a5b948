import { executeChild, isCancellation, uuid4, patched, proxyLocalActivities, proxySinks, workflowInfo, type ActivityOptions } from '@temporalio/workflow';
import type { FabricActivities, FlushMemoryActivityInput, ModelActivityReply, ModelActivityResult, ResolveModelResult, ToolActivityInput, ToolActivityResult } from '../wire/activity-contract';
import { TRANSCRIPT_STORE_MISS } from '../wire/activity-contract';
import type { AgentEvent } from '../core/events';
import { InterruptedError } from '../core/errors';
import type { ModelCallResult, RuntimePorts, ToolCallRequest, ToolCallResult } from '../core/ports';
import { makeEvent } from '../core/events';
import type { SubAgentSpec } from '../core/tools';
import { SubAgentDepthError, SubAgentSlots, subAgentResultText, type SubAgentOutcome } from '../core/sub-agents';
import type { SubAgentEnvelope } from '../wire/sub-agent';
import { actsBeforeCall, quietDecision } from '../core/context/compaction/decide';
import { decodeFailure, innermostApplicationFailure } from '../wire/failures';
import { toolTaskQueue } from '../wire/tool-queue';
import { mcpServerName } from '../core/mcp';
import { MCP_PIN_OPTIONS, McpPinning, type CarriedMcpPins } from './mcp-pin';
import { isScheduleToStartTimeout } from './schedule-to-start';
import { ModelTransport } from './model-transport';
import { WorkflowSpans } from './spans';
import type { FabricSinks } from './sinks';
import { closeToolStream, openToolStream } from './stream/model-calls';
import { closeStreamBlock, openSubAgentStream } from './stream/publish';
import { activities, decoded, decodedFailure, retry, worktreeOptions } from './activity-calls';
import { assertFits, createModelActivity, modelOptions } from './model-activity';
import { failedPending, pendingOf, thenSettle, toPromise, type Eventually, type Pending } from '../core/pending';

/**
 * Since this patch the threshold compaction decision rides with the model call (decided first in the
 * model activity, recorded in its result) instead of a local activity of its own before it.
 */
const DECIDE_IN_MODEL_CALL_PATCH = 'fh-decide-in-model-call';

export type ActivityKind = 'model' | 'tool';

export interface TemporalPortOptions {
  /** Called for every event, in workflow state order (for queries). */
  record(event: AgentEvent): void;
  /** Shared with the caller (a session host stores and restores transcripts through it). */
  transport?: ModelTransport;
  /** Told when an activity starts (+1) and ends (-1): a session suspends a turn only when none runs. */
  onActivity?(delta: 1 | -1, kind: ActivityKind): void;
  /** A session's MCP pins: those its previous run carried, and where to report how to read the current ones. */
  mcpPins?: CarriedMcpPins;
  /** The key of the bundle's agent set: tool calls go to its queue (wire/tool-queue.ts). */
  toolSet?: string;
  /** This run's depth among sub-agents (0: not a sub-agent). */
  depth?: number;
}

const TOOL_TIMEOUT_GRACE_MS = 15_000;
const toolOptions: ActivityOptions = { startToCloseTimeout: '30 minutes', heartbeatTimeout: '15s', retry };
/**
 * Since this patch tool calls go to the agent set's tool queue (wire/tool-queue.ts) rather than the
 * workflow's own queue, where any worker, with or without the tool, could take them.
 */
const TOOL_QUEUE_PATCH = 'fh-tool-queue';
/**
 * How long a tool call waits on the agent set's queue for a worker. Past it (no worker polls that queue:
 * the agent set changed in a deploy while the call was pending, or a plain Worker.create whose plugin
 * cannot tell its agents) the call is scheduled again on the workflow's own queue, with a warning.
 */
const TOOL_QUEUE_WAIT = '2 minutes';

/** A server that cannot be reached is retried a few times, then the run's session creation fails with MCP_UNAVAILABLE. */
const mcpListOptions: ActivityOptions = { startToCloseTimeout: '2 minutes', heartbeatTimeout: '15s', retry: { ...retry, maximumAttempts: 3 } };

const local = proxyLocalActivities<Pick<FabricActivities, 'fhDecideCompaction'>>({
  startToCloseTimeout: '30s',
  summary: 'compaction decision',
});
const gateCheck = proxyLocalActivities<Pick<FabricActivities, 'fhCheckSummaryGate'>>({
  startToCloseTimeout: '30s',
  summary: 'compaction gate check',
});

/**
 * Ports for workflow code: every model call, summary and tool call is an activity; the compaction
 * decision is a local activity, so it is recorded in history before it is acted on.
 */
export function createTemporalPorts(opts: TemporalPortOptions): RuntimePorts {
  const sinks = proxySinks<FabricSinks>();
  const transport = opts.transport ?? new ModelTransport();
  /**
   * Runs an activity call, counted for the host (a session); an agent run has no host to tell, and adds
   * nothing. A Pending (../core/pending): the count drops in its settle, with no promise of its own.
   */
  function counted<T>(call: () => Eventually<T>, kind: ActivityKind = 'model'): Pending<T> {
    const onActivity = opts.onActivity;
    if (!onActivity) return pendingOf(call());
    onActivity(1, kind);
    let pending: Pending<T>;
    try {
      pending = pendingOf(call());
    } catch (err) {
      onActivity(-1, kind);
      throw err;
    }
    const ended = () => onActivity(-1, kind);
    return thenSettle(
      pending,
      (value) => (ended(), value),
      (err: unknown) => {
        ended();
        throw err;
      },
    );
  }
  /** The same, as a promise (calls off the per-turn path). */
  const countedPromise = <T>(call: () => Eventually<T>, kind?: ActivityKind): Promise<T> => toPromise(counted(call, kind));
  const resolved = new Map<string, ResolveModelResult>();
  const slots = new SubAgentSlots();
  const spans = new WorkflowSpans(workflowInfo().workflowId);
  const emit = (event: AgentEvent): void => {
    opts.record(event);
    // The worker drops event sink calls made while history replays (callDuringReplay: false), but only
    // after each was cloned with the run's info on the workflow thread and sent to the main one: three a
    // model call, on every replay of the run and every rebuild of an evicted session. Not made at all.
    if (!workflowInfo().unsafe.isReplayingHistoryEvents) sinks.fabric.event(event);
    spans.onEvent(event);
  };

  let toolQueueUnserved = false;
  /** One tool activity: on the agent set's tool queue, or (runs recorded before it, no set known) the workflow's. */
  function toolActivity(options: ActivityOptions, name: string, input: ToolActivityInput): Pending<ToolActivityResult> {
    return onToolQueue(options, `tool ${name}`, name, (a) => a.fhTool(input));
  }
  /** An activity where tool calls go (a tool call, an MCP pin). */
  function onToolQueue<T>(options: ActivityOptions, summary: string, name: string, run: (a: FabricActivities) => Promise<T>): Pending<T> {
    if (opts.toolSet === undefined || toolQueueUnserved || !patched(TOOL_QUEUE_PATCH)) return pendingOf(run(activities(options, summary)));
    const taskQueue = toolTaskQueue(workflowInfo().taskQueue, opts.toolSet);
    return thenSettle(run(activities({ ...options, taskQueue, scheduleToStartTimeout: TOOL_QUEUE_WAIT }, summary)), (value) => value, (err: unknown) => {
      if (!isScheduleToStartTimeout(err)) throw err;
      // For the rest of this run (state from history, so a replay decides the same): one wait is enough.
      toolQueueUnserved = true;
      sinks.fabric.warnOnce(
        `tool-queue:${taskQueue}`,
        `fabric-harness: tool '${name}' waited ${TOOL_QUEUE_WAIT} on task queue '${taskQueue}' with no worker taking it, and goes to ` +
          `'${workflowInfo().taskQueue}' instead. Workers made by createWorker poll it; with Worker.create, pass the agent modules ` +
          'to FabricHarnessPlugin({ agents }) (see docs/deploying.md).',
      );
      return run(activities(options, summary));
    });
  }
  const mcpPins = new McpPinning(
    { pin: (server) => decoded(() => toPromise(onToolQueue({ ...MCP_PIN_OPTIONS, retry }, `pin MCP server ${mcpServerName(server)}`, 'mcp pin', (a) => a.fhMcpPin({ server })))) },
    opts.mcpPins?.carried,
  );
  opts.mcpPins?.expose(() => mcpPins.pins());

  const modelActivity = createModelActivity(transport, counted);

  /** A tool activity's result as the conversation takes it; a stored result's reference goes to the transport. */
  function toolCallResult(callId: string, result: ToolActivityResult): ToolCallResult {
    const artifact = result.artifact ? { artifact: result.artifact } : {};
    if (!result.contentRef) return { content: result.content, isError: result.isError, ...artifact };
    // The length tells the transport whether the session sent the content as stored (a capped or
    // masked result is shorter and must not be swapped back for the full one).
    transport.toolResultStored(callId, result.contentRef, result.content.length);
    return { content: result.content, isError: result.isError, contentRef: result.contentRef, ...artifact };
  }

  return {
    runtime: 'temporal',
    patched: (id) => patched(id),
    callModel: (req) => thenSettle(modelActivity(req, undefined), reply),

    decideThenCallModel(req, facts) {
      if (!patched(DECIDE_IN_MODEL_CALL_PATCH)) {
        // A run recorded before decisions rode with the model call: its decision was a local activity.
        return local.fhDecideCompaction(facts).then((decision) =>
          actsBeforeCall(decision) ? { decision } : toPromise(thenSettle(modelActivity(req, undefined), (result) => ({ decision, result: reply(result) }))),
        );
      }
      return thenSettle(modelActivity(req, facts), (result) => {
        // No call was made: the decision rewrites history first (an old recorded result: to compact).
        if (result.entry === undefined) return { decision: result.decision };
        // A quiet decision is recorded as a flag: rebuilt from the facts this call sent (in history too).
        const decision = result.decision ?? (result.quietDecision ? quietDecision(facts) : undefined);
        return { decision: decision!, result: reply(result) };
      });
    },

    summarize: (req) =>
      decoded(() =>
        countedPromise(() =>
          activities(modelOptions, `summarize with ${req.model}`).fhSummarize({
            model: req.model,
            system: req.system,
            userText: req.userText,
            maxTokens: req.maxTokens,
            ...(req.connection !== undefined ? { connection: req.connection } : {}),
          }),
        ),
      ),

    // Not async, and no promise of its own: the result mapped, the failure decoded and the stream closed in its settle (see modelActivity).
    runTool(call, def) {
      try {
        if (def.subAgent) return counted(() => runSubAgent(call, def.subAgent!, opts.depth ?? 0, slots, emit), 'tool');
        const input: ToolActivityInput = { name: call.name, callId: call.id, input: call.input, cwd: call.cwd };
        if (def.timeoutMs) input.timeoutMs = def.timeoutMs;
        // The activity decides on offloading and records it in its result; the input changes, not the commands.
        if (call.offloadBytes !== undefined) input.offloadBytes = call.offloadBytes;
        if (def.mcp) input.mcp = { server: def.mcp.server, tool: def.mcp.tool };
        // Its output lines stream at offsets of the run's stream (heartbeat details: not in history).
        const slot = openToolStream(call.id);
        if (slot) input.stream = slot;
        // The runner answers a timed-out call itself (an error result the model sees); the activity's own
        // bound is a backstop a little later, for a worker that cannot answer at all.
        const options = def.timeoutMs ? { ...toolOptions, startToCloseTimeout: def.timeoutMs + TOOL_TIMEOUT_GRACE_MS } : toolOptions;
        const closed = <T>(value: T): T => {
          closeToolStream(slot);
          return value;
        };
        let running: Pending<ToolActivityResult>;
        try {
          assertFits(`tool ${call.name} input`, input);
          // An MCP call goes to its pinned queue (or the tool queue).
          const served = def.mcp?.server;
          running = counted(
            () => (served === undefined ? toolActivity(options, call.name, input) : mcpPins.callTool(served, (pin) => (pin.taskQueue ? activities({ ...options, ...pin }, `tool ${call.name}`).fhTool(input) : toPromise(toolActivity(options, call.name, input))))),
            'tool',
          );
        } catch (err) {
          return failedPending(closed(decodedFailure(err)));
        }
        return thenSettle(
          running,
          (result) => closed(toolCallResult(call.id, result)),
          (err: unknown) => {
            throw closed(decodedFailure(err));
          },
        );
      } catch (err) {
        return failedPending(err);
      }
    },

    decideCompaction: (facts) => local.fhDecideCompaction(facts),

    // Reached only behind the patch fh-compaction-gate (core's gate step asks it first).
    checkSummaryGate: (input) => gateCheck.fhCheckSummaryGate(input),

    // Only runs that list MCP servers schedule it: histories recorded before MCP never reach it, so no patch.
    // A stateful server is pinned first (patch fh-mcp-pin): its list opens the connection on the owning worker.
    listMcpTools: (server, cwd) =>
      mcpPins.list(server, (pin) => decoded(() => countedPromise(() => activities({ ...mcpListOptions, ...pin }, `list tools of MCP server ${mcpServerName(server)}`).fhMcpList({ server, cwd })))),

    async resolveModel(model, options = {}) {
      const given = options.contextWindowTokens;
      const strategy = options.strategy !== undefined && options.strategy !== 'client' ? options.strategy : undefined;
      const connection = options.connection;
      const key = `${model ?? ''}|${given ?? ''}|${strategy ?? ''}|${connection ?? ''}`;
      let hit = resolved.get(key);
      if (!hit) {
        // The agent's window goes to the activity, which then looks nothing up. Only the input changes
        // (not which commands run), so histories recorded before replay as they are: no patch needed.
        // A strategy setting other than 'client' asks the activity to decide it from the model's
        // capabilities: the decision is its recorded result, which a replay under other settings follows.
        const input = { model, ...(given !== undefined ? { contextWindowTokens: given } : {}), ...(strategy ? { strategy } : {}), ...(connection !== undefined ? { connection } : {}) };
        const lookup = activities(modelOptions, `resolve model ${model ?? '(worker default)'}`);
        hit = await decoded(() => lookup.fhResolveModel(input));
        resolved.set(key, hit);
      }
      return hit;
    },

    memory: {
      // The workflow type is the agent's name: the default memory key.
      get agentName() {
        return workflowInfo().workflowType;
      },
      async load(key) {
        const file = await decoded(() => countedPromise(() => activities(modelOptions, `load memory ${key}`).fhLoadMemory({ key })));
        return file ?? undefined;
      },
      async flush(req) {
        // The dropped slice by reference: what the store has of the conversation, plus what it lacks of the slice.
        const send = (byReference: boolean): FlushMemoryActivityInput => {
          const { base, delta } = byReference ? transport.unstored(req.sessionId, req.entries) : { base: null, delta: req.entries.slice(0, req.dropped) };
          const need = Math.max(0, req.dropped - (base?.count ?? 0));
          const connection = req.connection !== undefined ? { connection: req.connection } : {};
          return { key: req.key, maxTokens: req.maxTokens, model: req.model, ...connection, base, delta: delta.slice(0, need), dropped: req.dropped };
        };
        const call = (input: FlushMemoryActivityInput) => {
          assertFits('memory flush input', input);
          return countedPromise(() => activities(modelOptions, `flush memory ${req.key}`).fhFlushMemory(input));
        };
        let result;
        try {
          result = await call(send(true));
        } catch (err) {
          if (innermostApplicationFailure(err)?.type !== TRANSCRIPT_STORE_MISS) throw decodedFailure(err);
          result = await decoded(() => call(send(false)));
        }
        return { text: result.text, hash: result.hash, tokens: result.tokens };
      },
    },

    // The workflow sandbox's Date is workflow time: deterministic, identical on replay.
    now: () => Date.now(),

    emit,
  };
}

/**
 * A sub-agent as a child workflow: its own history, compaction and budget, in this run's cancellation
 * scope (cancelling or interrupting the parent cancels it). Its result, or its failure, is the tool
 * result; its events are nested into this run's as `subagent_event`. Only runs whose agents use
 * agentAsTool schedule any of this: histories recorded before it never reach it.
 */
async function runSubAgent(call: ToolCallRequest, spec: SubAgentSpec, depth: number, slots: SubAgentSlots, emit: (e: AgentEvent) => void): Promise<ToolCallResult> {
  const agent = spec.agent.name;
  if (depth + 1 > spec.maxDepth) return { content: new SubAgentDepthError(agent, spec.maxDepth).message, isError: true };
  const release = await slots.acquire(spec.maxConcurrent);
  const info = workflowInfo();
  // From the run's seeded random, not its workflow id: a replay under another id (a downloaded history)
  // issues the same command. The parent is in the child's Temporal parent info and its envelope.
  const childId = `${agent}-${uuid4()}`;
  const now = () => Date.now();
  try {
    const wt = spec.worktree ? await decoded(() => activities(worktreeOptions, `worktree for ${agent}`).fhWorktreeCreate({ cwd: call.cwd, name: childId })) : undefined;
    emit(makeEvent('subagent_started', { childId, agent, callId: call.id, depth: depth + 1, ...(wt ? { branch: wt.branch } : {}) }, now()));
    let outcome: SubAgentOutcome | undefined;
    let failure: unknown;
    // The child's own stream runs inside this block of ours (workflow state only: no command, no history).
    const slot = openSubAgentStream(childId, agent);
    try {
      const stream = slot ? { stream: { from: slot.from, to: slot.to } } : {};
      const inherited = call.connection !== undefined ? { connection: call.connection } : {};
      const envelope: SubAgentEnvelope = { fhSubAgent: { input: spec.toInput(call.input), depth: depth + 1, ...(wt ? { cwd: wt.path } : {}), parent: info.workflowId, ...stream, ...inherited } };
      outcome = (await executeChild(agent, { args: [envelope], workflowId: childId, taskQueue: info.taskQueue, ...(call.timeoutMs ? { workflowExecutionTimeout: call.timeoutMs } : {}) })) as SubAgentOutcome;
    } catch (err) {
      if (isCancellation(err)) throw new InterruptedError();
      failure = err;
    } finally {
      closeStreamBlock(slot);
    }
    const done = wt ? await decoded(() => activities(worktreeOptions, `finish worktree of ${agent}`).fhWorktreeFinish({ ...wt, cwd: call.cwd })) : undefined;
    for (const event of outcome?.events ?? []) emit(makeEvent('subagent_event', { childId, agent, event }, now()));
    emit(makeEvent('subagent_finished', { childId, agent, callId: call.id, ok: failure === undefined, ...(done ? { branch: done.branch, ...(done.commit ? { commit: done.commit } : {}) } : {}) }, now()));
    if (failure !== undefined) {
      const typed = decodeFailure(failure);
      const reason = typed ? `${typed.code}: ${typed.message}` : failure instanceof Error ? (innermostApplicationFailure(failure)?.message ?? failure.message) : String(failure);
      return { content: `Sub-agent '${agent}' failed: ${reason}${done ? `\n\n[worktree: branch ${done.branch}]` : ''}`, isError: true };
    }
    return { content: subAgentResultText(outcome!.result, done), isError: false };
  } finally {
    release();
  }
}


function reply(r: ModelActivityResult): ModelCallResult {
  const { entry, usage, stopReason, model, contextManagement } = r as ModelActivityReply;
  return contextManagement ? { entry, usage, stopReason, model, contextManagement } : { entry, usage, stopReason, model };
}
