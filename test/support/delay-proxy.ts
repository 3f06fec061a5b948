import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface DelayProxy {
  url: string;
  /** Holds the next `count` POST /v1/messages requests for `ms` before forwarding them. */
  delayNext(ms: number, count?: number): void;
  /** Resolves when a request is being held (at once if one is). */
  held(): Promise<void>;
  /** Whether a request is being held right now. */
  isHolding(): boolean;
  stop(): Promise<void>;
}

/**
 * A loopback proxy in front of the fake Anthropic server that can hold model calls: a slow model, so
 * a test can kill a worker or time out a client while a call is in flight.
 */
export async function startDelayProxy(target: string): Promise<DelayProxy> {
  const delays: number[] = [];
  const holdWaiters: Array<() => void> = [];
  let holding = 0;
  const held = new Set<() => void>();
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (req.method === 'POST' && req.url?.startsWith('/v1/messages') && delays.length > 0) {
      const ms = delays.shift()!;
      holding += 1;
      holdWaiters.splice(0).forEach((w) => w());
      // Held requests end with stop(): a pending timer would keep the test process alive for `ms`.
      await new Promise<void>((resolve) => {
        const release = () => {
          clearTimeout(timer);
          held.delete(release);
          resolve();
        };
        const timer = setTimeout(release, ms);
        held.add(release);
      });
      holding -= 1;
      if (req.socket.destroyed) return; // the caller (a killed worker) went away
    }
    try {
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => k !== 'host' && k !== 'content-length')) as Record<string, string>;
      const upstream = await fetch(target + req.url, {
        method: req.method,
        headers,
        body: chunks.length ? Buffer.concat(chunks) : undefined,
      });
      const drop = new Set(['content-encoding', 'transfer-encoding', 'content-length', 'connection']);
      res.writeHead(upstream.status, Object.fromEntries([...upstream.headers.entries()].filter(([k]) => !drop.has(k))));
      res.end(Buffer.from(await upstream.arrayBuffer()));
    } catch {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    delayNext(ms, count = 1) {
      for (let i = 0; i < count; i++) delays.push(ms);
    },
    held: () => new Promise<void>((resolve) => (holding > 0 ? resolve() : holdWaiters.push(resolve))),
    isHolding: () => holding > 0,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        [...held].forEach((release) => release());
      }),
  };
}
