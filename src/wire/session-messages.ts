/**
 * The wire contract of session workflows (a conversation that lives for days as one workflow; its id
 * is the workflow id): the start envelope, what a run carries to the next one when it continues as
 * new, and every update and query a session answers. Imported by the workflow and by clients.
 */
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { AttachmentRef } from '../core/attachments';
import type { Entry } from '../core/entries';
import type { Labels, LabelValue } from '../core/sessions/labels';
import type { SessionSettings, SessionSettingsPatch } from '../core/sessions/settings';
import type { SessionUsage, SuspendedTurn } from '../core/conversation';
import type { TranscriptRef } from './activity-contract';
import type { ReplyArchiveIndex, StoredReply } from '../core/sessions/reply-archive';
import type { PlanDecision, SessionPlan } from '../core/sessions/plans';

/** What startSession passes as the workflow input: marks the run as a session of the agent. */
export interface SessionEnvelope {
  fhSession: SessionStart;
}

export interface SessionStart {
  /** The agent's input (validated by its schema, as for any run). */
  input?: unknown;
  /** A title set before the first message: it is never replaced by a generated one. */
  title?: string;
  settings?: SessionSettingsPatch;
  labels?: Labels;
  /** Continue as new past this many history events (besides whenever Temporal suggests it). */
  historyLimit?: number;
  /** Archive the session after this long without a message (off when absent). */
  autoArchiveAfterMs?: number;
  /** Set by a continue-as-new or a fork: the session so far. */
  carried?: CarriedSession;
  /** false: model calls do not stream their deltas (the stream still has every durable event). */
  streaming?: boolean;
  /** 'worktree': the session works in a git worktree of its working directory, on a branch of its own (made by its first run). */
  isolation?: 'worktree';
}

/** A session's own git worktree (isolation 'worktree'): where its tools run, and the branch its work is on. */
export interface SessionWorktree {
  branch: string;
  /** The session's working directory inside the worktree (its tools' sandbox root). */
  path: string;
  /** The worktree's root. */
  root: string;
  /** The commit it started from. */
  base: string;
  /** The working directory it was made from (git commands for it run there). */
  origin: string;
  /** Set once the session ended and the worktree was removed. */
  removed?: boolean;
  /** The commit of the session's changes, once removed (absent: it changed nothing). */
  commit?: string;
  branchDeleted?: boolean;
}

export interface SessionRecord {
  agent: string;
  title?: string;
  titleSource?: 'user' | 'generated';
  status: string;
  /** Set by a manual status change: automatic transitions stop. */
  statusManual: boolean;
  labels: Labels;
  flagged: boolean;
  archived: boolean;
  /** Index of the last message the user has read (-1: none). */
  readPointer: number;
  createdAt: number;
  lastUsedAt: number;
  lastMessageAt?: number;
  /** User messages accepted so far (all runs). */
  messageCount: number;
  settings: SessionSettings;
  /** Runs before this one (continue-as-new). */
  continuedRuns: number;
  forkedFrom?: { sessionId: string; atMessage: number };
  /** Its git worktree, when it was started with isolation 'worktree'. */
  worktree?: SessionWorktree;
}

export interface QueuedMessage {
  id: string;
  text: string;
  at: number;
  /** Files sent with it, by reference (absent: none). */
  attachments?: AttachmentRef[];
}

export interface PendingApproval {
  callId: string;
  tool: string;
  input: unknown;
  requestedAt: number;
  messageId: string;
}

/**
 * The memo key where a session keeps the tool calls waiting for approval (`WaitingApproval[]`, absent when
 * none waits), so a list of sessions tells a session blocked on a person from one working, from visibility
 * alone. Carried by continue-as-new with the rest of the memo. No input is kept there: a memo is shown to
 * anyone who may list workflows, and a tool's input is the conversation's.
 */
export const SESSION_APPROVALS_MEMO_KEY = 'fh.session.approvals';
/** At most this many waiting calls are named in the memo (a list needs to know that it waits, and for what). */
export const SESSION_APPROVALS_MEMO_MAX = 20;

export interface WaitingApproval {
  callId: string;
  tool: string;
}

export type { StoredReply, ReplyArchiveIndex, ReplyArchiveChunk } from '../core/sessions/reply-archive';

export interface CarriedSession {
  record: SessionRecord;
  /** The stateful MCP servers' pins (server name to the owning worker's task queue): the next run keeps them. */
  mcpPins?: Record<string, string>;
  /** The conversation: a stored transcript by reference, plus entries not stored yet. */
  transcript: { ref: TranscriptRef | null; tail: Entry[] };
  usage?: SessionUsage;
  queue: QueuedMessage[];
  /** A turn that waits for approvals, with the message it answers. */
  suspended?: { message: QueuedMessage; turn: SuspendedTurn };
  approvals: Array<PendingApproval & { decision?: { approved: boolean; note?: string } }>;
  /** Replies clients may still ask for (their prompt was answered "continued"). */
  replies: Array<[string, StoredReply]>;
  /** Every older reply of the session's life, by reference (absent before the first archived one). */
  replyArchive?: ReplyArchiveIndex;
  interruptedHint: boolean;
  /** Tool calls approved or denied lately: a second decision is ALREADY_DECIDED in the next run too. */
  decided?: string[];
  /** The stream's next offset: the next run's stream continues from it. */
  streamNext?: number;
  /** The plans kept with the session (the latest ones; absent: none). */
  plans?: SessionPlan[];
}

export interface SessionInfo extends SessionRecord {
  id: string;
  runId: string;
  processing: boolean;
  /** A continued or forked run is loading its conversation: conversation queries answer once it is done. */
  restoring: boolean;
  /** The message the running turn answers. */
  current?: string;
  queued: QueuedMessage[];
  pendingApprovals: PendingApproval[];
  closed: boolean;
  /**
   * The typed error the session's run failed with (e.g. INVALID_INPUT: an agent that needs input, started
   * without it): the run has ended, and every prompt is answered with this error. Absent while it serves.
   */
  failure?: { code: string; message: string };
  historyLength: number;
}

export interface SessionPromptRequest {
  text: string;
  /** Files sent with it, by reference: the client stored their bytes first (client/attachments). */
  attachments?: AttachmentRef[];
  /** Idempotency and addressing: the reply is asked for by this id. Default: the update's id. */
  messageId?: string;
}

/** A prompt's answer; `continued` when the session continued as new first: ask the next run (replyUpdate). */
export type SessionReply = { messageId: string; text: string; continued?: undefined } | { messageId: string; continued: true };

export interface ForkPoint {
  agent: string;
  /** The agent's input the session was started with (a fork starts with it too). */
  input?: unknown;
  record: SessionRecord;
  transcript: { ref: TranscriptRef | null; tail: Entry[] };
}

/** Changes to a session's catalogue entry and settings, one kind per request. */
export type SessionEdit =
  | { kind: 'status'; status: string }
  | { kind: 'title'; title: string }
  | { kind: 'label'; name: string; value?: LabelValue | null }
  | { kind: 'unlabel'; name: string }
  | { kind: 'flag'; flagged: boolean }
  | { kind: 'archive'; archived: boolean }
  | { kind: 'read'; upTo?: number }
  | { kind: 'settings'; settings: SessionSettingsPatch }
  | { kind: 'clear' };

export const sessionPromptUpdate = defineUpdate<SessionReply, [SessionPromptRequest]>('fh.session.prompt');
/** Queues a message and returns at once (the reply is asked for with replyUpdate). */
export const sessionSendUpdate = defineUpdate<{ messageId: string; position: number }, [SessionPromptRequest]>('fh.session.send');
export const sessionReplyUpdate = defineUpdate<SessionReply, [{ messageId: string }]>('fh.session.reply');
export const cancelMessageUpdate = defineUpdate<void, [{ messageId: string }]>('fh.session.cancelMessage');
export const interruptUpdate = defineUpdate<{ interrupted: boolean; messageId?: string }, []>('fh.session.interrupt');
export const approveUpdate = defineUpdate<void, [{ callId: string; approved: boolean; note?: string }]>('fh.session.approve');
export const editSessionUpdate = defineUpdate<SessionInfo, [SessionEdit]>('fh.session.edit');
/** What a session reset answers: the transfer summary, and where the old conversation stays stored. */
export interface SessionResetResult {
  entriesBefore: number;
  summary: string;
  previousTranscript: TranscriptRef | null;
}
/**
 * Resets the conversation in the running workflow (same session id): the overflow ladder resets
 * mid-turn inside the workflow the same way, and a client's handle stays valid.
 */
export const resetSessionUpdate = defineUpdate<SessionResetResult, [{ transferSummary?: boolean }]>('fh.session.reset');
/**
 * Ends the session's workflow (`deleting`: the client deletes it and its blobs next). A session with a
 * worktree commits its changes on its branch and removes the worktree first (unless `keepWorktree`;
 * `deleteBranch` removes the branch too), and answers with the worktree as it left it.
 */
export interface EndSessionRequest {
  deleting?: boolean;
  keepWorktree?: boolean;
  deleteBranch?: boolean;
}
export const endSessionUpdate = defineUpdate<{ worktree?: SessionWorktree } | void, [EndSessionRequest]>('fh.session.end');
export const sessionInfoQuery = defineQuery<SessionInfo>('fh.session.info');
export const forkPointQuery = defineQuery<ForkPoint | { error: { code: string; message: string } }, [number]>('fh.session.forkPoint');

/** The code a session's conversation query fails with while a continued run loads its conversation (the client asks again). */
export const SESSION_RESTORING = 'SESSION_RESTORING';

/** The plans the session keeps (explore mode's submit_plan), oldest first. */
export const sessionPlansQuery = defineQuery<SessionPlan[]>('fh.session.plans');
/** Approves (optionally switching the permission mode) or declines a waiting plan. */
export const decidePlanUpdate = defineUpdate<SessionPlan, [PlanDecision]>('fh.session.plan');
