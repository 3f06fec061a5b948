/**
 * The caller's bounds on a call (client/wait-bounds.ts), against a real client's call context: Temporal's
 * Connection keeps one deadline and one abort signal per scope, and an inner `withAbortSignal` replaces the
 * outer's signal. Both of the caller's signals (its own and the client's) must cancel the call.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { CallContext } from '@temporalio/client';
import { underBounds, underSignal, waitBounds, type CallContextClient } from '../../src/client/wait-bounds';

/** Temporal's Connection.withDeadline / withAbortSignal, as its client/lib/connection.js writes them. */
function fakeClient(): CallContextClient & { context: () => CallContext | undefined } {
  const callContextStorage = new AsyncLocalStorage<CallContext>();
  const connection = {
    callContextStorage,
    withDeadline: <R>(deadline: number | Date, fn: () => Promise<R>) => callContextStorage.run({ ...callContextStorage.getStore(), deadline }, fn),
    withAbortSignal: <R>(abortSignal: AbortSignal, fn: () => Promise<R>) => callContextStorage.run({ ...callContextStorage.getStore(), abortSignal }, fn),
  };
  return {
    connection: connection as never,
    withDeadline: connection.withDeadline as never,
    withAbortSignal: connection.withAbortSignal as never,
    context: () => callContextStorage.getStore(),
  };
}

describe('underBounds', () => {
  it("lets the caller's own signal and the client's cancel the call, and keeps the nearer deadline", async () => {
    for (const which of ['own', 'client'] as const) {
      const client = fakeClient();
      const own = new AbortController();
      const outer = new AbortController();
      const seen = await client.withAbortSignal(outer.signal, () =>
        client.withDeadline(Date.now() + 60_000, () => underBounds(client, waitBounds(client, { signal: own.signal, timeoutMs: 1_000 }), async () => client.context())),
      );
      (which === 'own' ? own : outer).abort();
      expect(seen?.abortSignal?.aborted).toBe(true);
      expect(Number(seen?.deadline) - Date.now()).toBeLessThan(2_000);
    }
  });

  it('passes a single signal as it is, and none when there is none', async () => {
    const client = fakeClient();
    const own = new AbortController();
    expect((await underBounds(client, waitBounds(client, { signal: own.signal }), async () => client.context()))?.abortSignal).toBe(own.signal);
    expect((await underBounds(client, waitBounds(client, {}), async () => client.context()))?.abortSignal).toBeUndefined();
  });
});

describe('underSignal', () => {
  it("cancels with its signal or the client's", async () => {
    for (const which of ['mine', 'client'] as const) {
      const client = fakeClient();
      const mine = new AbortController();
      const outer = new AbortController();
      const seen = await client.withAbortSignal(outer.signal, () => underSignal(client, mine.signal, async () => client.context()));
      (which === 'mine' ? mine : outer).abort();
      expect(seen?.abortSignal?.aborted).toBe(true);
    }
  });
});
