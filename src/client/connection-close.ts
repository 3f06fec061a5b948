/**
 * Closing a client's connection while the SDK still has a call on it. @temporalio/client retries a call
 * that ends UNAVAILABLE from a timer, and gRPC ends UNAVAILABLE every call that had not been sent yet when
 * its channel closed ("Channel closed before call started"): the retry then throws "Channel has been shut
 * down" from the timer, an uncaught exception that kills the process. A call is in that state when it was
 * made in the same tick as the close: `handle.result(); await connection.close()`, or any background call.
 * And a long poll already sent (result() waits on one) outlives the close by up to 20 s, then fails with
 * a bare "Unexpected error while making gRPC request".
 *
 * So a connection our handles use closes one macrotask later (calls made this tick are sent by then, and
 * finish on their own), after the waits registered here (result()) are cancelled (gRPC CANCELLED is never
 * retried): they reject with CONNECTION_CLOSED at once. A call still waiting to be retried when the
 * connection closes (a poll that met a server going away, as `fh session prompt` did) is not retried on
 * the closed channel (see closedChannelInterceptor).
 */
import type { Client, ConnectionLike } from '@temporalio/client';
import { FabricError } from '../core/errors';

/** The client's connection was closed while a call waited on the run (the run goes on). */
export class ConnectionClosedError extends FabricError {
  declare readonly code: 'CONNECTION_CLOSED';
  constructor(readonly workflowId: string) {
    super('CONNECTION_CLOSED', `The client's connection was closed while waiting for run '${workflowId}'; the run goes on: wait for it again on an open connection.`);
  }
}

interface CloseGuard {
  waits: Set<AbortController>;
  closed: boolean;
}

/**
 * The innermost interceptor of a guarded connection. @temporalio/client retries a call that ended
 * UNAVAILABLE from a timer, seconds later (a server that went away): once the connection is closed, that
 * retry would reach the closed channel, whose createCall throws out of the timer and kills the process.
 * So a retry after the close gets a call that never starts and never answers: the caller's promise stays
 * pending (nothing holds the event loop for it), as the caller asked by closing. It cannot end with a
 * status instead: Temporal's retry interceptor then hands on a message it never received (a TypeError
 * out of the same timer). A first attempt after the close still goes to the channel and fails at once, in
 * the caller's own stack.
 */
function closedChannelInterceptor(guard: CloseGuard) {
  const attempted = new WeakSet<object>();
  return (options: unknown, nextCall: (options: unknown) => unknown): unknown => {
    const first = typeof options !== 'object' || options === null || !attempted.has(options);
    if (typeof options === 'object' && options !== null) attempted.add(options);
    if (!guard.closed || first) return nextCall(options);
    return {
      start: () => undefined,
      sendMessage: () => undefined,
      sendMessageWithContext: () => undefined,
      startRead: () => undefined,
      halfClose: () => undefined,
      cancelWithStatus: () => undefined,
      getPeer: () => '',
    };
  };
}

const guards = new WeakMap<ConnectionLike, CloseGuard>();

/** Makes closing this connection safe for the SDK's calls (see the module comment); idempotent. */
export function guardClose(connection: ConnectionLike): CloseGuard {
  const known = guards.get(connection);
  if (known) return known;
  const guard: CloseGuard = { waits: new Set(), closed: false };
  // Every call of the connection passes through this array (Temporal hands the same one to each call).
  const interceptors = (connection as { options?: { interceptors?: unknown[] } }).options?.interceptors;
  if (Array.isArray(interceptors)) interceptors.push(closedChannelInterceptor(guard));
  const close = connection.close.bind(connection);
  connection.close = async () => {
    // One macrotask first: a call made this tick is on the wire by then (gRPC cannot cancel one still
    // choosing its channel config: it goes out anyway), so cancelling it below really ends it.
    await new Promise((resolve) => setImmediate(resolve));
    guard.closed = true;
    for (const wait of guard.waits) wait.abort();
    return close();
  };
  guards.set(connection, guard);
  return guard;
}

/**
 * How long one signal serves a wait. The connection adds an abort listener to the signal for each call
 * made under it and never removes it, and result() long-polls (a call every ~20 s) for as long as the run
 * goes on: on one signal they piled up (MaxListenersExceededWarning after about 4 minutes, each listener
 * keeping its finished call; a day's wait kept thousands). So the wait is asked again on a fresh signal
 * this often; the old one, and what it holds, is then garbage.
 */
export const WAIT_RENEW_MS = 120_000;

/** `wait()` (calls on `client`), ended with CONNECTION_CLOSED when the client's connection is closed under it. */
export async function untilClosed<T>(client: Client, workflowId: string, wait: () => Promise<T>, renewMs = WAIT_RENEW_MS): Promise<T> {
  const guard = guardClose(client.connection);
  for (;;) {
    const closing = new AbortController();
    guard.waits.add(closing);
    let renewed = false;
    const renew = setTimeout(() => {
      renewed = true;
      closing.abort();
    }, renewMs);
    renew.unref();
    try {
      return await client.withAbortSignal(closing.signal, wait);
    } catch (err) {
      if (!closing.signal.aborted) throw err;
      if (renewed && !guard.closed) continue; // only the renewal ended it: wait again on a fresh signal
      const closed = new ConnectionClosedError(workflowId);
      (closed as { cause?: unknown }).cause = err;
      throw closed;
    } finally {
      clearTimeout(renew);
      guard.waits.delete(closing);
    }
  }
}
