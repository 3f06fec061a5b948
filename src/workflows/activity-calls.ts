/**
 * How workflow code calls activities: the proxy with a summary, the retry policy, typed failures
 * decoded, and the session host's own activities. Shared by the harness's ports (./temporal-ports)
 * and the session workflow.
 */
import { isCancellation, proxyActivities, type ActivityOptions } from '@temporalio/workflow';
import type { FabricActivities } from '../wire/activity-contract';
import { decodeFailure } from '../wire/failures';
import { InterruptedError } from '../core/errors';

export const retry = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '60s', maximumAttempts: 10 } as const;

export function activities(options: ActivityOptions, summary: string) {
  return proxyActivities<FabricActivities>({ ...options, summary });
}

/** git on the worker (a worktree of a large repository takes a while): it heartbeats, so a dead worker is noticed in seconds. */
export const worktreeOptions: ActivityOptions = { startToCloseTimeout: '5 minutes', heartbeatTimeout: '10s', retry: { ...retry, maximumAttempts: 3 } };

/**
 * The session's own activity calls (load and store its transcript, resolve a model it switches to, title
 * a new session): short store and lookup calls, so a shorter bound than a model call. They heartbeat
 * (the worker side does it for them): a worker killed during one is noticed in seconds. Without it the
 * session waited out the start-to-close timeout, two minutes, at every continue-as-new a kill caught.
 */
const sessionOptions: ActivityOptions = {
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '10s',
  retry: { initialInterval: '1s', maximumInterval: '30s', maximumAttempts: 10 },
};

export type SessionActivities = Pick<FabricActivities, 'fhLoadTranscript' | 'fhStoreTranscript' | 'fhResolveModel' | 'fhSummarize' | 'fhArchiveReplies' | 'fhFindReply' | 'fhWorktreeCreate' | 'fhWorktreeFinish'>;

/** The session host's activities, through the same proxy (and options in one place) as the harness's ports. */
export function createSessionActivities(): SessionActivities {
  return {
    fhLoadTranscript: (ref) => activities(sessionOptions, 'load the session transcript').fhLoadTranscript(ref),
    fhStoreTranscript: (input) => activities(sessionOptions, 'store the session transcript').fhStoreTranscript(input),
    fhResolveModel: (input) => activities(sessionOptions, `resolve model ${input.model ?? '(worker default)'}`).fhResolveModel(input),
    fhSummarize: (input) => activities(sessionOptions, `title with ${input.model}`).fhSummarize(input),
    fhArchiveReplies: (chunk) => activities(sessionOptions, `archive ${chunk.replies.length} replies`).fhArchiveReplies(chunk),
    fhFindReply: (input) => activities(sessionOptions, `find the reply to ${input.messageId}`).fhFindReply(input),
    // A child session's own working copy (only sessions started with isolation 'worktree' call these).
    fhWorktreeCreate: (input) => decoded(() => activities(worktreeOptions, `worktree for ${input.name}`).fhWorktreeCreate(input)),
    fhWorktreeFinish: (input) => decoded(() => activities(worktreeOptions, `finish worktree ${input.branch}`).fhWorktreeFinish(input)),
  };
}

/**
 * An activity's typed failure, decoded (the session reasons about model errors by kind). A cancelled
 * activity is an interrupted turn (the only thing that cancels a session's activities).
 *
 * The wrappers on an activity's path (this one, `counted`, `onToolQueue`) chain one `then` each rather
 * than being async functions: Temporal's workflow sandbox captures a stack trace for every promise
 * made in workflow code (for its stack trace query), and an async wrapper makes two. That capture is
 * most of what workflow code costs per model call, and a replay pays it again.
 */
export function decoded<T>(call: () => Promise<T>): Promise<T> {
  let pending: Promise<T>;
  try {
    pending = call();
  } catch (err) {
    return Promise.reject(decodedFailure(err));
  }
  return pending.then(undefined, (err: unknown) => {
    throw decodedFailure(err);
  });
}

export function decodedFailure(err: unknown): unknown {
  if (isCancellation(err)) return new InterruptedError();
  return decodeFailure(err) ?? err;
}
