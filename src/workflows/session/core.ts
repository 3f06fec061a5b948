/**
 * The state one session run shares between its rooms (queue and replies, approvals, turns, edits,
 * catalogue, reset and fork, continue-as-new): built from the start envelope (a new session, or one a
 * continue-as-new or a fork carried), and read by every module of this folder. Workflow code: `Date.now()`
 * is the workflow clock.
 */
import { workflowInfo, type CancellationScope } from '@temporalio/workflow';
import { namedConnection } from '../../core/connection-name';
import { makeEvent, type AgentEventType, type EventPayloads } from '../../core/events';
import type { Harness } from '../../core/harness';
import type { Session } from '../../core/conversation';
import { parseLabel } from '../../core/sessions/labels';
import { defaultSessionSettings } from '../../core/sessions/settings';
import { resolveStatuses } from '../../core/sessions/statuses';
import { parseTitleInput } from '../../core/sessions/titles';
import type { SessionAgentConfig } from '../../core/sessions/config';
import type { SessionPlan } from '../../core/sessions/plans';
import type { PendingApproval, QueuedMessage, ReplyArchiveIndex, SessionRecord, SessionStart, StoredReply } from '../../wire/session-messages';
import { ModelTransport } from '../model-transport';
import { WorkflowSpans } from '../spans';
import type { RunState } from '../run-state';
import { createSessionActivities, type SessionActivities } from '../activity-calls';

const TITLE_MODEL_DEFAULT = 'claude-haiku-4-5';

export type Approval = PendingApproval & { decision?: { approved: boolean; note?: string } };

export class SessionCore {
  readonly transport = new ModelTransport();
  readonly record: SessionRecord;
  readonly statuses: string[];
  /** The agent's `sessions.titleModel`, if it named one. */
  private readonly configuredTitleModel: string | undefined;
  private readonly flavour: 'default' | 'strict';
  queue: QueuedMessage[];
  readonly replies = new Map<string, StoredReply>();
  /** Replies of earlier runs beyond the carried ones, by reference (see messages.ts). */
  replyArchive: ReplyArchiveIndex | undefined;
  readonly approvals = new Map<string, Approval>();
  readonly decided: string[] = [];
  /** The plans kept with the session (./plans), oldest first. */
  readonly plans: SessionPlan[] = [];
  current: { message: QueuedMessage; scope: CancellationScope } | undefined;
  /** A manual reset is storing the old conversation and restarting it: no turn may start meanwhile. */
  resetting = false;
  interruptedHint: boolean;
  conversation: Session | undefined;
  closed = false;
  /**
   * The run failed outside a turn (its conversation could not open: a connection this worker lacks): what
   * every message waiting for a reply, and every later prompt, is answered with, so no handler waits forever.
   */
  failure: { code: string; message: string } | undefined;
  /** Prompt handlers answer "continued" and return, so the run can continue as new. */
  continuing = false;
  /** A turn waiting only for approvals should pause so the run can continue as new. */
  suspending = false;
  activitiesRunning = 0;
  toolsRunning = 0;
  /** A turn started in this run (a resumed one counts): until then `historyLimit` alone does not end it. */
  turnStarted = false;
  /** The limit waits for this run's first turn (read once per run in serve(); see continue-as-new.ts). */
  limitWaitsForTurn = false;
  /** Search attribute values as last upserted (JSON), by name. */
  readonly upserted = new Map<string, string>();
  /** Counts applied edits, so the serving loop re-arms its idle timer after one. */
  edits = 0;
  titling: Promise<void> | undefined;
  /** Until the carried conversation is loaded, queries of it would show an empty one. */
  restoring: boolean;
  /**
   * The memo this run started with: what Temporal gives the next run unless the continue-as-new passes
   * one (upserts since are not carried by themselves; see continue-as-new.ts).
   */
  readonly startMemo: Readonly<Record<string, unknown>> | undefined = workflowInfo().memo;
  /** The harness's MCP pins now (its ports report how to read them), for a continue-as-new to carry. */
  mcpPinsNow: () => Record<string, string> = () => ({});
  /** Every activity the session calls itself, through the same ports as the harness's. */
  readonly acts: SessionActivities = createSessionActivities();

  constructor(
    readonly agent: string,
    readonly start: SessionStart,
    readonly state: RunState,
    config: SessionAgentConfig = {},
    flavour: 'default' | 'strict' = 'default',
  ) {
    this.configuredTitleModel = config.titleModel;
    this.flavour = flavour;
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
    this.replyArchive = carried?.replyArchive;
    this.decided.push(...(carried?.decided ?? []));
    this.plans.push(...(carried?.plans ?? []).map((p) => ({ ...p })));
    this.interruptedHint = carried?.interruptedHint ?? false;
    this.restoring = carried !== undefined;
  }

  /**
   * The model that writes the title, on the session's connection: the agent's `titleModel`; else Claude
   * Haiku on the default connection, and the session's own model on a named one (Haiku's id is
   * Anthropic's: on OpenAI or Gemini it does not exist, and on Bedrock or Vertex it is spelled otherwise,
   * so every title there failed, leaving a failed activity in history). The strict entry injects no
   * model call of its own: without a `titleModel`, titles come from the message.
   */
  titleModel(): string | undefined {
    if (this.configuredTitleModel !== undefined || this.flavour === 'strict') return this.configuredTitleModel;
    return namedConnection(this.record.settings.connection) ? this.record.settings.model : TITLE_MODEL_DEFAULT;
  }

  harness(): Harness | undefined {
    return this.state.harnesses[0];
  }

  emit<K extends AgentEventType>(type: K, data: EventPayloads[K]): void {
    const event = makeEvent(type, data, Date.now());
    this.state.record(event);
    // Approvals and interrupts as spans when the worker traces (nothing otherwise).
    this.spans.onEvent(event);
  }

  private readonly spans = new WorkflowSpans();
}

export function errorFields(err: { code: string; message: string }): { code: string; message: string } {
  return { code: err.code, message: err.message };
}
