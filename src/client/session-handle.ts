/**
 * A session from the client side (SessionHandle: prompt, queue, approvals, interrupt, catalogue edits,
 * fork, end, delete), and the start of a session's workflow, which returns one (a fork starts a session).
 */
import { randomInt, randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, type Client, type WorkflowHandle } from '@temporalio/client';
import type { UpdateDefinition } from '@temporalio/common';
import type { AgentDefinition } from '../core/agent';
import type { ContextBudget } from '../core/budget';
import type { Entry } from '../core/entries';
import { FabricError } from '../core/errors';
import type { AgentEvent } from '../core/events';
import type { CompactionState } from '../core/conversation';
import { parseSessionId, sessionSlug } from '../core/sessions/ids';
import type { LabelValue } from '../core/sessions/labels';
import type { SessionSettingsPatch } from '../core/sessions/settings';
import type { PlanMode, SessionPlan } from '../core/sessions/plans';
import { parseWith } from '../core/validate';
import { compactionStateQuery, contextBudgetQuery, eventsQuery, messagesQuery, usageQuery, type AgentUsage } from '../wire/messages';
import {
  approveUpdate,
  decidePlanUpdate,
  sessionPlansQuery,
  cancelMessageUpdate,
  editSessionUpdate,
  endSessionUpdate,
  forkPointQuery,
  resetSessionUpdate,
  interruptUpdate,
  sessionInfoQuery,
  sessionPromptUpdate,
  sessionReplyUpdate,
  sessionSendUpdate,
  type CarriedSession,
  type PendingApproval,
  type SessionEdit,
  type SessionInfo,
  type SessionWorktree,
  type SessionReply,
  type SessionResetResult,
  type SessionPromptRequest,
} from '../wire/session-messages';
import { attachmentStore, storeAttachments } from './attachments';
import { checkOnlyWaitLimits, checkPromptOptions, decisionRequest, planDecision, splitWaitLimits, type DecisionOptions } from './call-options';
import { approvalRequests, approvalSource, type ApprovalRequest, type ApprovalsOptions } from './approvals';
import type { CollectGarbageReport } from './collect-garbage';
import { deleteSession } from './session-delete';
import { startPromptStream, streamOf, type StreamOptions } from './stream/handles';
import { refuseUnknownAgent } from './unknown-agent';
import { guardClose } from './connection-close';
import type { PromptStream } from './stream/prompt-stream';
import type { StreamEnvelope } from '../wire/stream';
import { messageUpdateId, runSessionQuery, runSessionUpdate, typedSessionError } from './session-updates';
import { underBounds, waitBounds, type WaitLimits } from './wait-bounds';
import { missingSearchAttributes } from './search-attribute-errors';
import { forkedSession, sessionStartPlan } from './session-plan';
import { endOptionsSchema, forkOptionsSchema, type DeleteOptions, type EndSessionOptions, type ForkOptions, type SessionPromptOptions, type StartSessionOptions } from './session-options';

/** A session with this id exists already (a caller-chosen id; a generated one just gets another slug). */
export class SessionExistsError extends FabricError {
  constructor(readonly sessionId: string) {
    super('SESSION_EXISTS', `id: a session ${sessionId} exists already; choose another id or getSession(client, '${sessionId}')`);
  }
}

const SLUG_ATTEMPTS = 8;

export async function startSessionWith(
  client: Client,
  agent: AgentDefinition | string,
  options: StartSessionOptions,
  carried: CarriedSession | undefined,
): Promise<SessionHandle> {
  const plan = sessionStartPlan(agent, options, carried);
  const chosen = options.id !== undefined;
  for (let attempt = 0; ; attempt++) {
    const id = chosen ? parseSessionId(options.id) : sessionSlug(Date.now(), () => randomInt(2 ** 31) / 2 ** 31);
    try {
      const started = await client.workflow.start(plan.agent, { ...plan.options, workflowId: id, workflowIdReusePolicy: 'REJECT_DUPLICATE' });
      await refuseUnknownAgent(started, plan.agent, plan.options.taskQueue);
      return new SessionHandle(client, id, plan.agent);
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw missingSearchAttributes(err, client.options.namespace, 'started with') ?? typedSessionError(err, id);
      if (chosen) throw new SessionExistsError(id);
      if (attempt + 1 >= SLUG_ATTEMPTS) throw new SessionExistsError(id);
    }
  }
}

/** A session: its id is the workflow id, so it follows the session across continue-as-new. */
export class SessionHandle {
  readonly workflow: WorkflowHandle;

  constructor(
    readonly client: Client,
    readonly id: string,
    private agentName?: string,
  ) {
    this.workflow = client.workflow.getHandle(id);
    guardClose(client.connection);
  }

  /**
   * Sends a message and resolves to the reply (queued behind a running turn, in order). Waits through
   * RPC timeouts and continue-as-new; `timeoutMs` or `signal` end the wait with WAIT_ENDED, naming the
   * message id to reattach with (the message stays in the session).
   */
  async prompt(text: string, options: SessionPromptOptions = {}): Promise<string> {
    checkPromptOptions(options, 'session prompt');
    const messageId = options.messageId ?? randomUUID();
    const req = await this.request(text, messageId, options);
    const reply = await this.update(sessionPromptUpdate, [req], messageUpdateId('prompt', messageId, text, req.attachments), options, messageId);
    return this.followReply(reply, options);
  }

  /** The update's argument: the attachments checked and stored first (nothing is queued when one is refused). */
  private async request(text: string, messageId: string, options: SessionPromptOptions): Promise<SessionPromptRequest> {
    const attachments = await storeAttachments(attachmentStore(this.client, options.store), options.attachments);
    return attachments ? { text, messageId, attachments } : { text, messageId };
  }

  /**
   * The session's stream (text and thinking deltas, tool calls, approvals, decisions, status, title,
   * replies), in order, from offset `from` (a reconnecting client passes its last offset + 1).
   */
  stream(options: StreamOptions = {}): AsyncIterable<StreamEnvelope> {
    return streamOf(this.client, this.id, options, this.typed);
  }

  /** Sends a message and streams its turn; `.reply` resolves to the reply (as `prompt` does). */
  async promptStream(text: string, options: SessionPromptOptions & Pick<StreamOptions, 'transport' | 'livePollMs'> = {}): Promise<PromptStream> {
    // The prompt update itself (one update in history, as prompt() has), sent through prompt() so it keeps
    // one update id across RPC timeouts and follows the session across continue-as-new.
    checkPromptOptions(options, 'session promptStream');
    const { transport: _transport, livePollMs: _livePollMs, ...message } = options;
    // Where the stream stands is a query: within the prompt's bound, so no worker is WAIT_ENDED (or NO_WORKER), not a hang.
    const read = <T>(ask: () => Promise<T>): Promise<T> => underBounds(this.client, waitBounds(this.client, options), () => runSessionQuery(this.workflow, this.id, ask));
    return startPromptStream(this.client, this.id, async (messageId) => ({ reply: this.prompt(text, { ...message, messageId }) }), options, this.typed, read);
  }

  /**
   * The one mapping of a Temporal failure to this session's typed error (SESSION_NOT_FOUND, SESSION_CLOSED,
   * a FabricError the session sent): updates and queries get it in session-updates, streams through this.
   */
  private readonly typed = (err: unknown): unknown => typedSessionError(err, this.id);

  /** Queues a message and returns at once with its id (`reply(id)` waits for the answer; position -1: answered already). */
  async send(text: string, options: SessionPromptOptions = {}): Promise<{ messageId: string; position: number }> {
    checkPromptOptions(options, 'session prompt');
    const messageId = options.messageId ?? randomUUID();
    const req = await this.request(text, messageId, options);
    return this.update(sessionSendUpdate, [req], messageUpdateId('send', messageId, text, req.attachments), options, messageId);
  }

  /** The reply to a message sent earlier (waits for it; any message of the session's life). */
  async reply(messageId: string, limits: WaitLimits = {}): Promise<string> {
    return this.followReply(await this.update(sessionReplyUpdate, [{ messageId }], randomUUID(), limits, messageId), limits);
  }

  /** A reply that says the session continued as new is asked for again, from the next run. */
  async followReply(reply: SessionReply, limits: WaitLimits = {}): Promise<string> {
    let r = reply;
    while (r.continued) r = await this.update(sessionReplyUpdate, [{ messageId: r.messageId }], randomUUID(), limits, r.messageId);
    return r.text;
  }

  /** Every update goes through here: one id per call, kept through retries, across continue-as-new. */
  private update<Ret, Args extends unknown[]>(def: UpdateDefinition<Ret, Args>, args: Args, updateId: string = randomUUID(), limits: WaitLimits = {}, messageId?: string): Promise<Ret> {
    return runSessionUpdate({ client: this.client, handle: this.workflow, sessionId: this.id, def, args, updateId, limits, ...(messageId !== undefined ? { messageId } : {}) });
  }

  /*
   * The calls below change the session and wait for it to take the change, as `send` does: `timeoutMs` or
   * `signal` (or the client's withDeadline / withAbortSignal) end the wait with WAIT_ENDED. The change is
   * not withdrawn: a worker that comes later applies it (an approval for a call already decided is then
   * refused, ALREADY_DECIDED).
   */

  /** Removes a queued message that has not started; its prompt rejects with MESSAGE_CANCELLED. */
  async cancelMessage(messageId: string, limits: WaitLimits = {}): Promise<void> {
    checkOnlyWaitLimits(limits, 'wait options');
    return this.update(cancelMessageUpdate, [{ messageId }], randomUUID(), limits);
  }

  /** Cancels the running turn (its model call, tools, approval wait); the next message says so to the model. */
  async interrupt(limits: WaitLimits = {}): Promise<{ interrupted: boolean; messageId?: string }> {
    checkOnlyWaitLimits(limits, 'wait options');
    return this.update(interruptUpdate, [], randomUUID(), limits);
  }

  /** Lets a tool call that waits for a decision run; `options` is the note the model reads, or `{ note, timeoutMs, signal }`. */
  async approve(callId: string, options?: string | DecisionOptions): Promise<void> {
    const { request, limits } = decisionRequest(callId, true, options);
    return this.update(approveUpdate, [request], randomUUID(), limits);
  }

  /** Refuses a tool call that waits for a decision: the model reads the refusal (and the note). */
  async deny(callId: string, options?: string | DecisionOptions): Promise<void> {
    const { request, limits } = decisionRequest(callId, false, options);
    return this.update(approveUpdate, [request], randomUUID(), limits);
  }

  async pendingApprovals(): Promise<PendingApproval[]> {
    return (await this.info()).pendingApprovals;
  }

  /** Each tool call waiting for a decision, once, as it comes (those waiting already first): see ./approvals. */
  approvals(options: ApprovalsOptions = {}): AsyncIterable<ApprovalRequest> {
    return approvalRequests(approvalSource(this, this.client, this.id, this.typed, (ask) => runSessionQuery(this.workflow, this.id, ask)), options);
  }

  /** The plans the session keeps (explore mode's submit_plan), oldest first: pending, approved or declined. */
  plans(): Promise<SessionPlan[]> {
    return runSessionQuery(this.workflow, this.id, () => this.workflow.query(sessionPlansQuery));
  }

  /**
   * Approves a waiting plan: the model reads it as its call's result and follows it; `mode` switches the
   * session (ask or execute) before the agent's next tool calls. UNKNOWN_PLAN / ALREADY_DECIDED (field planId).
   */
  async approvePlan(planId: string, options: { mode?: PlanMode; note?: string } & WaitLimits = {}): Promise<SessionPlan> {
    const { decision, limits } = planDecision(options);
    return this.update(decidePlanUpdate, [{ planId, approved: true, ...decision }], randomUUID(), limits);
  }

  /** Declines a waiting plan: the model reads `note`; the session stays in explore mode. */
  async declinePlan(planId: string, options: { note?: string } & WaitLimits = {}): Promise<SessionPlan> {
    const { decision, limits } = planDecision(options);
    return this.update(decidePlanUpdate, [{ planId, approved: false, ...decision }], randomUUID(), limits);
  }

  info(): Promise<SessionInfo> {
    return runSessionQuery(this.workflow, this.id, () => this.workflow.query(sessionInfoQuery));
  }

  /*
   * An edit waits for the session to take it, as a decision does: `limits` (`timeoutMs`, `signal`) end
   * the wait with WAIT_ENDED, and a worker that comes later applies the edit.
   */
  async edit(edit: SessionEdit, limits: WaitLimits = {}): Promise<SessionInfo> {
    checkOnlyWaitLimits(limits, 'wait options');
    return this.update(editSessionUpdate, [edit], randomUUID(), limits);
  }

  /**
   * Restarts the conversation from a transfer summary (`transferSummary: false`: none) and the agent's
   * memory, in the same workflow: the session id and this handle stay valid, and the old conversation
   * stays in the transcript store (`previousTranscript`). Waits for a running turn to finish.
   */
  async reset(options: { transferSummary?: boolean } & WaitLimits = {}): Promise<SessionResetResult> {
    const { body, limits } = splitWaitLimits(options);
    return this.update(resetSessionUpdate, [body], randomUUID(), limits);
  }

  setStatus(status: string, limits?: WaitLimits): Promise<SessionInfo> {
    return this.edit({ kind: 'status', status }, limits);
  }

  setTitle(title: string, limits?: WaitLimits): Promise<SessionInfo> {
    return this.edit({ kind: 'title', title }, limits);
  }

  label(name: string, value?: LabelValue | null, limits?: WaitLimits): Promise<SessionInfo> {
    return this.edit(value === undefined ? { kind: 'label', name } : { kind: 'label', name, value }, limits);
  }

  unlabel(name: string, limits?: WaitLimits): Promise<SessionInfo> {
    return this.edit({ kind: 'unlabel', name }, limits);
  }

  flag(flagged = true, limits?: WaitLimits): Promise<SessionInfo> {
    return this.edit({ kind: 'flag', flagged }, limits);
  }

  archive(limits?: WaitLimits): Promise<SessionInfo> {
    return this.edit({ kind: 'archive', archived: true }, limits);
  }

  unarchive(limits?: WaitLimits): Promise<SessionInfo> {
    return this.edit({ kind: 'archive', archived: false }, limits);
  }

  markRead(upTo?: number, limits?: WaitLimits): Promise<SessionInfo> {
    return this.edit(upTo === undefined ? { kind: 'read' } : { kind: 'read', upTo }, limits);
  }

  updateSettings(settings: SessionSettingsPatch, limits?: WaitLimits): Promise<SessionInfo> {
    return this.edit({ kind: 'settings', settings }, limits);
  }

  /** Starts a fresh conversation in this session; its title, status, labels and settings stay. */
  clear(limits?: WaitLimits): Promise<SessionInfo> {
    return this.edit({ kind: 'clear' }, limits);
  }

  async messages(): Promise<Entry[]> {
    await this.restored();
    return runSessionQuery(this.workflow, this.id, () => this.workflow.query(messagesQuery));
  }

  async compactionState(): Promise<CompactionState | null> {
    await this.restored();
    return runSessionQuery(this.workflow, this.id, () => this.workflow.query(compactionStateQuery));
  }

  async contextBudget(): Promise<ContextBudget | null> {
    await this.restored();
    return runSessionQuery(this.workflow, this.id, () => this.workflow.query(contextBudgetQuery));
  }

  usage(): Promise<AgentUsage> {
    return runSessionQuery(this.workflow, this.id, () => this.workflow.query(usageQuery));
  }

  events(limit?: number): Promise<AgentEvent[]> {
    return runSessionQuery(this.workflow, this.id, () => this.workflow.query(eventsQuery, limit));
  }

  /**
   * A new session with this one's conversation up to `atMessage`: the shared part by reference to the
   * same stored transcript (nothing copied); this session is untouched.
   */
  async fork(options: ForkOptions): Promise<SessionHandle> {
    parseWith(forkOptionsSchema, options, 'fork options');
    const at = options.atMessage;
    // What the fork keeps is a query (only a worker answers it): within the caller's bound, WAIT_ENDED at it.
    const answer = await underBounds(this.client, waitBounds(this.client, options), async () => {
      await this.restored();
      return runSessionQuery(this.workflow, this.id, () => this.workflow.query(forkPointQuery, at));
    });
    if ('error' in answer) throw new FabricError(answer.error.code, answer.error.message);
    const carried = forkedSession(answer, this.id, at, options.title);
    const desc = await this.workflow.describe();
    return startSessionWith(this.client, answer.agent, {
      ...(options.id !== undefined ? { id: options.id } : {}),
      taskQueue: options.taskQueue ?? desc.taskQueue,
      ...(answer.input !== undefined ? { input: answer.input } : {}),
      ...(options.isolation !== undefined ? { isolation: options.isolation } : {}),
    }, carried);
  }

  /**
   * Ends the session: queued messages are answered SESSION_CLOSED, the workflow completes. A session with
   * a worktree commits its changes on its branch and removes the worktree first, and answers with it.
   */
  async end(options: EndSessionOptions = {}): Promise<{ worktree?: SessionWorktree }> {
    const { body, limits } = splitWaitLimits(parseWith(endOptionsSchema, options, 'end options'));
    return (await this.update(endSessionUpdate, [body], randomUUID(), limits)) ?? {};
  }

  /**
   * Deletes the session: ends it, deletes every run of its workflow (all continue-as-new runs), and with
   * `store` removes the blobs nothing else references (a fork's shared prefix stays with the fork).
   */
  delete(options: DeleteOptions = {}): Promise<{ runs: number; garbage?: CollectGarbageReport }> {
    return deleteSession(this.client, this.workflow, this.id, options);
  }

  /** Right after a continue-as-new the new run loads the conversation: wait for it (bounded). */
  private async restored(): Promise<void> {
    for (let i = 0; i < 300 && (await this.info()).restoring; i++) await new Promise((r) => setTimeout(r, 100));
  }

  get agent(): string | undefined {
    return this.agentName;
  }
}
