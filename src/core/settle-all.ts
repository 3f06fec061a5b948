/**
 * `Promise.allSettled(items).then(then)` with fewer promises: one `then` per pending item, and for a
 * single item (the usual tool round has one call) that `then` is all. Workflow code pays a stack
 * capture for every promise it makes (Temporal's sandbox records them for its stack trace query), on
 * every replay too.
 */
export function settleAll<T, R>(items: ReadonlyArray<T | PromiseLike<T>>, then: (settled: PromiseSettledResult<T>[]) => R | PromiseLike<R>): Promise<R> {
  if (items.length === 1) {
    // The result mapped in the same `then` that settles the one item: no promise for the aggregate.
    const only = items[0]!;
    if (!isThenable(only)) return Promise.resolve([fulfilled(only)]).then(then);
    return Promise.resolve(only).then(
      (value) => then([fulfilled(value)]),
      (reason: unknown) => then([rejected(reason)]),
    );
  }
  return Promise.all(items.map((item) => (isThenable(item) ? Promise.resolve(item).then(fulfilled, rejected) : fulfilled(item)))).then(then);
}

function isThenable<T>(item: T | PromiseLike<T>): item is PromiseLike<T> {
  return typeof (item as { then?: unknown } | null)?.then === 'function';
}

function fulfilled<T>(value: T): PromiseFulfilledResult<T> {
  return { status: 'fulfilled', value };
}

function rejected(reason: unknown): PromiseRejectedResult {
  return { status: 'rejected', reason };
}
