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
 * connection closes (a poll that met a server going away, as `fh session prompt` did) ends CANCELLED at
 * its retry instead of reaching the closed channel.
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

/** gRPC's CANCELLED: a status @temporalio/client never retries. */
const GRPC_CANCELLED = 1;

/** The parts of a gRPC listener a call reports its end to. */
interface StatusListener {
  onReceiveStatus?(status: { code: number; details: string; metadata: unknown }): void;
}

/**
 * The innermost interceptor of a guarded connection: once it is closed, a call (or a retry of one, which
 * @temporalio/client starts from a timer, seconds after a server went away) never reaches the closed
 * channel, whose createCall throws out of the timer; it ends CANCELLED instead, through its own callback.
 */
function closedChannelInterceptor(guard: CloseGuard) {
  return (options: unknown, nextCall: (options: unknown) => unknown): unknown => {
    if (!guard.closed) return nextCall(options);
    return {
      start(metadata: unknown, listener?: StatusListener) {
        setImmediate(() => listener?.onReceiveStatus?.({ code: GRPC_CANCELLED, details: "The client's connection was closed", metadata }));
      },
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

/** `wait()` (calls on `client`), ended with CONNECTION_CLOSED when the client's connection is closed under it. */
export async function untilClosed<T>(client: Client, workflowId: string, wait: () => Promise<T>): Promise<T> {
  const guard = guardClose(client.connection);
  const closing = new AbortController();
  guard.waits.add(closing);
  try {
    return await client.withAbortSignal(closing.signal, wait);
  } catch (err) {
    if (!closing.signal.aborted) throw err;
    const closed = new ConnectionClosedError(workflowId);
    (closed as { cause?: unknown }).cause = err;
    throw closed;
  } finally {
    guard.waits.delete(closing);
  }
}
