/**
 * A session workflow: one conversation that lives for days, answering prompts one turn at a time
 * from a queue, with its catalogue entry (title, status, labels…) in workflow state and in search
 * attributes, permission modes and approvals, interrupt, and continue-as-new at turn boundaries (or
 * while a turn waits only for approvals) carrying the conversation by reference. Workflow code:
 * `Date.now()` here is the workflow clock (the sandbox replaces Date with the time of the current
 * workflow task), so every timestamp it takes is the same on replay.
 */
import { WorkflowSpans } from './spans';
import {
  allHandlersFinished,
  CancellationScope,
  condition,
  continueAsNew,
  currentUpdateInfo,
  isCancellation,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { z } from 'zod';
import { TRANSCRIPT_STORE_MISS, type FabricActivities } from '../wire/activity-contract';
import { utf8Length } from '../core/bytes';
import type { Entry } from '../core/entries';
import { FabricError, InterruptedError, PromptTooLargeError, TurnSuspendedError } from '../core/errors';
import { makeEvent, type AgentEventType, type EventPayloads } from '../core/events';
import type { Harness, PromptHost } from '../core/harness';
import type { Session, ToolAuthorizer } from '../core/conversation';
import { promptTextSchema } from '../core/conversation';
import { labelKeywords, parseLabel } from '../core/sessions/labels';
import { deniedText, permissionFor, refusedInExploreText, toolEffect } from '../core/sessions/permissions';
import { applySettingsPatch, defaultSessionSettings } from '../core/sessions/settings';
import { autoTransition, resolveStatuses, setStatus } from '../core/sessions/statuses';
import { fallbackTitle, parseTitleInput, sanitizeTitle, titleRequest } from '../core/sessions/titles';
import {
  SessionClosedError,
  UnknownMessageError,
  UnknownToolCallError,
  InvalidForkPointError,
  assertKnownConnection,
} from '../core/sessions/host-errors';
import { resolveThinking } from '../core/thinking';
import { approvalNeeded } from '../core/tools';
import { parseWith } from '../core/validate';
import { decodeFailure, encodeFailure, innermostApplicationFailure, rejectWith } from '../wire/failures';
import { MAX_PROMPT_BYTES } from '../wire/messages';
import { sessionSearchAttributeUpdates } from '../wire/search-attributes';
import {
  approveUpdate,
  cancelMessageUpdate,
  editSessionUpdate,
  resetSessionUpdate,
  type SessionResetResult,
  endSessionUpdate,
  forkPointQuery,
  interruptUpdate,
  sessionInfoQuery,
  sessionPromptUpdate,
  sessionReplyUpdate,
  sessionSendUpdate,
  type CarriedSession,
  type ForkPoint,
  type PendingApproval,
  type QueuedMessage,
  type SessionEdit,
  type SessionEnvelope,
  type SessionInfo,
  type SessionPromptRequest,
  type SessionRecord,
  type SessionReply,
  type SessionStart,
  type StoredReply,
} from '../wire/session-messages';
import { ModelTransport } from './model-transport';
import type { ActivityKind } from './temporal-ports';
import type { RunState } from './run-state';
import type { SessionAgentConfig } from '../core/sessions/config';

/** Replies kept for clients that ask again after a continue-as-new; older ones drop off. */
const REMEMBERED_REPLIES = 50;
/** Replies kept in a run: far more than can wait at once (a waiting prompt's reply is read at once). */
const REMEMBERED_REPLIES_IN_RUN = 500;
/** Decided tool calls remembered, so a late second decision is "already decided", not "unknown". */
const REMEMBERED_DECISIONS = 200;
const INTERRUPTED_HINT = '[The user interrupted the previous turn before it finished.]';
const TITLE_MODEL_DEFAULT = 'claude-haiku-4-5';

const promptRequestSchema = z.object({ text: promptTextSchema, messageId: z.string().min(1).max(200).optional() }).strict();

type Approval = PendingApproval & { decision?: { approved: boolean; note?: string } };

export function isSessionEnvelope(input: unknown): input is SessionEnvelope {
  return typeof input === 'object' && input !== null && typeof (input as SessionEnvelope).fhSession === 'object';
}


export class SessionHost implements PromptHost {
  readonly transport = new ModelTransport();
  private readonly record: SessionRecord;
  private readonly statuses: string[];
  private queue: QueuedMessage[];
  private readonly replies = new Map<string, StoredReply>();
  private readonly approvals = new Map<string, Approval>();
  private readonly decided: string[] = [];
  private current: { message: QueuedMessage; scope: CancellationScope } | undefined;
  /** A manual reset is storing the old conversation and restarting it: no turn may start meanwhile. */
  private resetting = false;
  private interruptedHint: boolean;
  private conversation: Session | undefined;
  private closed = false;
  /** Prompt handlers answer "continued" and return, so the run can continue as new. */
  private continuing = false;
  /** A turn waiting only for approvals should pause so the run can continue as new. */
  private suspending = false;
  private activitiesRunning = 0;
  /** Search attribute values as last upserted (JSON), by name. */
  private readonly upserted = new Map<string, string>();
  private toolsRunning = 0;
  /** Counts applied edits, so the serving loop re-arms its idle timer after one. */
  private edits = 0;
  private titling: Promise<void> | undefined;
  /** Until the carried conversation is loaded, queries of it would show an empty one. */
  private restoring: boolean;
  private readonly harnessOf: () => Harness | undefined;
  private readonly acts = proxyActivities<FabricActivities>({
    startToCloseTimeout: '2 minutes',
    retry: { initialInterval: '1s', maximumInterval: '30s', maximumAttempts: 10 },
  });

  constructor(
    private readonly agent: string,
    private readonly start: SessionStart,
    private readonly state: RunState,
    config: SessionAgentConfig = {},
    flavour: 'default' | 'strict' = 'default',
  ) {
    // The strict entry injects no model call of its own: without a titleModel, titles come from the message.
    this.titleModel = config.titleModel ?? (flavour === 'strict' ? undefined : TITLE_MODEL_DEFAULT);
    this.statuses = resolveStatuses(config.statuses);
    const carried = start.carried;
    const now = Date.now();
    this.record = carried
      ? { ...carried.record }
      : {
          agent,
          title: start.title !== undefined ? parseTitleInput(start.title) : undefined,
          titleSource: start.title !== undefined ? 'user' : undefined,
          status: 'todo',
          statusManual: false,
          labels: Object.fromEntries(Object.entries(start.labels ?? {}).map(([n, v]) => { const l = parseLabel(n, v ?? undefined); return [l.name, l.value]; })),
          flagged: false,
          archived: false,
          readPointer: -1,
          createdAt: now,
          lastUsedAt: now,
          messageCount: 0,
          settings: defaultSessionSettings(start.settings),
          continuedRuns: 0,
        };
    this.queue = carried ? [...carried.queue] : [];
    for (const a of carried?.approvals ?? []) this.approvals.set(a.callId, { ...a });
    for (const [id, r] of carried?.replies ?? []) this.replies.set(id, r);
    this.decided.push(...(carried?.decided ?? []));
    this.interruptedHint = carried?.interruptedHint ?? false;
    this.restoring = carried !== undefined;
    this.harnessOf = () => state.harnesses[0];
  }

  private readonly titleModel: string | undefined;

  /** For the harness: asked before each tool call (permission mode, approvals). */
  readonly authorize: ToolAuthorizer = async (call, def) => {
    const verdict = permissionFor(this.record.settings.permissionMode, toolEffect(def));
    // A tool that needs approval (needsApproval) waits for it in every mode that would run it.
    if (verdict === 'run' && !approvalNeeded(def, call.input)) return { allow: true };
    if (verdict === 'refuse') return { allow: false, content: refusedInExploreText(call.name) };
    let approval = this.approvals.get(call.id);
    if (!approval) {
      approval = { callId: call.id, tool: call.name, input: call.input, requestedAt: Date.now(), messageId: this.current?.message.id ?? '' };
      this.approvals.set(call.id, approval);
      this.emit('approval_requested', { id: call.id, name: call.name, input: call.input });
    }
    const waiting = approval;
    try {
      await condition(() => waiting.decision !== undefined || this.suspending);
    } catch (err) {
      if (isCancellation(err)) {
        this.approvals.delete(call.id);
        throw new InterruptedError();
      }
      throw err;
    }
    if (!waiting.decision) throw new TurnSuspendedError();
    this.approvals.delete(call.id);
    this.remember(call.id);
    return waiting.decision.approved ? { allow: true } : { allow: false, content: deniedText(call.name, waiting.decision.note) };
  };

  /** Counts running activities (ports call it): a turn is suspended only when none runs. */
  readonly onActivity = (delta: 1 | -1, kind: ActivityKind): void => {
    this.activitiesRunning += delta;
    if (kind === 'tool') this.toolsRunning += delta;
  };

  install(): void {
    this.state.installQueries();
    this.state.markServing();
    setHandler(sessionInfoQuery, () => this.info());
    setHandler(forkPointQuery, (index) => this.forkPoint(index));
    setHandler(sessionPromptUpdate, (req) => this.prompt(req), { validator: (req) => this.validatePrompt(req) });
    setHandler(sessionSendUpdate, (req) => this.send(req), { validator: (req) => this.validatePrompt(req) });
    setHandler(sessionReplyUpdate, ({ messageId }) => this.awaitReply(messageId), {
      validator: (req) => rejectWith(() => this.assertKnownMessage(req?.messageId)),
    });
    setHandler(cancelMessageUpdate, ({ messageId }) => this.cancelMessage(messageId), {
      validator: (req) => rejectWith(() => this.assertQueued(req?.messageId)),
    });
    setHandler(interruptUpdate, () => this.interrupt());
    setHandler(approveUpdate, (req) => this.decide(req), { validator: (req) => rejectWith(() => this.validateDecision(req)) });
    setHandler(editSessionUpdate, (edit) => this.edit(edit), { validator: (edit) => rejectWith(() => this.validateEdit(edit)) });
    setHandler(resetSessionUpdate, (req) => this.reset(req ?? {}), { validator: (req) => rejectWith(() => this.validateReset(req)) });
    setHandler(endSessionUpdate, () => {
      this.closed = true;
    });
  }

  // -- serving --------------------------------------------------------------------------------------

  async serve(): Promise<number> {
    const session = await this.openConversation();
    this.upsert();
    let answered = 0;
    const suspended = this.start.carried?.suspended;
    if (suspended) {
      await this.runTurn(suspended.message, () => session.resumeTurn(suspended.turn), true);
      answered += 1;
    }
    while (!this.closed) {
      const idle = this.idleRemainingMs();
      const edits = this.edits;
      // An edit (flag, archive) can change the idle deadline: wake and re-arm the timer.
      const ready = () => this.queue.length > 0 || this.closed || this.shouldContinue() || this.edits !== edits;
      // condition() without a timeout resolves to undefined, not true.
      const woke = idle === undefined ? (await condition(ready), true) : await condition(ready, idle);
      if (!woke) {
        this.autoArchive();
        continue;
      }
      if (this.closed) break;
      if (this.shouldContinue()) await this.continueAsNew(session);
      if (this.resetting) await condition(() => !this.resetting);
      const message = this.queue.shift();
      if (!message) continue;
      await this.runTurn(message, () => session.prompt<string>(this.withHint(message.text)));
      answered += 1;
    }
    // Accepted but never started: answered, never dropped.
    for (const m of this.queue.splice(0)) this.answer(m.id, { error: errorFields(new SessionClosedError(workflowInfo().workflowId)) });
    await this.titling;
    return answered;
  }

  private async openConversation(): Promise<Session> {
    const harness = this.harnessOf();
    if (!harness) throw new FabricError('SESSION_NO_HARNESS', 'A session agent must call init() before serve()');
    const session = harness.sessions()[0] ?? (await harness.session());
    this.conversation = session;
    const model = this.record.settings.model;
    if (model && model !== session.model) await this.switchModel(session, model);
    this.record.settings.model = session.model;
    if (this.record.settings.workingDirectory) session.changeWorkingDirectory(this.record.settings.workingDirectory);
    // A new session whose creator chose no level takes the agent's init({ thinking }) level; from then
    // on the session's level decides (a { budgetTokens } agent setting is not a level: sessions use levels).
    const agentThinking = harness.options.thinking;
    if (!this.start.carried && this.start.settings?.thinking === undefined && typeof agentThinking === 'string') {
      this.record.settings.thinking = agentThinking;
    }
    session.changeThinking(resolveThinking(this.record.settings.thinking));
    const carried = this.start.carried?.transcript;
    if (carried) {
      const base = carried.ref ? await this.acts.fhLoadTranscript(carried.ref) : [];
      session.restore({ entries: base.concat(carried.tail) });
      if (carried.ref) this.transport.seed(session.id, session.messages(), carried.ref);
    }
    this.restoring = false;
    return session;
  }

  /** One turn: statuses, title, the interruptible run of the turn, and its reply. */
  private async runTurn(message: QueuedMessage, turn: () => Promise<string>, resumed = false): Promise<void> {
    const first = this.record.messageCount === 0;
    if (!resumed) this.record.messageCount += 1;
    this.transition('user-message');
    this.record.lastMessageAt = Date.now();
    this.record.lastUsedAt = this.record.lastMessageAt;
    this.upsert();
    if (first && this.record.titleSource === undefined) this.titling = this.generateTitle(message.text);
    const scope = new CancellationScope();
    this.current = { message, scope };
    const outcome = scope.run(turn);
    // While the turn runs: if the run should continue as new and the turn only waits for approvals,
    // pause it (the next run resumes it).
    let settled = false;
    void outcome.then(() => (settled = true), () => (settled = true));
    void condition(() => settled || (this.shouldContinue() && this.approvals.size > 0 && this.activitiesRunning === 0)).then(() => {
      if (!settled) this.suspending = true;
    });
    try {
      const text = await outcome;
      this.answer(message.id, { text });
      this.interruptedHint = false;
    } catch (err) {
      if (err instanceof TurnSuspendedError) {
        await this.continueAsNew(this.conversation!, { message, turn: this.conversation!.suspendedTurn()! });
      }
      const typed = err instanceof FabricError ? err : decodeFailure(err);
      if (!typed && !isCancellation(err)) throw err; // a bug: fail the workflow task, so a fix can resume it
      const error = typed ?? new InterruptedError();
      if (error.code === 'INTERRUPTED') this.interruptedHint = true;
      this.answer(message.id, { error: errorFields(error) });
    } finally {
      this.current = undefined;
      this.suspending = false;
    }
    this.transition('turn-done');
    this.record.lastUsedAt = Date.now();
    this.upsert();
  }

  private withHint(text: string): string {
    return this.interruptedHint ? `${INTERRUPTED_HINT}\n\n${text}` : text;
  }

  private shouldContinue(): boolean {
    if (this.closed) return false;
    const info = workflowInfo();
    const limit = this.start.historyLimit;
    return info.continueAsNewSuggested || (limit !== undefined && info.historyLength >= limit);
  }

  /**
   * Continues as new: stores what of the conversation is not stored yet, lets every handler finish
   * (waiting prompts answer "continued", their clients ask the next run), then carries the session.
   */
  private async continueAsNew(session: Session, suspended?: CarriedSession['suspended']): Promise<never> {
    await this.titling;
    const ref = await this.storeTranscript(session);
    this.continuing = true;
    await condition(allHandlersFinished);
    const carried: CarriedSession = {
      record: { ...this.record, continuedRuns: this.record.continuedRuns + 1 },
      transcript: { ref, tail: [] },
      usage: session.usage(),
      queue: this.queue,
      suspended,
      approvals: [...this.approvals.values()],
      replies: [...this.replies.entries()].slice(-REMEMBERED_REPLIES),
      interruptedHint: this.interruptedHint,
      decided: [...this.decided],
    };
    const next: SessionEnvelope = { fhSession: { ...this.start, carried } };
    return continueAsNew(next);
  }

  /** The conversation as a stored transcript (stores what is not stored yet; all of it for a worker without the rest). */
  private async storeTranscript(session: Session): Promise<CarriedSession['transcript']['ref']> {
    const { base, delta } = this.transport.unstored(session.id, session.messages());
    if (delta.length === 0) return base;
    try {
      return await this.acts.fhStoreTranscript({ base, delta });
    } catch (err) {
      if (innermostApplicationFailure(err)?.type !== TRANSCRIPT_STORE_MISS) throw err;
      return this.acts.fhStoreTranscript({ base: null, delta: [...session.messages()] });
    }
  }

  // -- handlers -------------------------------------------------------------------------------------

  private validatePrompt(req: SessionPromptRequest): void {
    rejectWith(() => {
      const { text } = parseWith(promptRequestSchema, req, 'prompt');
      const bytes = utf8Length(text);
      if (bytes > MAX_PROMPT_BYTES) throw new PromptTooLargeError(bytes, MAX_PROMPT_BYTES);
      if (this.closed) throw new SessionClosedError(workflowInfo().workflowId);
    });
  }

  private enqueue(req: SessionPromptRequest): QueuedMessage {
    const id = req.messageId ?? currentUpdateInfo()?.id ?? `m${this.record.messageCount + this.queue.length}`;
    const known = this.queue.find((m) => m.id === id) ?? (this.current?.message.id === id ? this.current.message : undefined);
    if (known) return known; // the same message again (a retried send): queued once
    const message = { id, text: req.text, at: Date.now() };
    if (!this.replies.has(id)) this.queue.push(message);
    return message;
  }

  private async prompt(req: SessionPromptRequest): Promise<SessionReply> {
    const message = this.enqueue(req);
    return this.awaitReply(message.id);
  }

  private async send(req: SessionPromptRequest): Promise<{ messageId: string; position: number }> {
    const message = this.enqueue(req);
    return { messageId: message.id, position: this.queue.indexOf(message) };
  }

  private async awaitReply(messageId: string): Promise<SessionReply> {
    await condition(() => this.replies.has(messageId) || this.continuing);
    const reply = this.replies.get(messageId);
    if (!reply) return { messageId, continued: true };
    if ('error' in reply) throw encodeFailure(Object.assign(new FabricError(reply.error.code, reply.error.message)));
    return { messageId, text: reply.text };
  }

  private assertKnownMessage(messageId: unknown): void {
    const id = parseWith(z.string().min(1), messageId, 'messageId');
    const known = this.replies.has(id) || this.queue.some((m) => m.id === id) || this.current?.message.id === id ||
      this.start.carried?.suspended?.message.id === id;
    if (!known) throw new UnknownMessageError(id);
  }

  private assertQueued(messageId: unknown): void {
    const id = parseWith(z.string().min(1), messageId, 'messageId');
    if (!this.queue.some((m) => m.id === id)) {
      throw new UnknownMessageError(id, this.current?.message.id === id || this.replies.has(id) ? 'it has started already' : undefined);
    }
  }

  private cancelMessage(messageId: string): void {
    const i = this.queue.findIndex((m) => m.id === messageId);
    if (i < 0) return;
    this.queue.splice(i, 1);
    this.answer(messageId, { error: { code: 'MESSAGE_CANCELLED', message: `Message ${messageId} was cancelled before it ran` } });
  }

  private interrupt(): { interrupted: boolean; messageId?: string } {
    if (!this.current) return { interrupted: false };
    const during = this.toolsRunning > 0 ? 'tool' : this.activitiesRunning > 0 ? 'model' : this.approvals.size > 0 ? 'approval' : 'model';
    this.emit('interrupted', { during });
    this.current.scope.cancel();
    return { interrupted: true, messageId: this.current.message.id };
  }

  private validateDecision(req: { callId: string; approved: boolean; note?: string }): void {
    const parsed = parseWith(
      z.object({ callId: z.string().min(1), approved: z.boolean(), note: z.string().max(4000).optional() }).strict(),
      req,
      'approval',
    );
    const pending = this.approvals.get(parsed.callId);
    if (!pending) throw new UnknownToolCallError(parsed.callId, this.decided.includes(parsed.callId), [...this.approvals.keys()]);
    if (pending.decision) throw new UnknownToolCallError(parsed.callId, true, [...this.approvals.keys()]);
  }

  private decide(req: { callId: string; approved: boolean; note?: string }): void {
    const pending = this.approvals.get(req.callId);
    if (!pending || pending.decision) return;
    pending.decision = req.note === undefined ? { approved: req.approved } : { approved: req.approved, note: req.note };
    this.emit('approval_decided', { id: req.callId, name: pending.tool, approved: req.approved, ...(req.note !== undefined ? { note: req.note } : {}) });
  }

  private validateEdit(edit: SessionEdit): void {
    if (typeof edit !== 'object' || edit === null) throw new FabricError('INVALID_INPUT', 'edit: expected an object with a kind');
    this.applyEdit(edit, true);
  }

  private validateReset(req: unknown): void {
    parseWith(resetRequestSchema, req ?? {}, 'reset');
    if (this.closed) throw new SessionClosedError(workflowInfo().workflowId);
  }

  /**
   * A manual reset, in this run (same session id): the old conversation is stored first (it stays in
   * the transcript store, named in the result), then the conversation restarts from a transfer summary
   * and the memory. Waits for a running turn to finish, so a turn is never cut in half.
   */
  private async reset(req: { transferSummary?: boolean }): Promise<SessionResetResult> {
    await condition(() => this.conversation !== undefined && this.current === undefined && !this.resetting);
    // No turn starts until the reset is done: one started while the old conversation is being stored
    // would be missing from the stored copy and then wiped by the reset.
    this.resetting = true;
    try {
      const session = this.conversation!;
      const previousTranscript = await this.storeTranscript(session);
      const result = await session.reset(req);
      this.upsert();
      return { ...result, previousTranscript };
    } finally {
      this.resetting = false;
    }
  }

  private async edit(edit: SessionEdit): Promise<SessionInfo> {
    // A new model is resolved first: an unknown one fails the update and changes nothing.
    const model = this.applyEdit(edit, true);
    try {
      if (model && this.conversation) await this.switchModel(this.conversation, model);
    } catch (err) {
      throw encodeFailure(decodeFailure(err) ?? err);
    }
    this.applyEdit(edit, false);
    this.edits += 1;
    if (model) this.record.settings.model = this.conversation?.model ?? model;
    this.upsert();
    return this.info();
  }

  /**
   * Validates (dryRun) or applies one edit. Validation runs the same checks on a copy, so what the
   * validator accepts the handler applies without failing. Returns a model to switch to.
   */
  private applyEdit(edit: SessionEdit, dryRun: boolean): string | undefined {
    const r = dryRun ? structuredCopy(this.record) : this.record;
    switch (edit.kind) {
      case 'status': {
        const next = setStatus({ status: r.status, manual: r.statusManual }, edit.status, this.statuses);
        r.status = next.status;
        r.statusManual = next.manual;
        return undefined;
      }
      case 'title':
        r.title = parseTitleInput(edit.title);
        r.titleSource = 'user';
        return undefined;
      case 'label': {
        const label = parseLabel(edit.name, edit.value ?? undefined);
        r.labels = { ...r.labels, [label.name]: label.value };
        return undefined;
      }
      case 'unlabel': {
        const { [parseLabel(edit.name).name]: _gone, ...rest } = r.labels;
        r.labels = rest;
        return undefined;
      }
      case 'flag':
        r.flagged = parseWith(z.boolean(), edit.flagged, 'flagged');
        return undefined;
      case 'archive':
        r.archived = parseWith(z.boolean(), edit.archived, 'archived');
        return undefined;
      case 'read': {
        const count = this.conversation?.messages().length ?? 0;
        r.readPointer = parseWith(z.number().int().min(-1).max(Math.max(count - 1, -1)).optional(), edit.upTo, 'upTo') ?? count - 1;
        return undefined;
      }
      case 'settings': {
        const before = r.settings.model;
        r.settings = applySettingsPatch(r.settings, edit.settings, { started: r.messageCount > 0 });
        assertKnownConnection(r.settings.connection);
        if (!dryRun && r.settings.workingDirectory && this.conversation) this.conversation.changeWorkingDirectory(r.settings.workingDirectory);
        // From the conversation's next prompt on (a running tool loop keeps the thinking it started with).
        if (!dryRun && this.conversation) this.conversation.changeThinking(resolveThinking(r.settings.thinking));
        return r.settings.model !== before ? r.settings.model : undefined;
      }
      case 'clear':
        if (this.current) throw new FabricError('SESSION_BUSY', 'clear: a turn is running; interrupt it first');
        if (!dryRun) this.conversation?.clear();
        r.readPointer = -1;
        return undefined;
      default:
        throw new FabricError('INVALID_INPUT', `edit.kind: unknown kind ${JSON.stringify((edit as { kind?: unknown }).kind)}`);
    }
  }

  private async switchModel(session: Session, model: string): Promise<void> {
    const harness = this.harnessOf();
    const given = harness?.options.contextWindowTokens;
    const resolved = await this.acts.fhResolveModel(given !== undefined ? { model, contextWindowTokens: given, verify: true } : { model, verify: true });
    session.changeModel(resolved.model, given ?? resolved.contextWindowTokens);
  }

  // -- catalogue --------------------------------------------------------------------------------------

  private transition(event: 'user-message' | 'turn-done'): void {
    const next = autoTransition({ status: this.record.status, manual: this.record.statusManual }, event);
    this.record.status = next.status;
  }

  private async generateTitle(firstMessage: string): Promise<void> {
    let title: string;
    try {
      if (!this.titleModel) throw new Error('no title model');
      const req = titleRequest(firstMessage);
      const res = await this.acts.fhSummarize({ model: this.titleModel, system: req.system, userText: req.userText, maxTokens: req.maxTokens });
      title = sanitizeTitle(res.text) || fallbackTitle(firstMessage);
    } catch {
      title = fallbackTitle(firstMessage); // a title is a nicety: never fail the session for it
    }
    if (this.record.titleSource === 'user') return; // the user named it meanwhile
    this.record.title = title;
    this.record.titleSource = 'generated';
    this.upsert();
  }

  private idleRemainingMs(): number | undefined {
    const after = this.start.autoArchiveAfterMs;
    if (after === undefined || this.record.archived || this.record.flagged) return undefined;
    const since = this.record.lastMessageAt ?? this.record.createdAt;
    return Math.max(1, since + after - Date.now());
  }

  /** Idle past the threshold: archive (flagged and processing sessions are exempt). */
  private autoArchive(): void {
    if (this.record.archived || this.record.flagged || this.current || this.queue.length > 0) return;
    this.record.archived = true;
    this.upsert();
  }

  /**
   * Mirrors the catalogue entry into search attributes, sending only what changed since the last
   * upsert (each upsert is a history event: sending all of them twice a turn cost ~1 KB per turn).
   */
  private upsert(): void {
    const changed = this.searchAttributeUpdates().filter((pair) => {
      const value = JSON.stringify(pair.value);
      if (this.upserted.get(pair.key.name) === value) return false;
      this.upserted.set(pair.key.name, value);
      return true;
    });
    if (changed.length > 0) upsertSearchAttributes(changed);
  }

  private searchAttributeUpdates() {
    return (
      sessionSearchAttributeUpdates({
        agent: this.agent,
        status: this.record.status,
        title: this.record.title,
        labels: labelKeywords(this.record.labels),
        flagged: this.record.flagged,
        archived: this.record.archived,
        model: this.record.settings.model,
        lastMessageAt: this.record.lastMessageAt,
      })
    );
  }

  private info(): SessionInfo {
    const info = workflowInfo();
    return {
      ...this.record,
      id: info.workflowId,
      runId: info.runId,
      processing: this.current !== undefined,
      restoring: this.restoring,
      current: this.current?.message.id,
      queued: [...this.queue],
      pendingApprovals: [...this.approvals.values()].filter((a) => !a.decision).map(({ decision: _d, ...a }) => a),
      closed: this.closed,
      historyLength: info.historyLength,
    };
  }

  /** A query's failure reaches clients without its type, so a refusal is answered as a value. */
  private forkPoint(index: number): ForkPoint | { error: { code: string; message: string } } {
    const entries = this.conversation?.messages() ?? [];
    if (this.restoring) return { error: { code: 'SESSION_RESTORING', message: 'The session is loading its conversation; try again in a moment' } };
    if (!Number.isInteger(index) || index < 0 || index >= entries.length) return { error: errorFields(new InvalidForkPointError(index, entries.length)) };
    const entry = entries[index]!;
    if (entry.type === 'assistant' && entry.content.some((b) => b.type === 'tool_use')) {
      return { error: errorFields(new InvalidForkPointError(index, entries.length, 'it is a tool call whose results follow it; fork at the results or later')) };
    }
    const count = index + 1;
    const ref = this.transport.storedPrefixWithin(this.conversation!.id, entries, count);
    return {
      agent: this.agent,
      record: { ...this.record },
      transcript: { ref, tail: entries.slice(ref?.count ?? 0, count) as Entry[] },
    };
  }

  /** A reply, kept for clients that ask for it (bounded: replies already delivered drop off). */
  private answer(messageId: string, reply: StoredReply): void {
    this.replies.set(messageId, reply);
    if (this.replies.size > REMEMBERED_REPLIES_IN_RUN) this.replies.delete(this.replies.keys().next().value as string);
  }

  private remember(callId: string): void {
    this.decided.push(callId);
    if (this.decided.length > REMEMBERED_DECISIONS) this.decided.shift();
  }

  private emit<K extends AgentEventType>(type: K, data: EventPayloads[K]): void {
    const event = makeEvent(type, data, Date.now());
    this.state.record(event);
    // Approvals and interrupts as spans when the worker traces (nothing otherwise).
    this.spans.onEvent(event);
  }

  private readonly spans = new WorkflowSpans();
}

function errorFields(err: FabricError): { code: string; message: string } {
  return { code: err.code, message: err.message };
}

function structuredCopy<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

const resetRequestSchema = z.object({ transferSummary: z.boolean().optional() }).strict();
