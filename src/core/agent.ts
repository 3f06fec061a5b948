import type { McpServerConfig } from './mcp';
import type { z } from 'zod';
import { FabricError } from './errors';
import type { Flavour, Harness, InitOptions } from './harness';
import { isToolDefinition, type ToolDefinition, type ToolSource } from './tools';
import { parseWith } from './validate';
import type { SessionAgentConfig } from './sessions/config';

export type InitFn = (options?: InitOptions) => Promise<Harness>;

export interface AgentRunContext<I> {
  /** Makes a harness on whichever runtime runs this agent (inline, or the Temporal workflow). */
  init: InitFn;
  input: I;
}

/** An agent of the strict entry: its input schema is required (a type error without one, as well as a runtime one). */
export type StrictAgentConfig<I, O> = AgentConfig<I, O> & { input: z.ZodType<I> };

export interface AgentConfig<I, O> {
  name: string;
  description?: string;
  /** zod schema for the input; required by the strict entry. */
  input?: z.ZodType<I>;
  /**
   * The custom tools `run` uses (optional). A worker checks at startup that it has code for each one,
   * and finds the code of tools declared with `execute` here even when the module does not export them.
   */
  tools?: ToolDefinition[];
  /** How this agent's sessions (startSession) behave: custom statuses, the title model. */
  sessions?: SessionAgentConfig;
  run: (ctx: AgentRunContext<I>) => Promise<O>;
}

/** Settings for an in-process run. The model key is read here, never from agent code. */
export interface InvokeOptions {
  apiKey?: string;
  baseURL?: string;
  model?: string;
  /** Directory for built-in tools when init() gives no sandbox cwd (default: process.cwd()). */
  cwd?: string;
  onEvent?: InitOptions['onEvent'];
  /** Code for declared tools (implement(...)); tools defined with execute need nothing here. */
  tools?: ToolSource[];
  /** Aborting it cancels the run: the model call in flight and running tools (bash: its process group). */
  signal?: AbortSignal;
  /** Where the inline runtime keeps memory files (compaction.memory; default: in this process only). */
  memoryDir?: string;
  /**
   * Decides calls of tools with `needsApproval`: true (run it), false, or `{ approved, note }` (the note
   * reaches the model). Without it such a call is denied. Ask a person here (a prompt, a chat message).
   */
  onApproval?: (request: ApprovalRequest) => ApprovalAnswer | Promise<ApprovalAnswer>;
  /** MCP servers an agent may name in `init({ mcp: ['name'] })`, as a worker registers them. */
  mcpServers?: Record<string, McpServerConfig>;
  /**
   * How bash runs in this process, as a worker's `toolSandbox`: `{ env, passEnv, wrapper, network }`.
   * Default: bubblewrap (Linux) or Seatbelt (macOS) with a minimal environment; `wrapper: 'none'` runs it unconfined (docs/security.md).
   */
  toolSandbox?: ToolSandboxSettings;
  /**
   * Model connections by name, besides the built-in ones, as a worker's `connections` option: a run
   * names one (`init({ connection: 'alt' })`). `{ provider: 'anthropic', apiKey?, baseURL? }`, or another
   * provider's settings (docs/models.md).
   */
  connections?: Record<string, ModelConnectionOptions>;
}

/** One model connection's settings; `provider` picks the protocol, the rest is that provider's (checked where it is made: src/activities/models/connections.ts). */
export interface ModelConnectionOptions {
  provider: string;
  [setting: string]: unknown;
}

/** Validated where it is used (src/activities/tools/tool-env.ts); declared here so core stays free of Node code. */
export interface ToolSandboxSettings {
  env?: Record<string, string>;
  passEnv?: string[];
  wrapper?: 'bwrap' | 'seatbelt' | 'none' | string[];
  network?: boolean;
}

/** A tool call waiting for approval in an inline run. */
export interface ApprovalRequest {
  callId: string;
  tool: string;
  input: unknown;
}

export type ApprovalAnswer = boolean | { approved: boolean; note?: string };

export interface AgentDefinition<I = any, O = any> {
  readonly kind: 'agent';
  readonly name: string;
  readonly description?: string;
  readonly input?: z.ZodType<I>;
  readonly tools?: readonly ToolDefinition[];
  readonly sessions?: SessionAgentConfig;
  readonly flavour: Flavour;
  readonly run: (ctx: AgentRunContext<I>) => Promise<O>;
  /** Runs the agent in this process and resolves to what `run` returns. */
  invoke(input: I, options?: InvokeOptions): Promise<O>;
}

const AGENT_NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,99}$/;

export class InvalidAgentDefinitionError extends FabricError {
  constructor(message: string) {
    super('INVALID_AGENT_DEFINITION', message);
  }
}

export type InvokeImpl = (def: AgentDefinition, input: unknown, options?: InvokeOptions) => Promise<unknown>;

export function defineAgent<I, O>(config: AgentConfig<I, O>, flavour: Flavour, invoke: InvokeImpl): AgentDefinition<I, O> {
  if (typeof config?.name !== 'string' || !AGENT_NAME.test(config.name)) {
    throw new InvalidAgentDefinitionError(`agent name must match ${AGENT_NAME} (it becomes the workflow type); got ${JSON.stringify(config?.name)}`);
  }
  if (config.name === 'default') {
    throw new InvalidAgentDefinitionError("agent name 'default' is reserved (the workflow module's default export answers unknown agent names)");
  }
  if (typeof config.run !== 'function') throw new InvalidAgentDefinitionError(`agent '${config.name}' needs a run function`);
  if (config.tools !== undefined && !(Array.isArray(config.tools) && config.tools.every(isToolDefinition))) {
    throw new InvalidAgentDefinitionError(`agent '${config.name}': tools must be an array of tool({...}) definitions`);
  }
  if (flavour === 'strict' && !config.input) {
    throw new InvalidAgentDefinitionError(`agent '${config.name}': the strict entry requires an input schema (input: schema.object({...}))`);
  }
  const def: AgentDefinition<I, O> = {
    kind: 'agent',
    name: config.name,
    description: config.description,
    input: config.input,
    tools: config.tools,
    sessions: config.sessions,
    flavour,
    run: config.run,
    invoke: (input, options) => invoke(def, input, options) as Promise<O>,
  };
  return def;
}

/** Validates input against the agent's schema (if any); throws InvalidInputError naming the field. */
export function parseAgentInput<I>(def: AgentDefinition<I>, input: unknown): I {
  return def.input ? parseWith(def.input, input, `input for agent '${def.name}'`) : (input as I);
}

export function isAgentDefinition(v: unknown): v is AgentDefinition {
  return typeof v === 'object' && v !== null && (v as AgentDefinition).kind === 'agent';
}
