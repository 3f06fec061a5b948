/**
 * The signals a long-running `fh` command (server, board, demo --stay) stops on, cleanly: Ctrl-C, a
 * supervisor's SIGTERM, and SIGHUP, which a command gets when its terminal window is closed. Node's
 * default for SIGHUP is to exit at once: the command's own cleanup (stopping the dev server it started,
 * closing its connections) never ran, and the dev server was left to notice on its own that its parent
 * was gone.
 */
export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

export type StopSignal = (typeof STOP_SIGNALS)[number];

/**
 * Calls `onSignal` on every stop signal (a second one too: a command may exit at once on it), until the
 * returned function is called. `signals` narrows them for a command that gives one its own meaning
 * (`fh fake` starts its script over on SIGHUP).
 */
export function onStopSignals(onSignal: (signal: StopSignal) => void, signals: readonly StopSignal[] = STOP_SIGNALS): () => void {
  const handlers = signals.map((signal) => [signal, () => onSignal(signal)] as const);
  for (const [signal, handler] of handlers) process.on(signal, handler);
  return () => {
    for (const [signal, handler] of handlers) process.off(signal, handler);
  };
}

/** Resolves with the first stop signal (of `signals`), and stops listening. */
export function nextStopSignal(signals: readonly StopSignal[] = STOP_SIGNALS): Promise<StopSignal> {
  return new Promise((resolve) => {
    const off = onStopSignals((signal) => {
      off();
      resolve(signal);
    }, signals);
  });
}
