/**
 * The wire contract between agent workflows and clients: every query, update and signal an agent
 * workflow answers, defined once and imported by both sides (the workflow's handlers and the client
 * handle), so a name or a payload shape cannot drift between them. `@temporalio/workflow`'s define*
 * functions are plain data constructors, safe to import outside a workflow.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { ContextBudget } from '../core/budget';
import type { Entry, Usage } from '../core/entries';
import type { AgentEvent } from '../core/events';
import type { CompactionState, CompactOptions, CompactResult } from '../core/conversation';
import type { UsageCost } from '../core/costs';

export interface PromptRequest {
  text: string;
  /** The session to prompt (default: the run's first session). */
  sessionId?: string;
}

export interface CompactRequest extends Omit<CompactOptions, 'reason'> {
  sessionId?: string;
}

/** Token totals of a run: model calls, and the summariser's calls counted apart. */
export interface AgentUsage extends Usage {
  modelCalls: number;
  summarizer: { inputTokens: number; outputTokens: number; calls: number };
  /** What the model calls cost, from the model table (absent from runs before 0.7; usd null: a model has no price). */
  cost?: UsageCost;
}

export const messagesQuery = defineQuery<Entry[], [string?]>('fh.messages');
export const compactionStateQuery = defineQuery<CompactionState | null, [string?]>('fh.compactionState');
export const contextBudgetQuery = defineQuery<ContextBudget | null, [string?]>('fh.contextBudget');
export const usageQuery = defineQuery<AgentUsage>('fh.usage');
export const eventsQuery = defineQuery<AgentEvent[], [number?]>('fh.events');
/** The ids of the run's conversations. The wire name keeps its 0.4.0 word: histories record it. */
export const conversationsQuery = defineQuery<string[]>('fh.sessions');
/** @deprecated since 0.5.0: conversationsQuery. */
export const sessionsQuery = conversationsQuery;
/**
 * Where a run is: in its own code ('starting'), serving client prompts until closed or idle for
 * `idleTimeoutMs` ('serving'), past serving ('served'), or returned. `fh run` says what it waits for with it.
 */
export interface RunPhase {
  phase: 'starting' | 'serving' | 'served' | 'returned';
  idleTimeoutMs?: number;
}
export const phaseQuery = defineQuery<RunPhase>('fh.phase');
/** A tool call of a plain run waiting for a person (a tool with needsApproval), and its decision. */
export interface RunApproval {
  callId: string;
  tool: string;
  input: unknown;
  requestedAt: number;
}
export interface ApprovalDecision {
  callId: string;
  approved: boolean;
  note?: string;
}
export const pendingApprovalsQuery = defineQuery<RunApproval[]>('fh.pendingApprovals');
export const decideApprovalUpdate = defineUpdate<void, [ApprovalDecision]>('fh.approve');
export const promptUpdate = defineUpdate<string, [PromptRequest]>('fh.prompt');
export const compactUpdate = defineUpdate<CompactResult, [CompactRequest]>('fh.compact');
export const closeSignal = defineSignal('fh.close');

/** Names, for tools that speak the protocol without the definitions (the CLI, audits). */
export const AGENT_QUERIES = {
  messages: messagesQuery.name,
  compactionState: compactionStateQuery.name,
  contextBudget: contextBudgetQuery.name,
  usage: usageQuery.name,
  events: eventsQuery.name,
  conversations: conversationsQuery.name,
  /** @deprecated since 0.5.0: `conversations`. */
  sessions: conversationsQuery.name,
} as const;
export const PROMPT_UPDATE = promptUpdate.name;
export const COMPACT_UPDATE = compactUpdate.name;
export const CLOSE_SIGNAL = closeSignal.name;

/**
 * Largest prompt text (UTF-8 bytes) an update may carry. Temporal refuses payloads over 2 MB (and
 * terminates a run whose accepted update is too large), so the validator refuses well below that;
 * large content belongs in a file the agent reads, or an artifact.
 */
export const MAX_PROMPT_BYTES = 256 * 1024;
