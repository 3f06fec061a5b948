/**
 * A session workflow: one conversation that lives for days, answering prompts one turn at a time
 * from a queue. This is the thin entity around the rooms of this folder: it installs every handler
 * (names are the wire contract and recorded histories: they never change) and runs the serving loop.
 * Workflow code: `Date.now()` here is the workflow clock (the sandbox replaces Date with the time of
 * the current workflow task), so every timestamp it takes is the same on replay.
 */
import { condition, setHandler, workflowInfo } from '@temporalio/workflow';
import { FabricError } from '../../core/errors';
import type { PromptHost } from '../../core/harness';
import type { Session, ToolAuthorizer } from '../../core/conversation';
import type { ToolDefinition } from '../../core/tools';
import { SessionClosedError } from '../../core/sessions/host-errors';
import { DEFAULT_CONNECTION, namedConnection } from '../../core/connection-name';
import type { SessionAgentConfig } from '../../core/sessions/config';
import { resolveThinking } from '../../core/thinking';
import { rejectWith } from '../../wire/failures';
import { messagesQuery } from '../../wire/messages';
import { SESSION_RESTORING } from '../../wire/session-messages';
import {
  approveUpdate,
  cancelMessageUpdate,
  decidePlanUpdate,
  editSessionUpdate,
  endSessionUpdate,
  forkPointQuery,
  interruptUpdate,
  resetSessionUpdate,
  sessionInfoQuery,
  sessionPromptUpdate,
  sessionReplyUpdate,
  sessionSendUpdate,
  sessionPlansQuery,
  type SessionEnvelope,
  type SessionStart,
} from '../../wire/session-messages';
import type { ModelTransport } from '../model-transport';
import type { RunState } from '../run-state';
import type { ActivityKind } from '../temporal-ports';
import type { CarriedMcpPins } from '../mcp-pin';
import { Approvals } from './approvals';
import { Plans } from './plans';
import { Catalogue } from './catalogue';
import { continueSessionAsNew, readLimitRule, shouldContinue } from './continue-as-new';
import { errorFields, SessionCore } from './core';
import { Edits, switchModel } from './edits';
import { MessageQueue } from './messages';
import { forkPoint, resetConversation, validateReset } from './reset-fork';
import { Turns } from './turns';
import { closeWorktree, openWorktree, worktreeAfterEnd, type WorktreeEnding } from './worktree';

export function isSessionEnvelope(input: unknown): input is SessionEnvelope {
  return typeof input === 'object' && input !== null && typeof (input as SessionEnvelope).fhSession === 'object';
}

export class SessionHost implements PromptHost {
  private readonly s: SessionCore;
  private readonly messages: MessageQueue;
  private readonly approvals: Approvals;
  private readonly plans: Plans;
  private readonly catalogue: Catalogue;
  private readonly edits: Edits;
  private readonly turns: Turns;
  readonly transport: ModelTransport;
  /** For the harness: asked before each tool call (permission mode, approvals). */
  readonly authorize: ToolAuthorizer;
  /** How the end update asked the session to end (its worktree, if it has one). */
  private readonly ending: WorktreeEnding = { request: {}, done: false };

  constructor(agent: string, start: SessionStart, state: RunState, config: SessionAgentConfig = {}, flavour: 'default' | 'strict' = 'default') {
    this.s = new SessionCore(agent, start, state, config, flavour);
    this.messages = new MessageQueue(this.s);
    this.approvals = new Approvals(this.s);
    this.plans = new Plans(this.s, this.approvals);
    this.approvals.plans = this.plans;
    this.catalogue = new Catalogue(this.s);
    this.edits = new Edits(this.s, this.catalogue);
    this.turns = new Turns(this.s, this.catalogue, this.messages);
    this.transport = this.s.transport;
    this.authorize = this.approvals.authorize;
  }

  /** For the harness: tools offered besides the agent's (submit_plan in explore mode). */
  offeredTools(): readonly ToolDefinition[] {
    return this.plans.offered();
  }

  /** The MCP pins the previous run carried, for the harness's ports; they report the current ones back. */
  get mcpPins(): CarriedMcpPins {
    const s = this.s;
    return { carried: s.start.carried?.mcpPins ?? {}, expose: (pins) => (s.mcpPinsNow = pins) };
  }

  /** Counts running activities (ports call it): a turn is suspended only when none runs. */
  readonly onActivity = (delta: 1 | -1, kind: ActivityKind): void => {
    this.s.activitiesRunning += delta;
    if (kind === 'tool') this.s.toolsRunning += delta;
  };

  install(): void {
    const { s, messages, approvals, edits } = this;
    s.state.installQueries();
    // A run that continued as new loads its conversation first: until then the conversation query would
    // answer an empty one, so it is refused (SESSION_RESTORING) and the client asks again.
    setHandler(messagesQuery, (id) => {
      if (s.restoring) throw new FabricError('SESSION_RESTORING', `${SESSION_RESTORING}: the session is loading its conversation; ask again in a moment`);
      return [...(s.state.session(id)?.messages() ?? [])];
    });
    s.state.markServing();
    setHandler(sessionInfoQuery, () => this.catalogue.info());
    setHandler(forkPointQuery, (index) => forkPoint(s, index));
    setHandler(sessionPromptUpdate, (req) => messages.prompt(req), { validator: (req) => messages.validatePrompt(req) });
    setHandler(sessionSendUpdate, (req) => messages.send(req), { validator: (req) => messages.validatePrompt(req) });
    setHandler(sessionReplyUpdate, ({ messageId }) => messages.awaitReply(messageId), {
      validator: (req) => rejectWith(() => messages.assertKnownMessage(req?.messageId)),
    });
    setHandler(cancelMessageUpdate, ({ messageId }) => messages.cancelMessage(messageId), {
      validator: (req) => rejectWith(() => messages.assertQueued(req?.messageId)),
    });
    setHandler(interruptUpdate, () => this.turns.interrupt());
    setHandler(approveUpdate, (req) => approvals.decide(req), { validator: (req) => rejectWith(() => approvals.validateDecision(req)) });
    setHandler(sessionPlansQuery, () => this.plans.list());
    setHandler(decidePlanUpdate, (req) => this.plans.decide(req), { validator: (req) => rejectWith(() => this.plans.validateDecision(req)) });
    setHandler(editSessionUpdate, (edit) => edits.edit(edit), { validator: (edit) => rejectWith(() => edits.validateEdit(edit)) });
    setHandler(resetSessionUpdate, (req) => resetConversation(s, this.catalogue, req ?? {}), { validator: (req) => rejectWith(() => validateReset(s, req)) });
    setHandler(endSessionUpdate, (req) => {
      if (!s.closed) this.ending.request = req ?? {};
      s.closed = true;
      return worktreeAfterEnd(s, this.ending);
    });
  }

  /** The run failed with `err` outside a turn: waiting and later prompts are answered with it (see SessionCore.failure). */
  fail(err: { code: string; message: string }): void {
    const failure = (this.s.failure ??= errorFields(err));
    for (const m of this.s.queue.splice(0)) this.messages.answer(m.id, { error: failure }, m.text);
  }

  async serve(): Promise<number> {
    const s = this.s;
    const session = await this.openConversation();
    this.catalogue.upsert();
    readLimitRule(s);
    let answered = 0;
    const suspended = s.start.carried?.suspended;
    if (suspended) {
      await this.turns.run(suspended.message, () => session.resumeTurn(suspended.turn), true);
      answered += 1;
    }
    while (!s.closed) {
      const idle = this.catalogue.idleRemainingMs();
      const edits = s.edits;
      // An edit (flag, archive) can change the idle deadline: wake and re-arm the timer.
      const ready = () => s.queue.length > 0 || s.closed || shouldContinue(s) || s.edits !== edits;
      // condition() without a timeout resolves to undefined, not true.
      const woke = idle === undefined ? (await condition(ready), true) : await condition(ready, idle);
      if (!woke) {
        this.catalogue.autoArchive();
        continue;
      }
      if (s.closed) break;
      if (shouldContinue(s)) await continueSessionAsNew(s, session);
      if (s.resetting) await condition(() => !s.resetting);
      const message = s.queue.shift();
      if (!message) continue;
      const attachments = message.attachments?.length ? { attachments: message.attachments } : {};
      await this.turns.run(message, () => session.prompt<string>(this.turns.withHint(message.text), attachments));
      answered += 1;
    }
    // Accepted but never started: answered, never dropped.
    for (const m of s.queue.splice(0)) this.messages.answer(m.id, { error: errorFields(new SessionClosedError(workflowInfo().workflowId)) }, m.text);
    await closeWorktree(s, this.ending);
    await s.titling;
    return answered;
  }

  private async openConversation(): Promise<Session> {
    const s = this.s;
    const harness = s.harness();
    if (!harness) throw new FabricError('SESSION_NO_HARNESS', 'A session agent must call init() before serve()');
    // The session's connection: its creator's choice (or the carried one), else the agent's init({ connection }).
    if (!s.start.carried && s.start.settings?.connection === undefined) s.record.settings.connection = harness.options.connection ?? DEFAULT_CONNECTION;
    const connection = s.record.settings.connection;
    const session = harness.sessions()[0] ?? (await harness.session(namedConnection(connection) ? { connection } : {}));
    s.conversation = session;
    const model = s.record.settings.model;
    // The agent made its conversation on another connection: its model is resolved again on this one.
    const moved = namedConnection(harness.connectionOf(session)) !== namedConnection(connection);
    if (moved || (model && model !== session.model)) await switchModel(s, session, model ?? session.model, moved ? connection : undefined);
    s.record.settings.model = session.model;
    if (s.record.settings.workingDirectory) session.changeWorkingDirectory(s.record.settings.workingDirectory);
    await openWorktree(s, session);
    // A new session whose creator chose no level takes the agent's init({ thinking }) level; from then
    // on the session's level decides (a { budgetTokens } agent setting is not a level: sessions use levels).
    const agentThinking = harness.options.thinking;
    if (!s.start.carried && s.start.settings?.thinking === undefined && typeof agentThinking === 'string') {
      s.record.settings.thinking = agentThinking;
    }
    session.changeThinking(resolveThinking(s.record.settings.thinking));
    session.costs.setBudget(s.record.settings.budget);
    const carried = s.start.carried?.transcript;
    if (carried) {
      const base = carried.ref ? await s.acts.fhLoadTranscript(carried.ref) : [];
      session.restore({ entries: base.concat(carried.tail) });
      // The cost so far goes on with the session (a budget counts the whole session, not this run).
      const usage = s.start.carried?.usage;
      if (usage?.cost) session.costs.restore(usage);
      if (carried.ref) s.transport.seed(session.id, session.messages(), carried.ref);
    }
    s.restoring = false;
    return session;
  }
}
