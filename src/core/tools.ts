import { z } from 'zod';
import { FabricError } from './errors';
import type { ToolSpec } from './tools-spec';

/** What a tool's `execute` gets besides its input. On Temporal it runs inside an activity. */
export interface ToolContext {
  /** The sandbox's working directory: relative paths resolve against it. */
  cwd: string;
  /** Aborted when the run (or the activity) is cancelled. */
  signal: AbortSignal;
  /** Tells Temporal the tool is alive (a no-op inline). Long tools should call it. */
  heartbeat(details?: unknown): void;
}

export interface ToolDefinition<I = any> {
  readonly kind: 'tool';
  readonly name: string;
  readonly description: string;
  readonly input: z.ZodType<I>;
  /** Runs the tool. Absent only on built-ins declared by name, whose code lives on the worker. */
  readonly execute?: (input: I, ctx: ToolContext) => unknown | Promise<unknown>;
  /** Upper bound for one call; on Temporal the activity's start-to-close timeout. */
  readonly timeoutMs?: number;
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

export class InvalidToolDefinitionError extends FabricError {
  constructor(message: string) {
    super('INVALID_TOOL_DEFINITION', message);
  }
}

/** Defines a tool. The zod schema is both the validator and the JSON schema the model is shown. */
export function tool<S extends z.ZodType>(def: {
  name: string;
  description: string;
  input: S;
  execute: (input: z.infer<S>, ctx: ToolContext) => unknown | Promise<unknown>;
  timeoutMs?: number;
}): ToolDefinition<z.infer<S>> {
  if (!TOOL_NAME.test(def.name)) {
    throw new InvalidToolDefinitionError(`tool name '${def.name}' must match ${TOOL_NAME} (the API's rule)`);
  }
  if (!def.description) throw new InvalidToolDefinitionError(`tool '${def.name}' needs a description`);
  return { kind: 'tool', ...def, input: def.input as z.ZodType<z.infer<S>> };
}

/** The spec sent to the API: name, description and the input's JSON schema. */
export function toolSpec(def: ToolDefinition): ToolSpec {
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
