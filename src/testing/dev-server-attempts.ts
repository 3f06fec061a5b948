/**
 * Starting a dev server on ports this process chose, again on fresh ports when the first did not come up.
 *
 * A chosen port is released before the server binds it (see `loopback-ports.ts`), so another process can take
 * it in between. The server then never answers, and @temporalio/testing gives up after its 5 s start window
 * (having stopped the process). Ports a caller named are never swapped: that failure is theirs to see.
 */

/** How many starts on freshly chosen ports before the failure is the caller's. */
export const DEV_SERVER_START_ATTEMPTS = 3;

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
}

export async function startOnPorts<T>(opts: StartOnPortsOptions<T>): Promise<DevServerAttempts<T>> {
  const chosen = opts.port === undefined;
  for (let attempts = 1; ; attempts++) {
    const ports: DevServerPorts = { port: opts.port ?? (await opts.pickPort()) };
    if (opts.ui) ports.uiPort = opts.uiPort ?? (await opts.pickPort());
    try {
      return { ok: true, value: await opts.start(ports), ports, attempts };
    } catch (error) {
      if (!chosen || attempts >= DEV_SERVER_START_ATTEMPTS || !isStartWindowMissed(error)) return { ok: false, error, ports, attempts };
      opts.onRetry?.(ports, error);
    }
  }
}
