/**
 * A pending call and what its outcome becomes. On Temporal a conversation runs as workflow code, whose
 * sandbox captures a stack trace for every promise made there, on every run and on every replay. A
 * call's path has several layers (the conversation, the tool call, the port, the activity's stream and
 * counters), and a `then` in each made a promise in each. A Pending carries the activity's own promise
 * and composes what each layer makes of its outcome into `settle`, so the one caller that waits awaits
 * once and settles (see Conversation.turnLoop): as many promises per model or tool call as a bare
 * `await` of an activity makes.
 *
 * A port answers with a Pending or with a plain promise (inline runs, test doubles); `pendingOf` takes
 * either.
 */

/** How a promise settled. */
export type Settled = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown };

export interface Pending<T> {
  /** The one promise to wait on (on Temporal, the activity's own). */
  readonly promise: Promise<unknown>;
  /** What its outcome becomes: the value, a promise of it (a second call, on a rare path), or a throw. */
  settle(outcome: Settled): T | Promise<T>;
}

/** What a port answers with: a Pending, or a plain promise. */
export type Eventually<T> = Promise<T> | Pending<T>;

export const fulfilled = (value: unknown): Settled => ({ ok: true, value });
export const rejected = (error: unknown): Settled => ({ ok: false, error });

function valueOf<T>(outcome: Settled): T {
  if (outcome.ok) return outcome.value as T;
  throw outcome.error;
}

export function isPromiseLike<T>(x: unknown): x is PromiseLike<T> {
  return typeof (x as { then?: unknown } | null)?.then === 'function';
}

export function pendingOf<T>(x: Eventually<T>): Pending<T> {
  return isPromiseLike<T>(x) ? { promise: x, settle: valueOf<T> } : x;
}

/**
 * `start()`'s answer, or (when it throws) a Pending that settles to that throw, as an async function
 * rejects: one failing call of a round must not keep the others from starting.
 */
export function started<T>(start: () => Eventually<T>): Pending<T> {
  try {
    return pendingOf(start());
  } catch (error) {
    return failedPending(error);
  }
}

/** A Pending that settles to this failure. */
export function failedPending<T>(error: unknown): Pending<T> {
  return {
    promise: Promise.resolve(),
    settle: () => {
      throw error;
    },
  };
}

/**
 * `p.then(ok, failed)` composed into `settle`, with no promise of its own. `failed` sees only what
 * `p` settles to, not what `ok` throws (as with `then`).
 */
export function thenSettle<T, R>(p: Eventually<T>, ok: (value: T) => R | Promise<R>, failed?: (error: unknown) => R | Promise<R>): Pending<R> {
  const from = pendingOf(p);
  return {
    promise: from.promise,
    settle(outcome) {
      let value: T | Promise<T>;
      try {
        value = from.settle(outcome);
      } catch (error) {
        if (!failed) throw error;
        return failed(error);
      }
      return isPromiseLike<T>(value) ? Promise.resolve(value).then(ok, failed) : ok(value);
    },
  };
}

/** The promise of a Pending's result (for callers that are not on a hot path). */
export function toPromise<T>(p: Eventually<T>): Promise<T> {
  if (isPromiseLike<T>(p)) return Promise.resolve(p);
  if (p.settle === valueOf) return p.promise as Promise<T>; // a plain promise's Pending: that promise
  return p.promise.then(
    (value) => p.settle(fulfilled(value)),
    (error: unknown) => p.settle(rejected(error)),
  );
}

/**
 * `Promise.allSettled(items).then(then)` as a Pending. A round of one call (the usual tool round)
 * settles in that call's own `settle`: no promise for the round.
 */
export function settleAll<T, R>(items: ReadonlyArray<T | Eventually<T>>, then: (settled: PromiseSettledResult<T>[]) => R | Promise<R>): Pending<R> {
  if (items.length === 1 && isEventually<T>(items[0])) {
    return thenSettle(items[0], (value) => then([{ status: 'fulfilled', value }]), (reason: unknown) => then([{ status: 'rejected', reason }]));
  }
  const each = items.map((item): PromiseSettledResult<T> | Promise<PromiseSettledResult<T>> =>
    isEventually<T>(item)
      ? toPromise(item).then(
          (value): PromiseSettledResult<T> => ({ status: 'fulfilled', value }),
          (reason: unknown): PromiseSettledResult<T> => ({ status: 'rejected', reason }),
        )
      : { status: 'fulfilled', value: item },
  );
  return thenSettle(Promise.all(each), then);
}

function isEventually<T>(x: unknown): x is Eventually<T> {
  if (isPromiseLike(x)) return true;
  const p = x as Partial<Pending<T>> | null;
  return typeof p === 'object' && p !== null && isPromiseLike(p.promise) && typeof p.settle === 'function';
}
