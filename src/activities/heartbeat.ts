import { Context } from '@temporalio/activity';

/** How often a long activity heartbeats: well inside the 10 s heartbeat timeout workflows give it. */
export const HEARTBEAT_MS = 2_000;

/**
 * Runs `fn` heartbeating every few seconds: a model call waits on the provider for up to minutes, a store
 * call on a slow disk or S3 for seconds, git on a large repository for longer, and a worker that dies
 * meanwhile must be noticed within the heartbeat timeout, not the start-to-close one. An activity with a
 * heartbeat timeout that runs longer than it without heartbeating is timed out and retried, so every
 * activity a workflow gives a heartbeat timeout runs through this.
 */
export async function heartbeating<T>(fn: () => Promise<T>): Promise<T> {
  const ctx = Context.current();
  const beat = setInterval(() => ctx.heartbeat(), HEARTBEAT_MS);
  try {
    return await fn();
  } finally {
    clearInterval(beat);
  }
}
