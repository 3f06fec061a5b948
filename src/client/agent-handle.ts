import { randomUUID } from 'node:crypto';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { ContextBudget } from '../core/budget';
import type { Entry } from '../core/entries';
import type { AgentEvent } from '../core/events';
import type { CompactionState, CompactResult } from '../core/conversation';
import { NotServingError } from '../core/errors';
import type { StreamEnvelope } from '../wire/stream';
import { approvalRequests, approvalSource, type ApprovalRequest, type ApprovalsOptions } from './approvals';
import { startPromptStream, streamOf, type StreamOptions } from './stream/handles';
import { guardClose, untilClosed } from './connection-close';
import type { PromptStream } from './stream/prompt-stream';
import { checkPromptOptions, decisionRequest, splitWaitLimits, type DecisionOptions, type DecisionRequest } from './call-options';
import { runAgentQuery } from './run-queries';
import { readBeforeUpdate, runAgentUpdate } from './run-updates';
import type { WaitLimits } from './wait-bounds';
import {
  closeSignal,
  compactionStateQuery,
  compactUpdate,
  contextBudgetQuery,
  eventsQuery,
  messagesQuery,
  promptUpdate,
  pendingApprovalsQuery,
  decideApprovalUpdate,
  type RunApproval,
  conversationsQuery,
  usageQuery,
  type AgentUsage,
  type CompactRequest,
} from '../wire/messages';

export { AGENT_QUERIES, CLOSE_SIGNAL, COMPACT_UPDATE, PROMPT_UPDATE } from '../wire/messages';

export interface PromptOptions extends WaitLimits {
  /** The conversation to prompt (default: the run's first). On the wire it is still `sessionId`. */
  conversationId?: string;
  /** @deprecated since 0.5.0: `conversationId` (a session is now what a user talks to, not a conversation in a run). */
  sessionId?: string;
  /**
   * Idempotency key: Temporal's update id. A retry with the same id (after a timeout, a lost
   * connection) returns the first attempt's reply and does not run the prompt again. Default: a new one,
   * named by the WAIT_ENDED error when `timeoutMs` or `signal` ends the wait.
   */
  updateId?: string;
}

/**
 * A running (or finished) agent workflow, with typed queries; a refused or failed update rejects with our
 * typed error, and so does a query (NO_WORKER with no worker polling, WAIT_ENDED at the client's bound).
 */
export class AgentHandle<O = unknown> {
  constructor(
    readonly workflow: WorkflowHandle,
    readonly client: Client,
  ) {
    guardClose(client.connection);
  }

  get workflowId(): string {
    return this.workflow.workflowId;
  }

  /**
   * The run's result. A failed run (or one the worker terminated with one of our codes, e.g.
   * STORE_BLOB_MISSING) rejects with Temporal's WorkflowFailedError: `decodeFailure(err)` gives our typed
   * error. Closing the client's connection while it waits rejects it with CONNECTION_CLOSED.
   */
  result(): Promise<O> {
    return untilClosed(this.client, this.workflowId, () => this.workflow.result() as Promise<O>);
  }

  /** The entries of a conversation (default: the run's first), as the model sees them now. */
  entries(conversationId?: string): Promise<Entry[]> {
    return this.query(() => this.workflow.query(messagesQuery, conversationId));
  }

  /** The same as entries() (its 0.4.0 name). */
  messages(conversationId?: string): Promise<Entry[]> {
    return this.entries(conversationId);
  }

  compactionState(sessionId?: string): Promise<CompactionState | null> {
    return this.query(() => this.workflow.query(compactionStateQuery, sessionId));
  }

  contextBudget(sessionId?: string): Promise<ContextBudget | null> {
    return this.query(() => this.workflow.query(contextBudgetQuery, sessionId));
  }

  usage(): Promise<AgentUsage> {
    return this.query(() => this.workflow.query(usageQuery));
  }

  events(limit?: number): Promise<AgentEvent[]> {
    return this.query(() => this.workflow.query(eventsQuery, limit));
  }

  /** The ids of the run's conversations (the query is still named `fh.sessions` on the wire). */
  conversations(): Promise<string[]> {
    return this.query(() => this.workflow.query(conversationsQuery));
  }

  /** @deprecated since 0.5.0: conversations(). */
  sessions(): Promise<string[]> {
    return this.conversations();
  }

  /**
   * Compacts a conversation now (a workflow update: recorded in history, waits for a running prompt to end);
   * `timeoutMs` or `signal` end the wait with RunWaitEndedError (the compaction is not withdrawn).
   */
  compact(request: CompactRequest & WaitLimits = {}): Promise<CompactResult> {
    // A non-object goes to the run as it is, whose validator refuses it (INVALID_INPUT, "compact request").
    const { body, limits } = splitWaitLimits(request);
    return runAgentUpdate({ client: this.client, handle: this.workflow, def: compactUpdate, args: [body], updateId: randomUUID(), limits });
  }

  /**
   * Sends a prompt to the run (a workflow update: in history once accepted) and resolves to the
   * model's reply. A run answers prompts while its `run` is in `harness.serve()`; a prompt that arrives
   * earlier waits for it. Refused at once (typed errors): a run that has returned or stopped serving
   * (NOT_SERVING), an unknown session (UNKNOWN_SESSION), a prompt over 256 KiB (PROMPT_TOO_LARGE).
   * `timeoutMs` or `signal` end the wait with RunWaitEndedError (WAIT_ENDED), naming the update id.
   */
  async prompt(text: string, options: PromptOptions = {}): Promise<string> {
    checkPromptOptions(options, 'run prompt');
    const { updateId = randomUUID(), timeoutMs, signal } = options;
    const sessionId = options.conversationId ?? options.sessionId;
    const args: [{ text: string; sessionId?: string }] = [sessionId === undefined ? { text } : { text, sessionId }];
    try {
      return await runAgentUpdate({ client: this.client, handle: this.workflow, def: promptUpdate, args, updateId, limits: { timeoutMs, signal } });
    } catch (err) {
      throw await this.notServingIfEnded(err);
    }
  }

  /**
   * An update to a run that has ended is refused by the server as "workflow not found": to the user it
   * is a run that answers no more prompts (NOT_SERVING), as it was while the run was still closing.
   */
  private async notServingIfEnded(err: unknown): Promise<unknown> {
    if ((err as Error)?.name !== 'WorkflowNotFoundError') return err;
    const status = await this.workflow.describe().then((d) => d.status.name, () => undefined);
    return status !== undefined && status !== 'RUNNING' ? new NotServingError('returned') : err;
  }

  /** A query of the run, typed: NO_WORKER when no worker polls its queue, WAIT_ENDED at the client's deadline or abort. */
  private query<T>(read: () => Promise<T>): Promise<T> {
    return runAgentQuery(this.client, this.workflow, read);
  }

  /** Calls of tools with `needsApproval` waiting for a decision, oldest first. */
  pendingApprovals(): Promise<RunApproval[]> {
    return this.query(() => this.workflow.query(pendingApprovalsQuery));
  }

  /**
   * Lets a waiting call run (a workflow update; UNKNOWN_TOOL_CALL / ALREADY_DECIDED when it does not wait).
   * `options` is the note, or `{ note, timeoutMs, signal }`: at the bound, WAIT_ENDED (the decision stays sent).
   */
  async approve(callId: string, options?: string | DecisionOptions): Promise<void> {
    await this.decide(decisionRequest(callId, true, options));
  }

  /** Refuses a waiting call: it does not run, and the model reads the note. */
  async deny(callId: string, options?: string | DecisionOptions): Promise<void> {
    await this.decide(decisionRequest(callId, false, options));
  }

  private async decide({ request, limits }: DecisionRequest): Promise<void> {
    await runAgentUpdate({ client: this.client, handle: this.workflow, def: decideApprovalUpdate, args: [request], updateId: randomUUID(), limits });
  }

  /** Each call waiting for a decision, once, as it comes (those waiting already first), as SessionHandle.approvals. */
  approvals(options: ApprovalsOptions = {}): AsyncIterable<ApprovalRequest> {
    return approvalRequests(approvalSource(this, this.client, this.workflowId, undefined, (ask) => this.query(ask)), options);
  }

  /** The run's stream (see SessionHandle.stream): deltas, tool calls, decisions, replies, in order from `from`. */
  stream(options: StreamOptions = {}): AsyncIterable<StreamEnvelope> {
    return streamOf(this.client, this.workflowId, options);
  }

  /** Sends a prompt and streams its turn (the prompt's update id is its message id); `.reply` resolves to the reply. */
  async promptStream(text: string, options: Omit<PromptOptions, 'updateId'> & { messageId?: string } & Pick<StreamOptions, 'transport' | 'livePollMs'> = {}): Promise<PromptStream> {
    checkPromptOptions(options, 'run promptStream');
    // Everything but how the stream reads goes to the prompt: its conversation and its wait's limits too.
    const { transport: _transport, livePollMs: _livePollMs, messageId = randomUUID(), ...prompt } = options;
    // Where the stream stands is a query, read within the prompt's bound.
    const read = <T>(ask: () => Promise<T>): Promise<T> => readBeforeUpdate(this.client, this.workflow, messageId, { timeoutMs: options.timeoutMs, signal: options.signal }, ask);
    return startPromptStream(this.client, this.workflowId, async (id) => ({ reply: this.prompt(text, { ...prompt, updateId: id }) }), { ...options, messageId }, undefined, read);
  }

  /** Ends `harness.serve()` in the run once prompts in flight are answered. */
  close(): Promise<void> {
    return this.workflow.signal(closeSignal);
  }

  fetchHistory() {
    return this.workflow.fetchHistory();
  }
}
