/** The shapes a Conversation (./conversation) is configured with, takes and gives. */
import { z } from 'zod';
import type { ToolResultBlock, Usage } from './entries';
import type { CompactionReason } from './events';
import type { PromptCache, ThinkingBudget } from './ports';
import type { ToolDefinition } from './tools';
import type { ContextMemory } from './context/memory';
import type { CompactionHooks } from './context/compaction/hooks';
import type { SummarizerUsage } from './context/compaction/controller';
import type { CompactionSettings, PromptCompactionOverrides } from './context/settings';
import type { ServerContextUsage, StrategyDecision } from './context/strategy';
import type { CostBudget, UsageCost } from './costs';
import type { ModelOverrides } from './model-table';
import { lazySchema } from './lazy-schema';

export interface ConversationConfig {
  id: string;
  model: string;
  maxTokens: number;
  system?: string;
  tools: ToolDefinition[];
  cwd: string;
  maxSteps: number;
  /** undefined: not injected (strict entry); compaction is then off. */
  compaction: CompactionSettings | undefined;
  /** Whether compaction is on when `compaction.enabled` is not said (default entry: true). */
  compactionDefaultEnabled: boolean;
  contextWindowTokens: number | undefined;
  /**
   * Asked before each tool call whose input is valid (permission modes, approvals). A refusal goes to
   * the model as the call's error result. May throw TurnSuspendedError (the host continues as new).
   */
  authorize?: ToolAuthorizer;
  /**
   * Asked for a call of a tool that needs approval (`needsApproval`) when no `authorize` is set (a plain
   * run; a session's authorize handles it). Without one such a call is denied: nobody can approve it.
   */
  approver?: ToolAuthorizer;
  /** Tools the host offers now besides `tools` (asked before each model call and tool round): a session's submit_plan. */
  hostTools?: () => readonly ToolDefinition[];
  /** Prompt caching for the model calls (undefined: off). */
  cache?: PromptCache;
  /** Extended thinking for the model calls (undefined: off). */
  thinking?: ThinkingBudget;
  /** The agent's compaction hooks (init({ hooks })). */
  hooks?: CompactionHooks;
  /** The agent's memory file (compaction.memory): flushed before compactions, re-injected after them. */
  memory?: ContextMemory;
  /** The recorded compaction strategy decision (absent: client). */
  strategy?: StrategyDecision;
  /** The app's rows of the model table (init({ models })): prices and limits over the built-in ones. */
  models?: ModelOverrides;
  /** No model call starts that could take the conversation's cost past it (BUDGET_EXCEEDED). */
  budget?: CostBudget;
}

/** `allow: false` answers the call with `content` instead of running it (an error result unless `isError: false`). */
export type ToolVerdict = { allow: true } | { allow: false; content: string; isError?: boolean };

/** What the model reads when a call needs approval and the run has no way to ask anyone. */
export function noApproverText(tool: string): string {
  return `The call to ${tool} needs a person's approval, and this run has no approver, so it did not run. Do not retry it; say what you wanted to do instead.`;
}

/** What the model reads when a person denied a call (with their note, if any). */
export function deniedCallText(tool: string, note?: string): string {
  return `The user denied the call to ${tool}${note ? `: ${note}` : '.'} It did not run.`;
}
export type ToolAuthorizer = (call: ToolCall, def: ToolDefinition) => Promise<ToolVerdict>;

export interface ToolCall {
  id: string;
  name: string;
  input: unknown;
}

/**
 * A turn paused at its tool calls (some wait for approval) so that it can be resumed by another run:
 * everything needed besides the conversation, which ends with the assistant's tool_use entry.
 */
export interface SuspendedTurn {
  /** Index of the turn's user entry: where a failed resumption rolls back to. */
  turnStart: number;
  calls: ToolCall[];
  /** Results of the calls that finished before the turn paused. */
  results: ToolResultBlock[];
  /**
   * Steps (tool rounds) used so far, and the limit. The old names stay: a suspended turn is carried to
   * the next run through Temporal (continue-as-new input), so they are wire names.
   */
  turn: number;
  maxTurns: number;
  /** The turn's thinking: a resumed tool loop must think as it started (absent: off). */
  thinking?: ThinkingBudget;
}

import type { AttachmentRef } from './attachments';
export { parseAttachmentRefs } from './attachments';

export interface PromptOptions<T = unknown> extends PromptCompactionOverrides {
  /** Parse the final reply as JSON and validate it with this schema. */
  output?: z.ZodType<T>;
  /** Steps (tool rounds) this prompt may take (default: the session's). */
  maxSteps?: number;
  /** @deprecated since 0.5.0: `maxSteps`. */
  maxTurns?: number;
  /** Files sent with the prompt, by reference (their bytes are in the store: see core/attachments). */
  attachments?: AttachmentRef[];
}

export interface CompactOptions {
  keepRecentEntries?: number;
  generateSummary?: boolean;
  reason?: CompactionReason;
}

export const resetOptionsSchema = lazySchema(() => z.object({ transferSummary: z.boolean().optional() }).strict());

export type ResetOptions = z.infer<typeof resetOptionsSchema>;

export interface ResetResult {
  /** Entries the old conversation had (it stays in the runtime's transcript store, where there is one). */
  entriesBefore: number;
  /** The transfer summary the new conversation starts with ('' when there was nothing to summarise). */
  summary: string;
}

export interface CompactResult {
  summary: string;
  compactedEntries: number;
}

export interface ConversationUsage extends Usage {
  modelCalls: number;
  /** The summariser's calls (compaction), counted apart from the conversation's model calls. */
  summarizer: SummarizerUsage;
  /** What the model calls cost (the summariser's not included), from the model table's prices. */
  cost: UsageCost;
  /** What Claude's server-side context management cleared and compacted (strategy 'server' only). */
  serverContext?: ServerContextUsage;
}

/** A user prompt: the API refuses text blocks that are empty or only whitespace, so we refuse them first. */
export const promptTextSchema = lazySchema(() => z.string().refine((t) => t.trim().length > 0, 'must contain non-whitespace text'));

/** @deprecated since 0.5.0: ConversationConfig. */
export type SessionConfig = ConversationConfig;
/** @deprecated since 0.5.0: ConversationUsage. */
export type SessionUsage = ConversationUsage;
