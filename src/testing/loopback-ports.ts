/**
 * Free loopback ports for the servers the harness starts (the Temporal dev server, and in this repository's
 * tests PostgreSQL, MinIO and the cluster's server).
 *
 * A port is chosen, checked by binding it, and released; the server binds it a moment later. Anyone who binds
 * it in between wins. The port 0 trick (let the OS choose) picks from the OS's ephemeral range, which is where
 * the OS also puts every outgoing connection's local end and every other port-0 listener, the Temporal CLI's
 * own internal services among them: under load one of those took a port the dev server was about to bind, and
 * the server failed to start. So the port is chosen below that range, where only an explicit bind of the same
 * number can take it, and port 0 is the fallback.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';

/** The lowest port chosen (below it live the well-known and many registered services' ports). */
const LOWEST = 10_000;
/**
 * The ephemeral range's start where it cannot be read: Linux's default is 32768; macOS, the BSDs and Windows
 * start at 49152.
 */
const DEFAULT_EPHEMERAL_START = 32_768;
const CANDIDATES = 24;

/** The first port of the OS's ephemeral range (Linux: read from procfs; elsewhere the lowest default). */
export function ephemeralRangeStart(read: () => string = () => fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')): number {
  if (process.platform !== 'linux') return DEFAULT_EPHEMERAL_START;
  try {
    const low = Number(read().trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 0 && low <= 65_535 ? low : DEFAULT_EPHEMERAL_START;
  } catch {
    return DEFAULT_EPHEMERAL_START;
  }
}

/** Whether `port` can be bound on 127.0.0.1 right now. */
export function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

function portZero(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * A port free on 127.0.0.1 right now, below the OS's ephemeral range when there is room there (random, so
 * that two processes choosing at once rarely choose alike), else one the OS chose.
 */
export async function getFreePort(): Promise<number> {
  const below = ephemeralRangeStart();
  if (below - LOWEST >= 1_000) {
    for (let i = 0; i < CANDIDATES; i++) {
      const port = LOWEST + Math.floor(Math.random() * (below - LOWEST));
      if (await isPortFree(port)) return port;
    }
  }
  return portZero();
}
