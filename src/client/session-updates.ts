/**
 * How a session client sends an update so that a continue-as-new, an RPC timeout or a worker that is
 * not there yet never reaches the caller as a lost or duplicated message:
 *
 * - one update id per call, kept through every retry, so a retry reattaches to the same update;
 * - an RPC timeout (the SDK's own, or the server's long poll) is waited through with the same id;
 * - "not found" or "already completed" while the session's current run is running means the update hit
 *   a run that continued as new before accepting it (the server drops such an update): it is sent again,
 *   with the same id, to the current run. Only a session with no running run is SESSION_CLOSED, and one
 *   the server does not know is SESSION_NOT_FOUND;
 * - the caller's own deadline (`timeoutMs`, or a deadline set with `connection.withDeadline`) or abort
 *   signal ends the wait with {@link UpdateWaitEndedError}, which names the message id to reattach with.
 */
import {
  WorkflowNotFoundError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
  type Client,
  type WorkflowHandle,
} from '@temporalio/client';
import type { UpdateDefinition } from '@temporalio/common';
import type { AttachmentRef } from '../core/attachments';
import { FabricError } from '../core/errors';
import { hashString } from '../core/hash';
import { SessionClosedError, SessionNotFoundError } from '../core/sessions/host-errors';
import { decodeFailure, errorOfTermination, typedFailure } from '../wire/failures';
import { SESSION_RESTORING } from '../wire/session-messages';
import { checkWaitLimits } from './call-options';
import { idleQueueOutside, retryQuery, someCause, withCause } from './query-retries';
import { pause, underBounds, waitBounds, type WaitLimits } from './wait-bounds';

/** Runs that closed under a retried update in a row before giving up (each is a continue-as-new). */
const MAX_RUN_HOPS = 20;
/** Resends after the SDK's own gRPC retries gave up on an aborted update or a full run (with backoff, about a minute). */
const MAX_BUSY_RETRIES = 40;

/**
 * The caller stopped waiting (its timeout or abort signal) before the session answered: a message it sent
 * ({@link UpdateWaitEndedError}) or a read of it (`info()`, `messages()`, …). Nothing the session holds
 * changed: a session answers through a worker, and one that is not polling yet answers when it comes.
 */
export class WaitEndedError extends FabricError {
  constructor(
    readonly sessionId: string,
    readonly reason: 'timeout' | 'aborted',
    readonly noWorker: { taskQueue: string } | undefined,
    after = '',
  ) {
    super(
      'WAIT_ENDED',
      `session ${sessionId}: stopped waiting (${reason === 'timeout' ? 'the deadline passed' : 'the call was aborted'}) before the session answered` +
        (noWorker ? `; no worker is polling task queue ${noWorker.taskQueue}` : '') +
        after,
    );
  }
}

/**
 * A send's wait ended: the message is not lost and not cancelled. Reattach with the same `messageId` (and
 * the same text) instead of sending it again.
 */
export class UpdateWaitEndedError extends WaitEndedError {
  constructor(
    sessionId: string,
    readonly messageId: string | undefined,
    readonly updateId: string,
    reason: 'timeout' | 'aborted',
    noWorker?: { taskQueue: string },
  ) {
    super(
      sessionId,
      reason,
      noWorker,
      messageId
        ? `. Message ${messageId} is still in the session and runs when a worker takes it: prompt again with { messageId: '${messageId}' } and the same text, or reply('${messageId}'), to get its answer; sending it as a new message would run it twice`
        : '',
    );
  }
}

/**
 * The server could not give a query to any worker: none has polled the session's task queue lately (it
 * says so, or its query times out, after waiting up to about half a minute for one). Nothing is lost; the
 * session answers when a worker comes. Before, this reached the caller as a bare gRPC error.
 */
export class NoWorkerError extends FabricError {
  constructor(
    readonly sessionId: string,
    readonly taskQueue: string | undefined,
  ) {
    super('NO_WORKER', `session ${sessionId}: no worker is polling ${taskQueue ? `task queue ${taskQueue}` : "the session's task queue"}, so nothing can answer it now; start one (\`fh worker --agents <module>${taskQueue ? ` --task-queue ${taskQueue}` : ''}\`) and ask again`);
  }
}

export interface SessionUpdateCall<Ret, Args extends unknown[]> {
  client: Client;
  handle: WorkflowHandle;
  sessionId: string;
  def: UpdateDefinition<Ret, Args>;
  args: Args;
  updateId: string;
  /** For the typed error when the wait ends. */
  messageId?: string;
  limits?: WaitLimits;
  /**
   * The first attempt, when it is more than the update: update-with-start, whose start operation can run
   * once. Every later attempt (an RPC timeout, an aborted update, a run that continued as new) sends the
   * update alone, by its id, and so reattaches to the one the first attempt admitted.
   */
  first?: () => Promise<Ret>;
}

/** Sends the update and waits for its result through RPC timeouts and continue-as-new (see the module comment). */
export async function runSessionUpdate<Ret, Args extends unknown[]>(call: SessionUpdateCall<Ret, Args>): Promise<Ret> {
  const { client, handle, sessionId, def, args, updateId } = call;
  const limits = call.limits ?? {};
  checkWaitLimits(limits, 'wait options');
  let first = call.first;
  const { deadline, signals, ended } = waitBounds(client, limits);
  let hops = 0;
  for (;;) {
    const why = ended();
    if (why) throw new UpdateWaitEndedError(sessionId, call.messageId, updateId, why, await idleQueueOutside(client, handle));
    try {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the SDK overloads on the argument tuple's length
      const update = (): Promise<Ret> => handle.executeUpdate(def as any, { args: args as any, updateId });
      const send = first ?? update;
      first = undefined;
      return await underBounds(client, { deadline, signals }, send);
    } catch (err) {
      if (isRpcTimeout(err)) continue; // ours (checked above) or the SDK's: wait on, same update id
      if (isAbortedOrBusy(err) && hops < MAX_BUSY_RETRIES) {
        // The SDK's own retries ran out while the server kept aborting the update at continue-as-new
        // boundaries, or the run had its limit of updates in flight: nothing was accepted, send it again.
        hops += 1;
        await pause(Math.min(200 * hops, 2_000), deadline, signals);
        continue;
      }
      if (isRunGone(err) && hops < MAX_RUN_HOPS) {
        const status = await currentStatus(handle);
        if (status === 'RUNNING' || status === 'CONTINUED_AS_NEW') {
          hops += 1;
          await pause(Math.min(50 * hops, 500), deadline, signals);
          continue;
        }
        throw (await terminatedWith(handle, status, err)) ?? sessionGone(err, sessionId, status);
      }
      throw typedSessionError(err, sessionId);
    }
  }
}

/**
 * A query of the session's current run: one that met a run closing under it is asked again of the next.
 * The caller's deadline or abort signal (`client.withDeadline`, `client.withAbortSignal`) ends it with
 * WAIT_ENDED, never a bare gRPC error, and is not retried past.
 */
export async function runSessionQuery<T>(handle: WorkflowHandle, sessionId: string, query: () => Promise<T>): Promise<T> {
  let restoring = 0;
  let hops = 0;
  return retryQuery(query, {
    client: handle.client,
    handle,
    waitEnded: (why, noWorker) => new WaitEndedError(sessionId, why, noWorker),
    noWorker: (taskQueue) => new NoWorkerError(sessionId, taskQueue),
    typed: (err) => typedSessionError(err, sessionId),
    // A run that continued as new and is still loading its conversation: asked again shortly.
    afterTimeouts: async (err, { wait }) => {
      if (!isRestoring(err) || restoring++ >= MAX_RESTORING_WAITS) return false;
      await wait(100);
      return true;
    },
    // The run closed under the query: asked again of the session's current run while one runs. Only hops
    // count toward the limit: the loop's one counter once counted restoring waits and refusals too, so
    // after 20 of those (a run loading a long conversation) a continue-as-new reached the caller.
    beforeTyped: async (err, { wait }) => {
      if (!isRunGone(err) || hops >= MAX_RUN_HOPS) return false;
      const status = await currentStatus(handle);
      if (status !== 'RUNNING' && status !== 'CONTINUED_AS_NEW') throw (await terminatedWith(handle, status, err)) ?? sessionGone(err, sessionId, status);
      hops += 1;
      await wait(Math.min(50 * hops, 500));
      return true;
    },
  });
}

/** A restoring run is asked again every 100 ms for up to this many times (its first activity loads the conversation). */
const MAX_RESTORING_WAITS = 300;

function isRestoring(err: unknown): boolean {
  return err instanceof Error && err.message.includes(SESSION_RESTORING);
}

/** Our typed error for a failure: a FabricError the session sent, or SESSION_NOT_FOUND / SESSION_CLOSED. */
export function typedSessionError(err: unknown, id: string): unknown {
  const typed = typedFailure(err);
  if (typed !== err) return typed;
  if (isCompleted(err)) return withCause(new SessionClosedError(id), err);
  if (err instanceof WorkflowNotFoundError) return withCause(new SessionNotFoundError(id), err);
  return err;
}

function sessionGone(err: unknown, id: string, status: string | undefined): unknown {
  const typed = typedFailure(err);
  if (typed !== err) return typed;
  return withCause(status === undefined ? new SessionNotFoundError(id) : new SessionClosedError(id), err);
}

function isCompleted(err: unknown): boolean {
  return /already completed|already finished|completed before the update/i.test(chainText(err));
}

/** The run the update was sent to closed before accepting it (or is unknown): ask who runs the session now. */
function isRunGone(err: unknown): boolean {
  return err instanceof WorkflowNotFoundError || isCompleted(err);
}

/** gRPC RESOURCE_EXHAUSTED (too many updates in flight), or UNAVAILABLE because the update was aborted (its run closed). */
function isAbortedOrBusy(err: unknown): boolean {
  return someCause(err, 10, (e) => {
    const details = String(e.details ?? e.message ?? '');
    return e.code === 8 || (e.code === 14 && /update was aborted|workflow is closing|operation can ?not be applied/i.test(details));
  });
}

function isRpcTimeout(err: unknown): boolean {
  return err instanceof WorkflowUpdateRPCTimeoutOrCancelledError;
}

/** The status of the session's current run; undefined when the server knows no run of it. */
/**
 * A session terminated with one of our codes as the reason (the worker's missing-blob reaper ends a
 * session whose message it can no longer read with `STORE_BLOB_MISSING: …`): that error, for the calls
 * that were waiting on it; undefined for any other end.
 */
async function terminatedWith(handle: WorkflowHandle, status: string | undefined, cause: unknown): Promise<FabricError | undefined> {
  // A run that failed with one of our errors (a connection the worker lacks, at the session's start) says so.
  if (status === 'FAILED') {
    const failed = await handle.result().then(() => undefined, (err: unknown) => decodeFailure(err));
    return failed ? withCause(failed, cause) : undefined;
  }
  if (status !== 'TERMINATED') return undefined;
  const res = await handle.client.workflowService
    .getWorkflowExecutionHistoryReverse({ namespace: handle.client.options.namespace, execution: { workflowId: handle.workflowId }, maximumPageSize: 1 })
    .catch(() => undefined);
  const typed = errorOfTermination(res?.history?.events?.[0]?.workflowExecutionTerminatedEventAttributes?.reason);
  return typed ? withCause(typed, cause) : undefined;
}

async function currentStatus(handle: WorkflowHandle): Promise<string | undefined> {
  try {
    return (await handle.describe()).status.name;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  }
}

function chainText(err: unknown): string {
  let text = '';
  for (let cur: unknown = err, depth = 0; cur && depth < 10; depth++) {
    text += ` ${String((cur as Error)?.message ?? '')}`;
    cur = (cur as { cause?: unknown }).cause;
  }
  return text;
}

/** The update id of a message: the same message (id and text) is the same update, so a retry reattaches to it. */
export function messageUpdateId(kind: 'prompt' | 'send', messageId: string, text: string, attachments?: readonly AttachmentRef[]): string {
  // Attachments make it another message: their hashes are hashed with the text (none: the id as before).
  const files = attachments?.length ? `\n${attachments.map((a) => a.hash).join(',')}` : '';
  return `${kind}:${messageId}:${hashString(text + files)}`;
}
