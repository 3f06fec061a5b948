/**
 * The caller's bound on a wait: its own limits (`timeoutMs`, `signal`) and the client's call context
 * (`client.withDeadline`, `client.withAbortSignal`), read the same way by every session update and query.
 */
import type { AsyncLocalStorage } from 'node:async_hooks';
import type { CallContext, Client } from '@temporalio/client';
import { onAbort } from './abort-listeners';

/** How long a caller waits: its own bound, or its abort signal (both optional). */
export interface WaitLimits {
  /** Stop waiting after this long (ms): WAIT_ENDED. What was sent stays in the session (a message, an approval). */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** A client (or a handle's workflow client): each carries the connection's call context. */
export type CallContextClient = Pick<Client, 'connection' | 'withDeadline' | 'withAbortSignal'>;

/** The caller's bounds on a wait: its own limits, and the client's call context (withDeadline, withAbortSignal). */
export function waitBounds(client: CallContextClient, limits: WaitLimits): { deadline: number | undefined; signals: AbortSignal[]; ended: () => 'timeout' | 'aborted' | undefined } {
  const outer = callContextStorage(client)?.getStore();
  const deadlines = [limits.timeoutMs !== undefined ? Date.now() + limits.timeoutMs : undefined, deadlineMs(outer?.deadline)].filter((d): d is number => d !== undefined);
  const deadline = deadlines.length ? Math.min(...deadlines) : undefined;
  const signals = [limits.signal, outer?.abortSignal].filter((s): s is AbortSignal => s !== undefined);
  const ended = (): 'timeout' | 'aborted' | undefined =>
    signals.some((s) => s.aborted) ? 'aborted' : deadline !== undefined && Date.now() >= deadline ? 'timeout' : undefined;
  return { deadline, signals, ended };
}

/**
 * Runs `call` under the bounds (the client's withDeadline, and withAbortSignal with every signal: the
 * call context holds one signal, and an inner withAbortSignal replaces the outer's, so two signals nested
 * left only the caller's own able to cancel the call).
 */
export function underBounds<T>(client: CallContextClient, bounds: { deadline: number | undefined; signals: readonly AbortSignal[] }, call: () => Promise<T>): Promise<T> {
  const { deadline, signals } = bounds;
  const bounded = deadline !== undefined ? () => client.withDeadline(deadline, call) : call;
  if (signals.length === 0) return bounded();
  return client.withAbortSignal(signals.length === 1 ? signals[0]! : AbortSignal.any([...signals]), bounded);
}

/** Runs `call` so that `signal` cancels its requests, as well as the call context's own signal does. */
export function underSignal<T>(client: CallContextClient, signal: AbortSignal, call: () => Promise<T>): Promise<T> {
  const outer = callContextStorage(client)?.getStore()?.abortSignal;
  return client.withAbortSignal(outer ? AbortSignal.any([outer, signal]) : signal, call);
}

/**
 * A back-off pause between two asks that ends early when the caller's deadline comes or its signal
 * aborts: the wait then ends with WAIT_ENDED at once, not up to a back-off step (2 s) later.
 */
export function pause(ms: number, deadline: number | undefined, signals: readonly AbortSignal[]): Promise<void> {
  const bounded = deadline === undefined ? ms : Math.max(0, Math.min(ms, deadline - Date.now()));
  return new Promise((resolve) => {
    if (signals.some((s) => s.aborted)) return resolve();
    const offs: Array<() => void> = [];
    const done = (): void => {
      clearTimeout(timer);
      for (const off of offs) off();
      resolve();
    };
    const timer = setTimeout(done, bounded);
    // One listener per signal however many waits share it (abort-listeners.ts).
    for (const s of signals) offs.push(onAbort(s, done));
  });
}

export function callContextStorage(client: CallContextClient): AsyncLocalStorage<CallContext> | undefined {
  return (client.connection as { callContextStorage?: AsyncLocalStorage<CallContext> }).callContextStorage;
}

function deadlineMs(d: number | Date | undefined): number | undefined {
  return d === undefined ? undefined : typeof d === 'number' ? d : d.getTime();
}
