import { z } from 'zod';
import { FabricError } from './errors';
import type { ToolSpec } from './tools-spec';
import type { McpServerRef } from './mcp-config';

/** What a tool's `execute` gets besides its input. On Temporal it runs inside an activity. */
export interface ToolContext {
  /** The sandbox's working directory: relative paths resolve against it. */
  cwd: string;
  /** Aborted when the run (or the activity) is cancelled. */
  signal: AbortSignal;
  /** Tells Temporal the tool is alive (a no-op inline). Long tools should call it. */
  heartbeat(details?: unknown): void;
  /** Output as the tool produces it (bash: its stdout and stderr), shown to clients live; absent: nobody listens. */
  output?(stream: 'stdout' | 'stderr', text: string): void;
}

export type ToolExecute<I = any> = (input: I, ctx: ToolContext) => unknown | Promise<unknown>;

/**
 * What a tool IS: name, description and input schema. Pure data, safe in workflow code: an agent
 * shows it to the model. What the tool DOES (`execute`) is Node code that runs in an activity on the
 * worker; it is either attached here (the simple inline case) or supplied separately with implement().
 */
export interface ToolDefinition<I = any> {
  readonly kind: 'tool';
  readonly name: string;
  readonly description: string;
  readonly input: z.ZodType<I>;
  /** Runs the tool. Absent on declarations, whose code the worker (or invoke's `tools`) supplies. */
  readonly execute?: ToolExecute<I>;
  /**
   * Upper bound for one call; on Temporal the activity's start-to-close timeout. It lives on the
   * declaration because workflow code schedules the activity and must know it.
   */
  readonly timeoutMs?: number;
  /**
   * The tool only reads (files, the network, state) and changes nothing. Permission modes run read-only
   * tools freely (explore, ask); any other tool counts as a write.
   */
  readonly readOnly?: boolean;
  /**
   * A person must approve each call before it runs: `true`, or a function of the (validated) input that
   * says which calls (deterministic: on Temporal it runs in workflow code). Inline the approver is
   * `invoke(input, { onApproval })`; on Temporal a client answers (`handle.approve(callId)` /
   * `handle.deny(callId, note)`); in a session it waits like a call in permission mode `ask`. A call
   * nobody can approve is denied, and the model is told why.
   */
  readonly needsApproval?: boolean | ((input: I) => boolean);
  /** The input's JSON schema as given (an MCP server's), shown to the model instead of one made from `input`. */
  readonly jsonSchema?: Record<string, unknown>;
  /** A tool an MCP server serves: the runtime calls `tool` on `server` (see core/mcp.ts). */
  readonly mcp?: { readonly server: McpServerRef; readonly tool: string };
  /** Another agent, run as this tool (agentAsTool): a child workflow on Temporal. */
  readonly subAgent?: SubAgentSpec;
}

/** An agent run as a tool (agentAsTool, core/sub-agents.ts): what the runtimes need of it. */
export interface SubAgentSpec {
  /** The agent (an AgentDefinition; structural here so tools do not depend on agents). */
  readonly agent: { readonly kind: 'agent'; readonly name: string; readonly input?: z.ZodType; readonly run: (ctx: any) => Promise<unknown> };
  /** The child's input from the model's arguments. */
  readonly toInput: (args: unknown) => unknown;
  /** Run the child in its own `git worktree` of the parent's working directory (its result names the branch). */
  readonly worktree: boolean;
  /** The deepest nesting allowed (the top-level agent is depth 0). */
  readonly maxDepth: number;
  /** Sub-agents of one run at once; more wait their turn. */
  readonly maxConcurrent: number;
}

/** A declaration: a tool without its code. */
export type ToolDeclaration<I = any> = ToolDefinition<I> & { readonly execute?: undefined };

/**
 * What a tool DOES, for one declared tool: made by implement(), loaded by the worker (and accepted by
 * `invoke(input, { tools })`). Node code: keep it in a module workflow code does not import.
 */
export interface ToolImplementation<I = any> {
  readonly kind: 'tool-implementation';
  readonly name: string;
  readonly tool: ToolDefinition<I>;
  readonly execute: ToolExecute<I>;
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

export class InvalidToolDefinitionError extends FabricError {
  constructor(message: string) {
    super('INVALID_TOOL_DEFINITION', message);
  }
}

export interface ToolConfig<S extends z.ZodType> {
  name: string;
  description: string;
  input: S;
  timeoutMs?: number;
  readOnly?: boolean;
  needsApproval?: boolean | ((input: z.infer<S>) => boolean);
}

/**
 * Defines a tool. The zod schema is both the validator and the JSON schema the model is shown.
 * Without `execute` it is a declaration (give its code to the worker with implement()); with it, the
 * code travels with the declaration, so on Temporal it is bundled into workflow code too, where the
 * bundler rejects it if it imports Node modules.
 */
export function tool<S extends z.ZodType>(
  def: ToolConfig<S> & { execute: ToolExecute<z.infer<S>> },
): ToolDefinition<z.infer<S>> & { readonly execute: ToolExecute<z.infer<S>> };
export function tool<S extends z.ZodType>(def: ToolConfig<S> & { execute?: undefined }): ToolDeclaration<z.infer<S>>;
export function tool<S extends z.ZodType>(def: ToolConfig<S> & { execute?: ToolExecute<z.infer<S>> }): ToolDefinition<z.infer<S>> {
  if (typeof def?.name !== 'string' || !TOOL_NAME.test(def.name)) {
    throw new InvalidToolDefinitionError(`tool name '${def?.name}' must match ${TOOL_NAME} (the API's rule)`);
  }
  if (!def.description) throw new InvalidToolDefinitionError(`tool '${def.name}' needs a description`);
  if (!isZodSchema(def.input)) {
    // Checked here, not at the first call: a plain object or a JSON schema fails much later otherwise.
    throw new InvalidToolDefinitionError(
      `tool '${def.name}': input must be a zod schema, e.g. schema.object({ path: schema.string() }) with \`schema\` from '@fabric-harness/sdk'; got ${describe(def.input)}`,
    );
  }
  if (def.execute !== undefined && typeof def.execute !== 'function') {
    throw new InvalidToolDefinitionError(`tool '${def.name}': execute must be a function`);
  }
  if (def.needsApproval !== undefined && typeof def.needsApproval !== 'boolean' && typeof def.needsApproval !== 'function') {
    throw new InvalidToolDefinitionError(`tool '${def.name}': needsApproval must be a boolean or a function of the input`);
  }
  if (def.readOnly !== undefined && typeof def.readOnly !== 'boolean') {
    throw new InvalidToolDefinitionError(`tool '${def.name}': readOnly must be a boolean`);
  }
  return { kind: 'tool', ...def, input: def.input as z.ZodType<z.infer<S>> };
}

/**
 * The code of a declared tool: what runs (in an activity on Temporal, in-process inline) when the
 * model calls it. Export it from a module the worker loads (`createWorker({ tools })`,
 * `fh worker --tools`), never from one workflow code imports.
 */
export function implement<I>(declaration: ToolDefinition<I>, execute: ToolExecute<I>): ToolImplementation<I> {
  if (!isToolDefinition(declaration)) {
    throw new InvalidToolDefinitionError('implement(declaration, execute): declaration must be a tool({...}) declaration');
  }
  if (typeof execute !== 'function') {
    throw new InvalidToolDefinitionError(`implement('${declaration.name}', execute): execute must be a function`);
  }
  return { kind: 'tool-implementation', name: declaration.name, tool: declaration, execute };
}

/** A zod 4 schema (from this package's `schema` or the user's own zod 4): what the JSON schema is made from. */
function isZodSchema(v: unknown): boolean {
  return typeof v === 'object' && v !== null && '_zod' in v && typeof (v as { safeParse?: unknown }).safeParse === 'function';
}

function describe(v: unknown): string {
  if (v === null || v === undefined) return String(v);
  if (typeof v !== 'object') return typeof v;
  if ('_def' in v && !('_zod' in v)) return 'a zod 3 schema (this SDK uses zod 4)';
  return Array.isArray(v) ? 'an array' : 'a plain object';
}

/** Whether this call of `def` needs a person's approval; a needsApproval function that throws counts as yes. */
export function approvalNeeded(def: ToolDefinition, input: unknown): boolean {
  const rule = def.needsApproval;
  if (typeof rule === 'function') {
    try {
      return rule(input) === true;
    } catch {
      return true;
    }
  }
  return rule === true;
}

export function isToolDefinition(v: unknown): v is ToolDefinition {
  return typeof v === 'object' && v !== null && (v as ToolDefinition).kind === 'tool';
}

export function isToolImplementation(v: unknown): v is ToolImplementation {
  return typeof v === 'object' && v !== null && (v as ToolImplementation).kind === 'tool-implementation';
}

/** The spec sent to the API: name, description and the input's JSON schema. */
export function toolSpec(def: ToolDefinition): ToolSpec {
  if (def.jsonSchema) return { name: def.name, description: def.description, input_schema: def.jsonSchema };
  const { $schema: _ignored, ...schema } = z.toJSONSchema(def.input, { io: 'input' }) as Record<string, unknown>;
  if (schema.type !== 'object') {
    throw new InvalidToolDefinitionError(`tool '${def.name}' input must be a zod object schema (the API takes objects)`);
  }
  return { name: def.name, description: def.description, input_schema: schema };
}

export type ToolInputCheck = { ok: true; input: unknown } | { ok: false; error: string };

/** Validates a model's tool call against the tool's schema; the error text goes back to the model. */
export function checkToolInput(def: ToolDefinition, input: unknown): ToolInputCheck {
  const result = def.input.safeParse(input);
  if (result.success) return { ok: true, input: result.data };
  const issues = result.error.issues.map((i) => `${i.path.map(String).join('.') || '(input)'}: ${i.message}`);
  return { ok: false, error: `Invalid input for tool '${def.name}': ${issues.join('; ')}. Fix the arguments and call it again.` };
}

/** Tool results are text on the wire; objects are sent as JSON. */
export function toolOutputToText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (output === undefined || output === null) return '';
  return JSON.stringify(output);
}

/** What a worker (or an inline run) can be given tool code as: implementations, tools with `execute`, or modules/arrays of them. */
export type ToolSource = ToolImplementation | ToolDefinition | readonly ToolSource[];
