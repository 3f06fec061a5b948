import {
  ApplicationFailure,
  condition,
  defineQuery,
  defineSignal,
  defineUpdate,
  proxySinks,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { parseAgentInput, type AgentDefinition, type InitFn } from '../core/agent';
import type { ContextBudget } from '../core/budget';
import type { Entry, Usage } from '../core/entries';
import { FabricError, UnknownAgentError } from '../core/errors';
import type { AgentEvent } from '../core/events';
import {
  compactionExplicitlyDisabled,
  Harness,
  parseInitOptions,
  TEMPORAL_COMPACTION_WARNING,
  type Flavour,
  type InitOptions,
  type PromptHost,
  type ServeOptions,
} from '../core/harness';
import type { CompactionState, CompactOptions, CompactResult, Session } from '../core/session';
import type { FabricSinks } from './sinks';
import { createTemporalPorts } from './temporal-ports';

/** Queries and updates every agent workflow answers. Names are the wire contract with clients. */
export const messagesQuery = defineQuery<Entry[], [string?]>('fh.messages');
export const compactionStateQuery = defineQuery<CompactionState | null, [string?]>('fh.compactionState');
export const contextBudgetQuery = defineQuery<ContextBudget | null, [string?]>('fh.contextBudget');
export const usageQuery = defineQuery<AgentUsage>('fh.usage');
export const eventsQuery = defineQuery<AgentEvent[], [number?]>('fh.events');
export const sessionsQuery = defineQuery<string[]>('fh.sessions');
export const compactUpdate = defineUpdate<CompactResult, [CompactRequest?]>('fh.compact');
export const promptUpdate = defineUpdate<string, [PromptRequest]>('fh.prompt');
export const closeSignal = defineSignal('fh.close');

export interface PromptRequest {
  text: string;
  sessionId?: string;
}

export interface CompactRequest extends CompactOptions {
  sessionId?: string;
}

export interface AgentUsage extends Usage {
  modelCalls: number;
}

/** Events kept for the events query; older ones drop off (they are all in history anyway). */
const EVENT_BUFFER = 500;

/** The workflow function for one agent: its type name is the agent's name. */
export function agentWorkflow(def: AgentDefinition): (input: unknown) => Promise<unknown> {
  return async (rawInput: unknown) => {
    const state = new WorkflowState();
    state.installHandlers();
    try {
      const input = parseAgentInput(def, rawInput);
      return await def.run({ init: workflowInit(def.flavour, state), input });
    } catch (err) {
      throw asWorkflowFailure(err);
    }
  };
}

/** Handles a workflow type no registered agent has, with an error that lists the ones there are. */
export function unknownAgentWorkflow(known: string[]): (...args: unknown[]) => Promise<never> {
  return async () => {
    throw asWorkflowFailure(new UnknownAgentError(workflowInfo().workflowType, known));
  };
}

function workflowInit(flavour: Flavour, state: WorkflowState): InitFn {
  return async (raw?: InitOptions) => {
    const options = parseInitOptions(raw);
    // Inside a workflow the runtime is Temporal whatever `runtime` says; warn as the docs promise.
    if (flavour === 'default' && !compactionExplicitlyDisabled(options)) {
      proxySinks<FabricSinks>().fabric.warnOnce('temporal-compaction', TEMPORAL_COMPACTION_WARNING);
    }
    const ports = createTemporalPorts({ record: (e) => state.record(e) });
    const harness = new Harness(ports, options, flavour, '.', state);
    state.harnesses.push(harness);
    return harness;
  };
}

const DEFAULT_IDLE_TIMEOUT_MS = 10 * 60_000;

class WorkflowState implements PromptHost {
  readonly harnesses: Harness[] = [];
  private readonly events: AgentEvent[] = [];
  private closed = false;
  private promptsReceived = 0;
  private promptsInFlight = 0;

  async serve(options: ServeOptions): Promise<number> {
    const start = this.promptsReceived;
    const idle = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    while (!this.closed) {
      const seen = this.promptsReceived;
      const woke = await condition(() => this.closed || this.promptsReceived !== seen, idle);
      if (!woke && this.promptsInFlight === 0) break;
    }
    // Prompts already accepted are in history: answer them before the run ends.
    await condition(() => this.promptsInFlight === 0);
    return this.promptsReceived - start;
  }

  record(event: AgentEvent): void {
    this.events.push(event);
    if (this.events.length > EVENT_BUFFER) this.events.splice(0, this.events.length - EVENT_BUFFER);
  }

  sessions(): Session[] {
    return this.harnesses.flatMap((h) => [...h.sessions()]);
  }

  session(id?: string): Session | undefined {
    const all = this.sessions();
    return id === undefined ? all[0] : all.find((s) => s.id === id);
  }

  installHandlers(): void {
    setHandler(messagesQuery, (id) => [...(this.session(id)?.messages() ?? [])]);
    setHandler(compactionStateQuery, (id) => this.session(id)?.compactionState() ?? null);
    setHandler(contextBudgetQuery, (id) => this.session(id)?.contextBudget() ?? null);
    setHandler(sessionsQuery, () => this.sessions().map((s) => s.id));
    setHandler(eventsQuery, (limit) => this.events.slice(-(limit ?? EVENT_BUFFER)));
    setHandler(usageQuery, () =>
      this.sessions().reduce<AgentUsage>(
        (acc, s) => {
          const u = s.usage();
          return {
            inputTokens: acc.inputTokens + u.inputTokens,
            outputTokens: acc.outputTokens + u.outputTokens,
            modelCalls: acc.modelCalls + u.modelCalls,
          };
        },
        { inputTokens: 0, outputTokens: 0, modelCalls: 0 },
      ),
    );
    setHandler(closeSignal, () => {
      this.closed = true;
    });
    setHandler(
      promptUpdate,
      async ({ text, sessionId }) => {
        this.promptsReceived += 1;
        this.promptsInFlight += 1;
        try {
          await condition(() => this.session(sessionId) !== undefined);
          return await this.session(sessionId)!.prompt<string>(text);
        } catch (err) {
          throw asWorkflowFailure(err); // rejects the update; a plain Error would fail the workflow task
        } finally {
          this.promptsInFlight -= 1;
        }
      },
      {
        validator: (req) => {
          if (typeof req?.text !== 'string' || req.text.length === 0) throw new Error('text must be a non-empty string');
        },
      },
    );
    setHandler(
      compactUpdate,
      async (req = {}) => {
        // A client may ask before run() made its session; wait for it rather than fail.
        await condition(() => this.session(req.sessionId) !== undefined);
        const { sessionId, ...opts } = req;
        try {
          return await this.session(sessionId)!.compact({ ...opts, reason: 'manual' });
        } catch (err) {
          throw asWorkflowFailure(err);
        }
      },
      {
        validator: (req = {}) => {
          if (req.keepRecentEntries !== undefined && (!Number.isInteger(req.keepRecentEntries) || req.keepRecentEntries < 1)) {
            throw new Error('keepRecentEntries must be an integer >= 1');
          }
        },
      },
    );
  }
}

/**
 * Our typed errors fail the workflow (non-retryable, `type` = error code). Anything else is left to
 * Temporal's default: a workflow task failure that retries, so a fixed bug can resume the run.
 */
function asWorkflowFailure(err: unknown): unknown {
  if (err instanceof FabricError) {
    const fields = Object.fromEntries(Object.entries(err).filter(([k]) => k !== 'message' && k !== 'stack'));
    return ApplicationFailure.create({ type: err.code, message: err.message, nonRetryable: true, details: [fields] });
  }
  return err;
}
