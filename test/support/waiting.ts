/**
 * Waiting in integration tests: poll until a probe answers (visibility, a worker, a turn are all
 * eventually there), and take a promise's rejection as the value under test.
 */

/** Polls `probe` every 150 ms until it returns something truthy; fails after `ms` with the last error the probe threw. */
export async function until<T>(what: string, probe: () => Promise<T | undefined | false>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

/** The error `p` rejects with; fails the test if it resolves. */
export async function rejection(p: Promise<unknown>): Promise<any> {
  return p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e) => e,
  );
}
