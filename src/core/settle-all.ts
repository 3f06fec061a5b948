/**
 * `Promise.allSettled` with fewer promises: one `then` per pending item, and no aggregate for a single
 * item (the usual tool round has one call). Workflow code pays a stack capture for every promise it makes
 * (Temporal's sandbox records them for its stack trace query), on every replay too.
 */
export function settleAll<T>(items: ReadonlyArray<T | PromiseLike<T>>): Promise<PromiseSettledResult<T>[]> {
  if (items.length === 1) {
    const only = items[0]!;
    return isThenable(only) ? Promise.resolve(only).then((value) => [fulfilled(value)], (reason: unknown) => [rejected(reason)]) : Promise.resolve([fulfilled(only)]);
  }
  return Promise.all(items.map((item) => (isThenable(item) ? Promise.resolve(item).then(fulfilled, rejected) : fulfilled(item))));
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
