/**
 * One tool call of a Conversation's step (validate, authorise, run through the ports, cap the result),
 * and the final reply parsed as the prompt's structured output. Pure given what the ports return.
 */
import type { z } from 'zod';
import type { Entry, ToolResultBlock, ToolResultsEntry, UserEntry } from './entries';
import type { AgentEventType, EventPayloads } from './events';
import { OutputParseError } from './errors';
import type { RuntimePorts } from './ports';
import { approvalNeeded, checkToolInput, toolSpec, type ToolDefinition } from './tools';
import type { ToolSpec } from './tools-spec';
import { parseWith } from './validate';
import { capToolResult } from './context/cap';
import { noApproverText, type ToolAuthorizer, type ToolCall } from './conversation-types';
import { started, thenSettle, toPromise, type Pending } from './pending';

/** How much of a tool result an event carries (the entry keeps all of it). */
const EVENT_TEXT_LIMIT = 2000;

export interface ToolCallContext {
  conversationId: string;
  cwd: string;
  /** The tools the model may call, by name (aliases included). */
  tools: ReadonlyMap<string, ToolDefinition>;
  authorize?: ToolAuthorizer;
  /** For calls of tools that need approval, when there is no `authorize` (see ConversationConfig.approver). */
  approver?: ToolAuthorizer;
  /** compaction.toolResults.maxTokens (undefined: results are not capped). */
  maxResultTokens?: number;
  ports: Pick<RuntimePorts, 'runTool'>;
  emit<K extends AgentEventType>(type: K, data: EventPayloads[K]): void;
}

/**
 * Not async, and no promise of its own on the usual path (no authoriser, no approval): on Temporal
 * this runs as workflow code, whose sandbox captures a stack trace for every promise made, on every
 * replay too (see ./pending). Whatever throws settles as a failure, as from an async function.
 */
export function runToolCall(ctx: ToolCallContext, call: ToolCall): Pending<ToolResultBlock> {
  return started(() => {
    ctx.emit('tool_call', { id: call.id, name: call.name, input: call.input });
    const def = ctx.tools.get(call.name);
    // The model invented a tool: tell it, so it can correct itself; the run goes on.
    if (!def) return Promise.resolve(toolResult(ctx, call, `Unknown tool '${call.name}'. Available tools: ${[...ctx.tools.keys()].join(', ') || '(none)'}.`, true));
    const check = checkToolInput(def, call.input);
    if (!check.ok) return Promise.resolve(toolResult(ctx, call, check.error, true));
    if (ctx.authorize || approvalNeeded(def, check.input)) return runAuthorized(ctx, call, def, check.input);
    return runChecked(ctx, call, def, check.input);
  });
}

/** A call that asks its authoriser (or approver) first. */
async function runAuthorized(ctx: ToolCallContext, call: ToolCall, def: ToolDefinition, input: unknown): Promise<ToolResultBlock> {
  const request = { id: call.id, name: call.name, input };
  const verdict = ctx.authorize
    ? await ctx.authorize(request, def)
    : ctx.approver
      ? await ctx.approver(request, def)
      : { allow: false as const, content: noApproverText(call.name) };
  if (verdict && !verdict.allow) return toolResult(ctx, call, verdict.content, verdict.isError !== false);
  return toPromise(runChecked(ctx, call, def, input));
}

function runChecked(ctx: ToolCallContext, call: ToolCall, def: ToolDefinition, input: unknown): Pending<ToolResultBlock> {
  const running = ctx.ports.runTool({ sessionId: ctx.conversationId, id: call.id, name: call.name, input, cwd: ctx.cwd, timeoutMs: def.timeoutMs }, def);
  return thenSettle(running, (res) => toolResult(ctx, call, capped(res.content, res.contentRef, ctx.maxResultTokens), res.isError));
}

function toolResult(ctx: ToolCallContext, { id, name }: ToolCall, content: string, isError: boolean): ToolResultBlock {
  ctx.emit('tool_result', { id, name, isError, content: content.slice(0, EVENT_TEXT_LIMIT) });
  return isError ? { type: 'tool_result', tool_use_id: id, content, is_error: true } : { type: 'tool_result', tool_use_id: id, content };
}

/**
 * A round's results in call order. Every tool_use gets its tool_result even when a call failed outright
 * (cancelled, no implementation on the worker), so the history stays valid for the API; the first
 * failure is the caller's to throw.
 */
export function toolRound(calls: readonly ToolCall[], settled: readonly PromiseSettledResult<ToolResultBlock>[]): { results: ToolResultBlock[]; failure?: PromiseRejectedResult } {
  const results = settled.map((r, i): ToolResultBlock =>
    r.status === 'fulfilled'
      ? r.value
      : { type: 'tool_result', tool_use_id: calls[i]!.id, content: `Tool call failed: ${errorMessage(r.reason)}`, is_error: true },
  );
  const failure = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  return failure ? { results, failure } : { results };
}

/**
 * Oversized output is capped (compaction.toolResults.maxTokens): only the entry's content changes,
 * never which commands run, so it is safe in workflow code. The marker names the stored copy when
 * the runtime kept one (on Temporal the tool activity stores results by content hash).
 */
function capped(content: string, ref: string | undefined, maxTokens: number | undefined): string {
  return maxTokens === undefined ? content : capToolResult(content, ref !== undefined ? { maxTokens, ref } : { maxTokens }).content;
}

/** The prompt's result: the reply text, or (with `output`) the reply parsed as JSON and validated. */
export function parseFinalReply<T>(text: string, output: z.ZodType<T> | undefined): T {
  if (!output) return text as T;
  let parsed: unknown;
  try {
    parsed = JSON.parse(extractJson(text));
  } catch {
    throw new OutputParseError(`The model's reply is not JSON: ${text.slice(0, 200)}`);
  }
  return parseWith(output, parsed, 'model output');
}

/** Accepts a bare JSON reply or one fenced in ```json … ```. */
function extractJson(text: string): string {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(text);
  return (fenced ? fenced[1] : text).trim();
}

/** The last user entry: the running turn's prompt (with its attachments, which an overflow's reset resends). */
export function lastUserEntry(entries: readonly Entry[]): UserEntry | undefined {
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    if (e.type === 'user') return e;
  }
  return undefined;
}

/** Error results for the tool calls the last assistant entry left unanswered (undefined: none). */
export function interruptedResults(entries: readonly Entry[]): ToolResultsEntry | undefined {
  const last = entries[entries.length - 1];
  if (last?.type !== 'assistant') return undefined;
  const uses = last.content.filter((b): b is Extract<typeof b, { type: 'tool_use' }> => b.type === 'tool_use');
  if (uses.length === 0) return undefined;
  return {
    type: 'tool_results',
    results: uses.map((u) => ({ type: 'tool_result', tool_use_id: u.id, content: 'Not run: the user interrupted the turn.', is_error: true })),
  };
}

/** The tool specs and tools by name with the host's offered tools added (the same objects when it offers none). */
export function withHostTools(specs: ToolSpec[], byName: Map<string, ToolDefinition>, hostTools: (() => readonly ToolDefinition[]) | undefined): { specs: ToolSpec[]; byName: Map<string, ToolDefinition> } {
  const extra = hostTools?.().filter((t) => !byName.has(t.name)) ?? [];
  if (extra.length === 0) return { specs, byName };
  return { specs: [...specs, ...extra.map(toolSpec)], byName: new Map([...byName, ...extra.map((t) => [t.name, t] as const)]) };
}

/** Token counts added up (cache counts default to 0). */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
