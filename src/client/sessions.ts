/**
 * Sessions from the client side: a session is one workflow of its agent, whose id is the session id.
 * startSession / getSession / sendPrompt and the SessionHandle (prompt, queue, approvals, interrupt,
 * catalogue edits, fork, archive, delete). Loads no worker code.
 */
import { randomInt, randomUUID } from 'node:crypto';
import {
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  type Client,
  type WorkflowHandle,
  type WorkflowStartOptions,
} from '@temporalio/client';
import type { UpdateDefinition } from '@temporalio/common';
import { parseAgentInput, type AgentDefinition } from '../core/agent';
import type { ContextBudget } from '../core/budget';
import type { Entry } from '../core/entries';
import { FabricError, InvalidInputError } from '../core/errors';
import type { AgentEvent } from '../core/events';
import type { CompactionState } from '../core/conversation';
import { parseSessionId, sessionSlug } from '../core/sessions/ids';
import { SessionNotFoundError } from '../core/sessions/host-errors';
import { labelKeywords, parseLabel, type Labels, type LabelValue } from '../core/sessions/labels';
import { applySettingsPatch, defaultSessionSettings, type SessionSettingsPatch } from '../core/sessions/settings';
import { parseTitleInput } from '../core/sessions/titles';
import type { PlanMode, SessionPlan } from '../core/sessions/plans';
import { parseWith } from '../core/validate';
import { z } from 'zod';
import { hashString } from '../core/hash';
import { compactionStateQuery, contextBudgetQuery, eventsQuery, messagesQuery, usageQuery, type AgentUsage } from '../wire/messages';
import { FH_KIND, SESSION_KIND, sessionSearchAttributes } from '../wire/search-attributes';
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
  type SessionEnvelope,
  type SessionInfo,
  type SessionWorktree,
  type SessionReply,
  type SessionResetResult,
  type SessionPromptRequest,
  type SessionStart,
} from '../wire/session-messages';
import type { AttachmentRef } from '../core/attachments';
import { attachmentStore, storeAttachments, type PromptAttachment } from './attachments';
import { approvalRequests, approvalSource, type ApprovalRequest, type ApprovalsOptions } from './approvals';
import { collectStoreGarbage, type CollectGarbageReport } from './collect-garbage';
import { collectableStore } from '../activities/stores/store-gc';
import { startPromptStream, streamOf, type StreamOptions } from './stream/handles';
import { refuseUnknownAgent } from './unknown-agent';
import { guardClose } from './connection-close';
import type { PromptStream } from './stream/prompt-stream';
import type { StreamEnvelope } from '../wire/stream';
import type { TranscriptStore } from '../activities/stores/transcript-store';
import { AGENT_MEMO_KEY, DEFAULT_TASK_QUEUE } from './start';
import { runSessionQuery, runSessionUpdate, typedSessionError, type WaitLimits } from './session-updates';
import { missingSearchAttributes } from './search-attribute-errors';

export interface StartSessionOptions {
  /** The session id (and workflow id). Default: a fresh slug like 261122-amber-forest. */
  id?: string;
  /** The agent's input. */
  input?: unknown;
  /** A title set now is never replaced by a generated one. */
  title?: string;
  settings?: SessionSettingsPatch;
  /** The session's model connection (docs/models.md): the same as `settings.connection`. */
  connection?: string;
  /** The session's model, within its connection: the same as `settings.model`. */
  model?: string;
  labels?: Record<string, LabelValue | null>;
  taskQueue?: string;
  /** Continue as new past this many history events (besides whenever Temporal suggests it). */
  historyLimit?: number;
  /** false: model calls are made without streaming (the stream still carries every durable event). Default true. */
  streaming?: boolean;
  /** Archive the session after this long without a message (ms). Off by default. */
  autoArchiveAfterMs?: number;
  /**
   * 'worktree': the session works in its own `git worktree` of its working directory, on a new branch
   * (`info().worktree` names it); ending or deleting it commits its changes there and removes the
   * worktree (see docs/sessions.md, "Child sessions in their own worktree").
   */
  isolation?: 'worktree';
  /** Anything else Temporal's start takes (memo, retention-related options, …). */
  workflow?: Partial<Omit<WorkflowStartOptions, 'args' | 'workflowId' | 'taskQueue'>>;
}

export interface SessionPromptOptions extends WaitLimits {
  /**
   * Names the message: an idempotency key for the session's whole life (the same id with the same text is
   * queued once and answered once; with other text it is refused, IDEMPOTENCY_KEY_REUSED). Default: a
   * fresh random id, named by the error when a wait ends early.
   */
  messageId?: string;
  /**
   * Files sent with the message (a path, or bytes with their media type): checked before anything is
   * queued (ATTACHMENT_TOO_LARGE, ATTACHMENT_UNSUPPORTED_TYPE), stored by hash in `store`; the message
   * carries only their references. See docs/sessions.md, "Attachments".
   */
  attachments?: PromptAttachment[];
  /** Where attachments are written: the workers' store (default: the client's harness plugin's store, else FH_STORE_DIR). */
  store?: TranscriptStore;
}

/** A session with this id exists already (a caller-chosen id; a generated one just gets another slug). */
export class SessionExistsError extends FabricError {
  constructor(readonly sessionId: string) {
    super('SESSION_EXISTS', `id: a session ${sessionId} exists already; choose another id or getSession(client, '${sessionId}')`);
  }
}

const SLUG_ATTEMPTS = 8;

/** Starts a session of `agent`: a workflow that serves prompts until it is ended or deleted. */
export async function startSession(client: Client, agent: AgentDefinition | string, options: StartSessionOptions = {}): Promise<SessionHandle> {
  return startSessionWith(client, agent, options, undefined);
}

async function startSessionWith(
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
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw missingSearchAttributes(err, client.options.namespace, 'started with') ?? typedError(err, id);
      if (chosen) throw new SessionExistsError(id);
      if (attempt + 1 >= SLUG_ATTEMPTS) throw new SessionExistsError(id);
    }
  }
}

/** A handle on an existing session (no call is made: a wrong id fails at first use with SESSION_NOT_FOUND). */
export function getSession(client: Client, id: string): SessionHandle {
  return new SessionHandle(client, parseSessionId(id));
}

/**
 * Prompts session `id`, starting it first if it does not exist: one round trip (update-with-start),
 * no race between two clients doing the same. Resolves to the reply.
 */
export async function sendPrompt(
  client: Client,
  agent: AgentDefinition | string,
  text: string,
  options: StartSessionOptions & SessionPromptOptions & { id: string },
): Promise<{ session: SessionHandle; reply: string }> {
  const id = parseSessionId(options.id);
  const plan = sessionStartPlan(agent, options, undefined);
  const start = new WithStartWorkflowOperation(plan.agent, {
    ...plan.options,
    workflowId: id,
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
  const messageId = options.messageId ?? randomUUID();
  const attachments = await storeAttachments(attachmentStore(client, options.store), options.attachments);
  const args: [SessionPromptRequest] = [attachments ? { text, messageId, attachments } : { text, messageId }];
  const session = new SessionHandle(client, id, plan.agent);
  try {
    const reply = await client.workflow.executeUpdateWithStart(sessionPromptUpdate, { args, updateId: messageUpdateId('prompt', messageId, text, attachments), startWorkflowOperation: start });
    return { session, reply: await session.followReply(reply) };
  } catch (err) {
    throw missingSearchAttributes(err, client.options.namespace, 'started with') ?? typedError(err, id);
  }
}

/** The settings a session starts with: `settings`, with `connection` and `model` given beside it (the same field twice must agree). */
function startSettings(options: StartSessionOptions): SessionSettingsPatch | undefined {
  const settings: Record<string, unknown> = { ...(options.settings ?? {}) };
  for (const key of ['connection', 'model'] as const) {
    const value = options[key];
    if (value === undefined) continue;
    if (settings[key] !== undefined && settings[key] !== value) {
      throw new InvalidInputError('session options', key, [{ path: key, message: `${key} '${value}' and settings.${key} '${String(settings[key])}' differ; give one` }]);
    }
    settings[key] = value;
  }
  return options.settings === undefined && options.connection === undefined && options.model === undefined ? undefined : (settings as SessionSettingsPatch);
}

/** How a session of `agent` is started (its workflow type and start options); sendPrompt and the web chat handler start with it. */
export function sessionStartPlan(agent: AgentDefinition | string, options: StartSessionOptions, carried: CarriedSession | undefined) {
  const name = typeof agent === 'string' ? agent : agent.name;
  const input = typeof agent === 'string' || options.input === undefined && !agent.input ? options.input : parseAgentInput(agent, options.input);
  const given = startSettings(options);
  // The connection's name is checked here; whether the worker has it, by the worker (UNKNOWN_CONNECTION naming its own).
  const settings = applySettingsPatch(defaultSessionSettings(), given ?? {}, { started: false });
  const labels: Labels = {};
  for (const [n, v] of Object.entries(options.labels ?? {})) {
    const l = parseLabel(n, v ?? undefined);
    labels[l.name] = l.value;
  }
  const title = options.title !== undefined ? parseTitleInput(options.title) : undefined;
  const historyLimit = parseWith(z.number().int().min(20).optional(), options.historyLimit, 'historyLimit');
  const autoArchiveAfterMs = parseWith(z.number().int().positive().optional(), options.autoArchiveAfterMs, 'autoArchiveAfterMs');
  const start: SessionStart = {
    ...(input !== undefined ? { input } : {}),
    ...(title !== undefined ? { title } : {}),
    ...(given ? { settings: given } : {}),
    ...(Object.keys(labels).length ? { labels } : {}),
    ...(historyLimit !== undefined ? { historyLimit } : {}),
    ...(autoArchiveAfterMs !== undefined ? { autoArchiveAfterMs } : {}),
    ...(carried ? { carried } : {}),
    ...(parseWith(z.boolean().optional(), options.streaming, 'streaming') === false ? { streaming: false } : {}),
    ...(parseWith(z.literal('worktree').optional(), options.isolation, 'isolation') ? { isolation: 'worktree' as const } : {}),
  };
  const envelope: SessionEnvelope = { fhSession: start };
  const record = carried?.record;
  const searchAttributes = [
    { key: FH_KIND, value: SESSION_KIND },
    ...sessionSearchAttributes({
      agent: name,
      status: record?.status ?? 'todo',
      title: record?.title ?? title,
      labels: labelKeywords(record?.labels ?? labels),
      flagged: record?.flagged ?? false,
      archived: false,
      model: record?.settings.model ?? settings.model,
      lastMessageAt: record?.lastMessageAt,
    }),
  ];
  return {
    agent: name,
    options: {
      taskQueue: options.taskQueue ?? DEFAULT_TASK_QUEUE,
      ...options.workflow,
      args: [envelope],
      memo: { [AGENT_MEMO_KEY]: name, ...(start.isolation ? { [WORKTREE_MEMO_KEY]: true } : {}), ...options.workflow?.memo },
      typedSearchAttributes: searchAttributes,
    },
  };
}

export interface ForkOptions {
  /** Index (in `messages()`) of the last message the fork keeps. */
  atMessage: number;
  id?: string;
  title?: string;
  taskQueue?: string;
  /** 'worktree': the child session works in its own git worktree of this session's working directory, on a new branch. */
  isolation?: 'worktree';
}

/** How a session ends; only a session with a worktree reads these. */
export interface EndSessionOptions {
  /** Leave the worktree's directory where it is (removing it is then yours: `git worktree remove`). Default false. */
  keepWorktree?: boolean;
  /** Delete the worktree's branch too (default: kept, with the session's changes committed on it). */
  deleteBranch?: boolean;
}

/** The memo mark of a session started with isolation 'worktree': delete() ends it first, so its worker removes the worktree. */
const WORKTREE_MEMO_KEY = 'fhWorktree';

export interface DeleteOptions {
  /** Wait until the server has deleted every run (default true; closed runs go by a background task). */
  wait?: boolean;
  waitMs?: number;
  /**
   * Also remove the store blobs nothing else references: the workers' store (`{ store }`, one that lists
   * and deletes: FileTranscriptStore, S3Store) or a file store's directory (`{ dir }`). Without it the
   * blobs stay until `fh store gc`. `olderThanMs` (default 60 s) is the grace period for blobs no history shows yet.
   */
  store?: { dir: string; olderThanMs?: number } | { store: TranscriptStore; olderThanMs?: number };
  /** A session with a worktree: delete its branch too (default: kept, with the session's changes committed on it). */
  deleteBranch?: boolean;
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
  promptStream(text: string, options: SessionPromptOptions & Pick<StreamOptions, 'transport' | 'livePollMs'> = {}): Promise<PromptStream> {
    // The prompt update itself (one update in history, as prompt() has), sent through prompt() so it keeps
    // one update id across RPC timeouts and follows the session across continue-as-new.
    return startPromptStream(this.client, this.id, async (messageId) => ({ reply: this.prompt(text, { ...options, messageId }) }), options, this.typed);
  }

  /**
   * The one mapping of a Temporal failure to this session's typed error (SESSION_NOT_FOUND, SESSION_CLOSED,
   * a FabricError the session sent): updates and queries get it in session-updates, streams through this.
   */
  private readonly typed = (err: unknown): unknown => typedSessionError(err, this.id);

  /** Queues a message and returns at once with its id (`reply(id)` waits for the answer; position -1: answered already). */
  async send(text: string, options: SessionPromptOptions = {}): Promise<{ messageId: string; position: number }> {
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

  /** Removes a queued message that has not started; its prompt rejects with MESSAGE_CANCELLED. */
  cancelMessage(messageId: string): Promise<void> {
    return this.update(cancelMessageUpdate, [{ messageId }]);
  }

  /** Cancels the running turn (its model call, tools, approval wait); the next message says so to the model. */
  interrupt(): Promise<{ interrupted: boolean; messageId?: string }> {
    return this.update(interruptUpdate, []);
  }

  approve(callId: string, note?: string): Promise<void> {
    return this.update(approveUpdate, [note === undefined ? { callId, approved: true } : { callId, approved: true, note }]);
  }

  deny(callId: string, note?: string): Promise<void> {
    return this.update(approveUpdate, [note === undefined ? { callId, approved: false } : { callId, approved: false, note }]);
  }

  async pendingApprovals(): Promise<PendingApproval[]> {
    return (await this.info()).pendingApprovals;
  }

  /** Each tool call waiting for a decision, once, as it comes (those waiting already first): see ./approvals. */
  approvals(options: ApprovalsOptions = {}): AsyncIterable<ApprovalRequest> {
    return approvalRequests(approvalSource(this, this.client, this.id, this.typed), options);
  }

  /** The plans the session keeps (explore mode's submit_plan), oldest first: pending, approved or declined. */
  plans(): Promise<SessionPlan[]> {
    return runSessionQuery(this.workflow, this.id, () => this.workflow.query(sessionPlansQuery));
  }

  /**
   * Approves a waiting plan: the model reads it as its call's result and follows it; `mode` switches the
   * session (ask or execute) before the agent's next tool calls. UNKNOWN_PLAN / ALREADY_DECIDED (field planId).
   */
  approvePlan(planId: string, options: { mode?: PlanMode; note?: string } = {}): Promise<SessionPlan> {
    return this.update(decidePlanUpdate, [{ planId, approved: true, ...options }]);
  }

  /** Declines a waiting plan: the model reads `note`; the session stays in explore mode. */
  declinePlan(planId: string, options: { note?: string } = {}): Promise<SessionPlan> {
    return this.update(decidePlanUpdate, [{ planId, approved: false, ...options }]);
  }

  info(): Promise<SessionInfo> {
    return runSessionQuery(this.workflow, this.id, () => this.workflow.query(sessionInfoQuery));
  }

  edit(edit: SessionEdit): Promise<SessionInfo> {
    return this.update(editSessionUpdate, [edit]);
  }

  /**
   * Restarts the conversation from a transfer summary (`transferSummary: false`: none) and the agent's
   * memory, in the same workflow: the session id and this handle stay valid, and the old conversation
   * stays in the transcript store (`previousTranscript`). Waits for a running turn to finish.
   */
  reset(options: { transferSummary?: boolean } = {}): Promise<SessionResetResult> {
    return this.update(resetSessionUpdate, [options]);
  }

  setStatus(status: string): Promise<SessionInfo> {
    return this.edit({ kind: 'status', status });
  }

  setTitle(title: string): Promise<SessionInfo> {
    return this.edit({ kind: 'title', title });
  }

  label(name: string, value?: LabelValue | null): Promise<SessionInfo> {
    return this.edit(value === undefined ? { kind: 'label', name } : { kind: 'label', name, value });
  }

  unlabel(name: string): Promise<SessionInfo> {
    return this.edit({ kind: 'unlabel', name });
  }

  flag(flagged = true): Promise<SessionInfo> {
    return this.edit({ kind: 'flag', flagged });
  }

  archive(): Promise<SessionInfo> {
    return this.edit({ kind: 'archive', archived: true });
  }

  unarchive(): Promise<SessionInfo> {
    return this.edit({ kind: 'archive', archived: false });
  }

  markRead(upTo?: number): Promise<SessionInfo> {
    return this.edit(upTo === undefined ? { kind: 'read' } : { kind: 'read', upTo });
  }

  updateSettings(settings: SessionSettingsPatch): Promise<SessionInfo> {
    return this.edit({ kind: 'settings', settings });
  }

  /** Starts a fresh conversation in this session; its title, status, labels and settings stay. */
  clear(): Promise<SessionInfo> {
    return this.edit({ kind: 'clear' });
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
    const at = parseWith(z.number().int().min(0), options.atMessage, 'atMessage');
    parseWith(z.literal('worktree').optional(), options.isolation, 'isolation');
    await this.restored();
    const answer = await runSessionQuery(this.workflow, this.id, () => this.workflow.query(forkPointQuery, at));
    if ('error' in answer) throw new FabricError(answer.error.code, answer.error.message);
    const point = answer;
    // A fork is a new session: its own creation time and message count (the conversation it starts from is the parent's).
    const now = Date.now();
    const record = {
      ...point.record,
      status: 'todo',
      statusManual: false,
      archived: false,
      readPointer: -1,
      continuedRuns: 0,
      createdAt: now,
      lastUsedAt: now,
      lastMessageAt: undefined,
      messageCount: 0,
      forkedFrom: { sessionId: this.id, atMessage: at },
      // The fork's own worktree (if asked for) is made by its first run; the parent's is not the fork's.
      worktree: undefined,
    };
    if (options.title !== undefined) {
      record.title = parseTitleInput(options.title);
      record.titleSource = 'user';
    }
    const carried: CarriedSession = { record, transcript: point.transcript, queue: [], approvals: [], replies: [], interruptedHint: false };
    const desc = await this.workflow.describe();
    return startSessionWith(this.client, point.agent, {
      ...(options.id !== undefined ? { id: options.id } : {}),
      taskQueue: options.taskQueue ?? desc.taskQueue,
      ...(point.input !== undefined ? { input: point.input } : {}),
      ...(options.isolation !== undefined ? { isolation: options.isolation } : {}),
    }, carried);
  }

  /**
   * Ends the session: queued messages are answered SESSION_CLOSED, the workflow completes. A session with
   * a worktree commits its changes on its branch and removes the worktree first, and answers with it.
   */
  async end(options: EndSessionOptions = {}): Promise<{ worktree?: SessionWorktree }> {
    const request = parseWith(endOptionsSchema, options, 'end options');
    return (await this.update(endSessionUpdate, [request])) ?? {};
  }

  /**
   * Deletes the session: ends it, deletes every run of its workflow (all continue-as-new runs), and with
   * `store` removes the blobs nothing else references (a fork's shared prefix stays with the fork).
   */
  async delete(options: DeleteOptions = {}): Promise<{ runs: number; garbage?: CollectGarbageReport }> {
    if (options.store) collectableStore(options.store); // a store that cannot be swept fails before anything is deleted
    await this.endWorktree(options.deleteBranch === true);
    const ns = this.client.options.namespace;
    let runs = 0;
    // The running run is deleted as it is terminated (fast); closed ones by a background task.
    for await (const wf of this.client.workflow.list({ query: `WorkflowId = '${this.id}'` })) {
      try {
        await this.client.workflowService.deleteWorkflowExecution({ namespace: ns, workflowExecution: { workflowId: wf.workflowId, runId: wf.runId } });
        runs++;
      } catch (err) {
        if ((err as { code?: number }).code !== 5) throw err; // already gone
      }
    }
    if (runs === 0) throw new SessionNotFoundError(this.id);
    if (options.wait === false && !options.store) return { runs };
    await this.waitGone(options.waitMs ?? 120_000);
    if (!options.store) return { runs };
    const garbage = await collectStoreGarbage(this.client, { ...options.store, olderThanMs: options.store.olderThanMs ?? 60_000 });
    return { runs, garbage };
  }

  /** A running session with a worktree is ended first: its worker commits the changes and removes the worktree. */
  private async endWorktree(deleteBranch: boolean): Promise<void> {
    const desc = await this.workflow.describe().catch(() => undefined);
    if (!desc || desc.status.name !== 'RUNNING' || desc.memo?.[WORKTREE_MEMO_KEY] !== true) return;
    await this.update(endSessionUpdate, [{ deleting: true, ...(deleteBranch ? { deleteBranch } : {}) }]).catch((err: unknown) => {
      if (!(err instanceof FabricError && (err.code === 'SESSION_CLOSED' || err.code === 'SESSION_NOT_FOUND'))) throw err;
    });
  }

  /** Right after a continue-as-new the new run loads the conversation: wait for it (bounded). */
  private async restored(): Promise<void> {
    for (let i = 0; i < 300 && (await this.info()).restoring; i++) await new Promise((r) => setTimeout(r, 100));
  }

  /** Deletion is asynchronous on the server: wait until visibility lists no run of this session. */
  private async waitGone(ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    for (;;) {
      let left = 0;
      for await (const _ of this.client.workflow.list({ query: `WorkflowId = '${this.id}'` })) left++;
      if (left === 0) return;
      if (Date.now() > deadline) throw new FabricError('DELETE_PENDING', `session ${this.id}: the server has not finished deleting ${left} run(s) after ${ms} ms; they will go`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  get agent(): string | undefined {
    return this.agentName;
  }

}


const endOptionsSchema = z.object({ keepWorktree: z.boolean().optional(), deleteBranch: z.boolean().optional() }).strict();

/** The update id of a message: the same message (id and text) is the same update, so a retry reattaches to it. */
export function messageUpdateId(kind: 'prompt' | 'send', messageId: string, text: string, attachments?: readonly AttachmentRef[]): string {
  // Attachments make it another message: their hashes are hashed with the text (none: the id as before).
  const files = attachments?.length ? `\n${attachments.map((a) => a.hash).join(',')}` : '';
  return `${kind}:${messageId}:${hashString(text + files)}`;
}

/** Our typed error for a failure: a FabricError the session sent, or SESSION_NOT_FOUND / SESSION_CLOSED. */
function typedError(err: unknown, id: string): unknown {
  return typedSessionError(err, id);
}
