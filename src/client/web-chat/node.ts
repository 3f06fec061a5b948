/**
 * node:http (and Express) in front of a Web handler: the request becomes a `Request` (its body
 * streamed, its signal aborted when the client goes), the `Response` is written back as it streams.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';

export function toNodeHandler(handle: (request: Request) => Promise<Response>): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (Array.isArray(value)) for (const v of value) headers.append(name, v);
      else if (value !== undefined) headers.set(name, value);
    }
    const method = req.method ?? 'GET';
    const hasBody = method !== 'GET' && method !== 'HEAD';
    const request = new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, {
      method,
      headers,
      signal: abort.signal,
      ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: 'half' } : {}),
    } as RequestInit);
    const response = await handle(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (!response.body) {
      res.end();
      return;
    }
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        if (abort.signal.aborted) break;
        res.write(chunk);
      }
    } finally {
      if (abort.signal.aborted) await response.body.cancel().catch(() => undefined);
      res.end();
    }
  };
}
