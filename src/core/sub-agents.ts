import { z } from 'zod';
import type { AgentDefinition } from './agent';
import { FabricError } from './errors';
import type { AgentEvent } from './events';
import { InvalidToolDefinitionError, type SubAgentSpec, type ToolDefinition } from './tools';
import { lazySchema } from './lazy-schema';

export type { SubAgentSpec } from './tools';

/**
 * Sub-agents: an agent handed to another as a tool. Pure: the tool definition and the rules (depth,
 * concurrency, what the model reads back). On Temporal the runtime starts the sub-agent as a child
 * workflow (its own history, compaction and budget); inline it runs in this process.
 */

export interface AgentAsToolOptions<S extends z.ZodObject = z.ZodObject> {
  /** The tool's name (default: the agent's name in the API's alphabet). */
  name?: string;
  /** What the model reads to decide when to hand work over. */
  description: string;
  /** The arguments the model gives (default: the agent's own input schema, else `{ task: string }`). */
  input?: S;
  /** The child agent's input from those arguments (default: the arguments as they are). */
  toInput?: (args: z.infer<S>) => unknown;
  worktree?: boolean;
  /** Default 3. */
  maxDepth?: number;
  /** Default 4. */
  maxConcurrent?: number;
  /** A bound on the whole sub-agent run (ms). */
  timeoutMs?: number;
}

const DEFAULT_MAX_DEPTH = 3;
const DEFAULT_MAX_CONCURRENT = 4;
const taskInput = lazySchema(() => z.object({ task: z.string().min(1).describe('The work to hand over, stated completely: the sub-agent sees nothing else.') }));

/**
 * An agent as a tool of another: the model calls it with arguments, the sub-agent runs (a child
 * workflow on Temporal: export it from an agent module the worker loads, so it is a workflow type),
 * and its result — text, or JSON — is the tool result. A failure of the sub-agent is an error result.
 * Cancelling or interrupting the parent cancels it.
 */
export function agentAsTool<S extends z.ZodObject>(other: AgentDefinition, options: AgentAsToolOptions<S>): ToolDefinition {
  if (!other || other.kind !== 'agent') throw new InvalidToolDefinitionError('agentAsTool(agent, options): agent must be an agent({...}) definition');
  if (!options?.description) throw new InvalidToolDefinitionError(`agentAsTool('${other.name}'): a description is required (the model reads it)`);
  const input = (options.input ?? (isObjectSchema(other.input) ? other.input : taskInput)) as z.ZodType;
  const positive = (v: number | undefined, field: string, fallback: number): number => {
    if (v === undefined) return fallback;
    if (!Number.isInteger(v) || v < 1) throw new InvalidToolDefinitionError(`agentAsTool('${other.name}'): ${field} must be a positive integer`);
    return v;
  };
  const spec: SubAgentSpec = {
    agent: other,
    toInput: (options.toInput as ((args: unknown) => unknown) | undefined) ?? ((args) => args),
    worktree: options.worktree === true,
    maxDepth: positive(options.maxDepth, 'maxDepth', DEFAULT_MAX_DEPTH),
    maxConcurrent: positive(options.maxConcurrent, 'maxConcurrent', DEFAULT_MAX_CONCURRENT),
  };
  const name = options.name ?? other.name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64);
  return {
    kind: 'tool',
    name,
    description: options.description,
    input,
    subAgent: spec,
    ...(options.timeoutMs !== undefined ? { timeoutMs: positive(options.timeoutMs, 'timeoutMs', 0) } : {}),
  };
}

function isObjectSchema(schema: unknown): schema is z.ZodObject {
  return schema instanceof z.ZodObject;
}

export class SubAgentDepthError extends FabricError {
  constructor(
    readonly agent: string,
    readonly maxDepth: number,
  ) {
    super('SUBAGENT_DEPTH_EXCEEDED', `sub-agent '${agent}' would run at depth ${maxDepth + 1}, past the limit of ${maxDepth}; do this part yourself`);
  }
}

/** What a finished sub-agent reports to its parent (the child workflow's result on Temporal). */
export interface SubAgentOutcome {
  result: unknown;
  /** The child's events (the last ones, trimmed), nested into the parent's as `subagent_event`. */
  events: AgentEvent[];
}

/** Where the sub-agent worked when it had a worktree: the branch holds its changes. */
export interface WorktreeOutcome {
  branch: string;
  /** The commit of its changes (absent: it changed nothing). */
  commit?: string;
}

const CHILD_EVENTS_KEPT = 50;
const CHILD_EVENT_TEXT = 200;

/** The child's events its parent keeps: the last 50, strings cut to 200 characters, so the result stays small in history. */
export function eventsForParent(events: readonly AgentEvent[]): AgentEvent[] {
  return events.slice(-CHILD_EVENTS_KEPT).map((e) => ({ ...e, data: trimStrings(e.data) }) as AgentEvent);
}

function trimStrings(value: unknown): any {
  if (typeof value === 'string') return value.length > CHILD_EVENT_TEXT ? `${value.slice(0, CHILD_EVENT_TEXT)}…` : value;
  if (Array.isArray(value)) return value.map(trimStrings);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, trimStrings(v)]));
  return value;
}

/** The tool result the parent's model reads. */
export function subAgentResultText(result: unknown, worktree?: WorktreeOutcome): string {
  const text = typeof result === 'string' ? result : result === undefined ? '(the sub-agent returned nothing)' : JSON.stringify(result);
  if (!worktree) return text;
  const where = worktree.commit ? `its changes are committed on branch ${worktree.branch} (commit ${worktree.commit.slice(0, 12)})` : `it changed no files (branch ${worktree.branch})`;
  return `${text}\n\n[worktree: ${where}]`;
}

/** Waits for a free sub-agent slot: a counter and a waiter list (deterministic in workflow code). */
export class SubAgentSlots {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  async acquire(max: number): Promise<() => void> {
    if (this.running >= max) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      this.waiting.shift()?.();
    };
  }
}
