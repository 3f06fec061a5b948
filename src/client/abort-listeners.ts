/**
 * One 'abort' listener per signal, however many waits in this process share the signal. A caller often
 * gives one signal to many calls (a server's shutdown signal to the stream read of every open page, one
 * controller for twenty watchers). Each wait used to add its own listener, so Node printed
 * MaxListenersExceededWarning ("possible EventTarget memory leak") once more than ten waited at once,
 * although each wait removed its listener when it ended. Waits register here instead, and the signal has
 * one listener while any wait is registered and none after.
 */

interface Waiters {
  /** The one listener on the signal. */
  fire: () => void;
  /** Each registration is its own entry, so one callback registered twice runs twice (as two waits need). */
  callbacks: Set<{ run: () => void }>;
}

const bySignal = new WeakMap<AbortSignal, Waiters>();

/**
 * Runs `callback` once when `signal` aborts; the returned function unregisters it. Like addEventListener,
 * nothing runs for a signal that has already aborted: check `signal.aborted` first.
 */
export function onAbort(signal: AbortSignal, callback: () => void): () => void {
  if (signal.aborted) return () => undefined;
  let waiters = bySignal.get(signal);
  if (!waiters) {
    const callbacks = new Set<{ run: () => void }>();
    const fire = (): void => {
      bySignal.delete(signal);
      for (const entry of callbacks) {
        try {
          entry.run();
        } catch (err) {
          // As an event listener's error: reported, and the other waits still end.
          queueMicrotask(() => {
            throw err;
          });
        }
      }
      callbacks.clear();
    };
    waiters = { fire, callbacks };
    bySignal.set(signal, waiters);
    signal.addEventListener('abort', fire, { once: true });
  }
  const entry = { run: callback };
  const registered = waiters;
  registered.callbacks.add(entry);
  return () => {
    if (!registered.callbacks.delete(entry) || registered.callbacks.size > 0) return;
    signal.removeEventListener('abort', registered.fire);
    if (bySignal.get(signal) === registered) bySignal.delete(signal);
  };
}
