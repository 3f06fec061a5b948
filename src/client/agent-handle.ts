import type { Client, WorkflowHandle } from '@temporalio/client';
import type { ContextBudget } from '../core/budget';
import type { Entry } from '../core/entries';
import type { AgentEvent } from '../core/events';
import type { CompactionState, CompactResult } from '../core/session';
import type { AgentUsage, CompactRequest, PromptRequest } from '../workflows/agent-workflow';

/** Query and update names: the wire contract with agent workflows (see workflows/agent-workflow.ts). */
export const AGENT_QUERIES = {
  messages: 'fh.messages',
  compactionState: 'fh.compactionState',
  contextBudget: 'fh.contextBudget',
  usage: 'fh.usage',
  events: 'fh.events',
  sessions: 'fh.sessions',
} as const;
export const COMPACT_UPDATE = 'fh.compact';
export const PROMPT_UPDATE = 'fh.prompt';
export const CLOSE_SIGNAL = 'fh.close';

/** A running (or finished) agent workflow, with typed queries. */
export class AgentHandle<O = unknown> {
  constructor(
    readonly workflow: WorkflowHandle,
    readonly client: Client,
  ) {}

  get workflowId(): string {
    return this.workflow.workflowId;
  }

  result(): Promise<O> {
    return this.workflow.result() as Promise<O>;
  }

  /** The conversation of a session (default: the first), as the model sees it now. */
  messages(sessionId?: string): Promise<Entry[]> {
    return this.workflow.query<Entry[], [string?]>(AGENT_QUERIES.messages, sessionId);
  }

  compactionState(sessionId?: string): Promise<CompactionState | null> {
    return this.workflow.query<CompactionState | null, [string?]>(AGENT_QUERIES.compactionState, sessionId);
  }

  contextBudget(sessionId?: string): Promise<ContextBudget | null> {
    return this.workflow.query<ContextBudget | null, [string?]>(AGENT_QUERIES.contextBudget, sessionId);
  }

  usage(): Promise<AgentUsage> {
    return this.workflow.query<AgentUsage>(AGENT_QUERIES.usage);
  }

  events(limit?: number): Promise<AgentEvent[]> {
    return this.workflow.query<AgentEvent[], [number?]>(AGENT_QUERIES.events, limit);
  }

  sessions(): Promise<string[]> {
    return this.workflow.query<string[]>(AGENT_QUERIES.sessions);
  }

  /** Compacts a session now (a workflow update: recorded in history, waits for a running prompt to end). */
  compact(request: CompactRequest = {}): Promise<CompactResult> {
    return this.workflow.executeUpdate<CompactResult, [CompactRequest]>(COMPACT_UPDATE, { args: [request] });
  }

  /**
   * Sends a prompt to the run (a workflow update, so it is in history once accepted) and resolves to
   * the model's reply. The agent answers it when its run calls `harness.serve()`, or between its own prompts.
   */
  prompt(text: string, options: { sessionId?: string } = {}): Promise<string> {
    return this.workflow.executeUpdate<string, [PromptRequest]>(PROMPT_UPDATE, { args: [{ text, ...options }] });
  }

  /** Ends `harness.serve()` in the run once prompts in flight are answered. */
  close(): Promise<void> {
    return this.workflow.signal(CLOSE_SIGNAL);
  }

  fetchHistory() {
    return this.workflow.fetchHistory();
  }
}
