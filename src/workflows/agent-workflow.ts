import {
  allHandlersFinished,
  CancellationScope,
  CancelledFailure,
  condition,
  ContinueAsNew,
  proxySinks,
  workflowInfo,
} from '@temporalio/workflow';
import { parseAgentInput, type AgentDefinition, type InitFn } from '../core/agent';
import { FabricError, InterruptedError, UnknownAgentError } from '../core/errors';
import { isSessionEnvelope, SessionHost } from './session';
import type { SessionEnvelope } from '../wire/session-messages';
import {
  compactionExplicitlyDisabled,
  Harness,
  parseInitOptions,
  TEMPORAL_COMPACTION_WARNING,
  type Flavour,
  type InitOptions,
} from '../core/harness';
import { encodeFailure } from '../wire/failures';
import { isSubAgentEnvelope, type SubAgentEnvelope } from '../wire/sub-agent';
import { eventsForParent, type SubAgentOutcome } from '../core/sub-agents';
import { RunState } from './run-state';
import type { FabricSinks } from './sinks';
import { createTemporalPorts } from './temporal-ports';
import { installStreamLog } from './stream/publish';
import { STREAMING_MEMO_KEY } from '../wire/stream';

export * from '../wire/messages';

/** The workflow function for one agent: its type name is the agent's name. */
export function agentWorkflow(def: AgentDefinition, toolSet?: string): (input: unknown) => Promise<unknown> {
  return async (rawInput: unknown) => {
    if (isSessionEnvelope(rawInput)) return sessionWorkflow(def, rawInput, toolSet);
    // A sub-agent (agentAsTool): the agent's input inside, its depth and working directory around it;
    // its stream runs inside the offsets its parent reserved, so a reader of the parent reads it in place.
    const sub = isSubAgentEnvelope(rawInput) ? rawInput.fhSubAgent : undefined;
    const log = sub?.stream ? installStreamLog(sub.stream.from, sub.stream.to) : installStreamLog();
    // Started with `streaming: false` (startAgent): model calls without streaming. State only, no commands.
    log.enabled = workflowInfo().memo?.[STREAMING_MEMO_KEY] !== false;
    const state = new RunState();
    state.installHandlers();
    let result: unknown;
    try {
      const input = parseAgentInput(def, sub ? sub.input : rawInput);
      result = await def.run({ init: workflowInit(def.flavour, state, undefined, sub, toolSet), input });
    } catch (err) {
      await state.finish();
      // A cancelled run's activities end its turn as interrupted: the run itself was cancelled.
      if (err instanceof InterruptedError && CancellationScope.current().consideredCancelled) throw new CancelledFailure('workflow cancelled');
      // Our typed errors fail the workflow (non-retryable, `type` = code). Anything else is left to
      // Temporal's default, a workflow task failure that retries, so a fixed bug can resume the run.
      throw encodeFailure(err);
    }
    await state.finish();
    // A sub-agent answers its parent with its events too, for the parent to nest under its id.
    return sub ? ({ result, events: eventsForParent(state.recorded()) } satisfies SubAgentOutcome) : result;
  };
}

/**
 * A session of the agent: `run` sets up (init) and serves; the host answers prompts until the session
 * ends. A continue-as-new runs `run` again with the session restored (see session/host.ts).
 */
async function sessionWorkflow(def: AgentDefinition, envelope: SessionEnvelope, toolSet?: string): Promise<unknown> {
  installStreamLog(envelope.fhSession.carried?.streamNext ?? 0).enabled = envelope.fhSession.streaming !== false;
  const state = new RunState();
  const host = new SessionHost(def.name, envelope.fhSession, state, def.sessions, def.flavour);
  host.install();
  try {
    const input = parseAgentInput(def, envelope.fhSession.input);
    const result = await def.run({ init: workflowInit(def.flavour, state, host, undefined, toolSet), input });
    // Every accepted update (a prompt answered SESSION_CLOSED, a last edit) finishes before the run ends.
    await condition(allHandlersFinished);
    return result;
  } catch (err) {
    if (isContinueAsNew(err)) throw err;
    // A typed error fails the run: the prompts it accepted are answered with it first (their handlers
    // would wait for a turn that never comes, and the run with them). Anything else fails the workflow
    // task, which retries: those prompts are still answered by the run that resumes.
    if (err instanceof FabricError) host.fail(err);
    await condition(allHandlersFinished);
    if (err instanceof InterruptedError && CancellationScope.current().consideredCancelled) throw new CancelledFailure('workflow cancelled');
    throw encodeFailure(err);
  }
}

/**
 * Handles a workflow type no agent of this worker has. It fails the workflow TASK, not the run (a plain
 * error, not an ApplicationFailure): Temporal retries the task, so another worker on the task queue that
 * has the agent (a worker with other agents, a rolling deploy) takes it. With no such worker the run stays
 * open, the error (naming the task queue and the agents this worker has) visible as the pending workflow
 * task's failure in `describe`, the history and the UI, until a worker that has the agent starts.
 */
export function unknownAgentWorkflow(known: string[]): (...args: unknown[]) => Promise<never> {
  return async () => {
    const info = workflowInfo();
    throw new UnknownAgentError(info.workflowType, known, info.taskQueue);
  };
}

function workflowInit(flavour: Flavour, state: RunState, host?: SessionHost, sub?: SubAgentEnvelope['fhSubAgent'], toolSet?: string): InitFn {
  return async (raw?: InitOptions) => {
    const parsed = parseInitOptions(raw);
    // A sub-agent runs on its parent's connection unless its own init names one.
    const options = sub?.connection !== undefined && parsed.connection === undefined ? { ...parsed, connection: sub.connection } : parsed;
    // Inside a workflow the runtime is Temporal whatever `runtime` says; warn as the docs promise.
    if (flavour === 'default' && !compactionExplicitlyDisabled(options)) {
      proxySinks<FabricSinks>().fabric.warnOnce('temporal-compaction', TEMPORAL_COMPACTION_WARNING);
    }
    const ports = host
      ? createTemporalPorts({ record: (e) => state.record(e), transport: host.transport, onActivity: host.onActivity, mcpPins: host.mcpPins, toolSet })
      : createTemporalPorts({ record: (e) => state.record(e), ...(sub ? { depth: sub.depth } : {}), toolSet });
    const harness = host
      ? new Harness(ports, options, flavour, '.', host, host.authorize)
      : new Harness(ports, options, flavour, sub?.cwd ?? '.', state, undefined, state.approvals.approver);
    state.harnesses.push(harness);
    return harness;
  };
}

function isContinueAsNew(err: unknown): boolean {
  return err instanceof ContinueAsNew;
}
