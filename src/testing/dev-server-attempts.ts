/**
 * Starting a dev server on ports this process chose, again on fresh ports when the first did not come up.
 *
 * A chosen port is released before the server binds it (see `loopback-ports.ts`), so another process can take
 * it in between. The server then never answers, and @temporalio/testing gives up after its 5 s start window
 * (having stopped the process). Ports a caller named are never swapped: that failure is theirs to see.
 */

/** How many starts on freshly chosen ports before the failure is the caller's. */
export const DEV_SERVER_START_ATTEMPTS = 3;

/**
 * How long one start may take in all. @temporalio/testing gives the frontend 5 s to answer, counted in
 * connection attempts; but an attempt at a port held by a listener that accepts and never answers (a process
 * that is not a Temporal server) never returns, and the start waited for ever, the CLI long dead. A start here
 * takes 0.4-2 s; the bound leaves a loaded machine its margin.
 */
export const DEV_SERVER_START_BOUND_MS = 30_000;

/** The ports one start used. */
export interface DevServerPorts {
  port: number;
  uiPort?: number;
}

export type DevServerAttempts<T> =
  | { ok: true; value: T; ports: DevServerPorts; attempts: number }
  | { ok: false; error: unknown; ports: DevServerPorts; attempts: number };

/**
 * Whether a start failed because the frontend never answered within @temporalio/testing's start window: what a
 * port taken between choosing and binding looks like (the CLI refuses it, or its frontend fails to listen).
 * A missing executable or a refused argument fails otherwise, and another start would fail alike. (The error is
 * read by shape, not `instanceof Error`: the native bridge makes it in the main realm, which is not a test's.)
 */
export function isStartWindowMissed(err: unknown): boolean {
  const message = typeof err === 'object' && err !== null ? (err as { message?: unknown }).message : undefined;
  return typeof message === 'string' && /did not start within/.test(message);
}

export interface StartOnPortsOptions<T> {
  /** The frontend port the caller named (never swapped), or undefined to choose one. */
  port?: number;
  /** The UI port the caller named, or undefined to choose one when `ui`. */
  uiPort?: number;
  ui: boolean;
  pickPort: () => Promise<number>;
  start: (ports: DevServerPorts) => Promise<T>;
  /** Told before each further start: the ports that failed and why. */
  onRetry?: (failed: DevServerPorts, err: unknown) => void;
  /** One start's bound (default {@link DEV_SERVER_START_BOUND_MS}); `Infinity`: none. */
  boundMs?: number;
  /** Given what a start past its bound came up with after all, to stop it (nothing else holds it). */
  abandon?: (late: T) => unknown;
}

/** `start` within `ms`; past it, a "did not start within" error, and what it comes up with later is abandoned. */
async function within<T>(started: Promise<T>, ms: number, abandon: ((late: T) => unknown) | undefined): Promise<T> {
  if (ms === Infinity) return started;
  let timer: NodeJS.Timeout | undefined;
  let late = false;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      late = true;
      reject(new Error(`the dev server did not start within ${ms} ms (its frontend port may be held by a process that is not a Temporal server)`));
    }, ms);
  });
  started.then(
    (value) => (late ? abandon?.(value) : undefined),
    () => undefined,
  );
  try {
    return await Promise.race([started, bound]);
  } finally {
    clearTimeout(timer);
  }
}

export async function startOnPorts<T>(opts: StartOnPortsOptions<T>): Promise<DevServerAttempts<T>> {
  const chosen = opts.port === undefined;
  for (let attempts = 1; ; attempts++) {
    const ports: DevServerPorts = { port: opts.port ?? (await opts.pickPort()) };
    if (opts.ui) ports.uiPort = opts.uiPort ?? (await opts.pickPort());
    try {
      return { ok: true, value: await within(opts.start(ports), opts.boundMs ?? DEV_SERVER_START_BOUND_MS, opts.abandon), ports, attempts };
    } catch (error) {
      if (!chosen || attempts >= DEV_SERVER_START_ATTEMPTS || !isStartWindowMissed(error)) return { ok: false, error, ports, attempts };
      opts.onRetry?.(ports, error);
    }
  }
}
