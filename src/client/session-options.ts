/** What a session's client calls take: starting one, prompting it, forking, ending and deleting it. */
import type { WorkflowStartOptions } from '@temporalio/client';
import type { LabelValue } from '../core/sessions/labels';
import type { SessionSettingsPatch } from '../core/sessions/settings';
import type { PromptAttachment } from './attachments';
import type { TranscriptStore } from '../activities/stores/transcript-store';
import { z } from 'zod';
import { gracePeriodSchema } from './collect-garbage';
import { waitLimitsSchema } from './call-options';
import type { WaitLimits } from './wait-bounds';

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

/** StartSessionOptions' keys (each value is checked where it is used, in sessionStartPlan). */
export const START_SESSION_KEYS: Record<keyof StartSessionOptions, true> = {
  id: true,
  input: true,
  title: true,
  settings: true,
  connection: true,
  model: true,
  labels: true,
  taskQueue: true,
  historyLimit: true,
  streaming: true,
  autoArchiveAfterMs: true,
  isolation: true,
  workflow: true,
};

/** SessionPromptOptions' keys. */
export const SESSION_PROMPT_KEYS: Record<keyof SessionPromptOptions, true> = { messageId: true, attachments: true, store: true, timeoutMs: true, signal: true };

/** Where a fork starts, and how long the caller waits for the session to say what it keeps (WAIT_ENDED at the bound). */
export interface ForkOptions extends WaitLimits {
  /** Index (in `messages()`) of the last message the fork keeps. */
  atMessage: number;
  id?: string;
  title?: string;
  taskQueue?: string;
  /** 'worktree': the child session works in its own git worktree of this session's working directory, on a new branch. */
  isolation?: 'worktree';
}

/**
 * How a session ends (only a session with a worktree reads the first two), and how long the caller waits
 * for a worker to take it (WAIT_ENDED at the bound; the end is not withdrawn).
 */
export interface EndSessionOptions extends WaitLimits {
  /** Leave the worktree's directory where it is (removing it is then yours: `git worktree remove`). Default false. */
  keepWorktree?: boolean;
  /** Delete the worktree's branch too (default: kept, with the session's changes committed on it). */
  deleteBranch?: boolean;
}

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

/** ForkOptions, all of them: a misspelt key (`titel`) is named at once; the values of id, title and taskQueue are the new session's (checked where it starts). */
export const forkOptionsSchema = waitLimitsSchema
  .extend({
    atMessage: z.number().int().min(0),
    id: z.unknown().optional(),
    title: z.unknown().optional(),
    taskQueue: z.unknown().optional(),
    isolation: z.literal('worktree').optional(),
  })
  .strict();
export const endOptionsSchema = waitLimitsSchema.extend({ keepWorktree: z.boolean().optional(), deleteBranch: z.boolean().optional() }).strict();
/** DeleteOptions; the store itself is checked by collectableStore. */
export const deleteOptionsSchema = z
  .object({
    wait: z.boolean().optional(),
    waitMs: z.number().int().positive().optional(),
    deleteBranch: z.boolean().optional(),
    store: z
      .object({ dir: z.string().min(1).optional(), store: z.looseObject({}).optional(), olderThanMs: gracePeriodSchema.optional() })
      .strict()
      .optional(),
  })
  .strict();
