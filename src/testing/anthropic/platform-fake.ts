/**
 * What the fakes of the platforms that serve Claude's Messages API (Bedrock, Vertex: ../bedrock,
 * ../vertex) share: each is an HTTP server on loopback that checks its platform's transport (path,
 * credentials, the body's `anthropic_version`, …) and relays what passes, as an Anthropic request, to
 * a FakeAnthropicServer of its own, whose script engine, validation, windows, caching, pacing and gates
 * play the reply. The platform fake then translates the reply back into its transport. So a script
 * written for the Anthropic fake plays on every platform unchanged.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { FakeAnthropicServer } from './fake-anthropic';
import type { FakeAnthropicOptions, FakeRoute, FakeStep, RecordedRequest } from './fake-anthropic-script';

/** A platform fake's options: the Anthropic fake's (script, models, windows, pacing, …) and where to listen. */
export type PlatformFakeOptions = Omit<FakeAnthropicOptions, 'apiKey' | 'port' | 'host'> & { port?: number; host?: string };

/** Where a platform fake listens (its server, and the origin of its URL). */
export interface Listening {
  server: http.Server;
  origin: string;
  /** How many of the newest requests `requests` keeps (the Anthropic fake's `keepRequests`). */
  keepRequests?: number;
}

/** A reply written back to the platform's client. */
export interface PlatformReply {
  status: number;
  headers: Record<string, string>;
  /** A JSON body, or a stream of bytes written as they come. */
  body: unknown;
  stream?: AsyncIterable<Uint8Array>;
}

export abstract class PlatformFake {
  /** Every request received, rejected ones too, as the platform's client sent it (path, headers, body). */
  readonly requests: RecordedRequest[] = [];
  /** Base URL to give the platform's client. */
  readonly url: string;
  private readonly server: http.Server;
  private readonly keepRequests: number | undefined;

  protected constructor(
    /** The Anthropic fake playing the script behind this one (its requests are the relayed, Anthropic-shaped ones). */
    readonly anthropic: FakeAnthropicServer,
    listening: Listening,
    basePath = '',
  ) {
    this.server = listening.server;
    this.url = listening.origin + basePath;
    this.keepRequests = listening.keepRequests;
  }

  /** Starts the inner Anthropic fake and this fake's server; `make` builds the subclass around them. */
  protected static async listen<T extends PlatformFake>(
    opts: PlatformFakeOptions,
    make: (anthropic: FakeAnthropicServer, listening: Listening) => T,
  ): Promise<T> {
    const { port, host = '127.0.0.1', ...rest } = opts;
    const anthropic = await FakeAnthropicServer.start({ ...rest, host: '127.0.0.1' });
    let instance: T | undefined;
    const server = http.createServer((req, res) => void instance!.serve(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port ?? 0, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const address = server.address() as AddressInfo;
    const origin = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
    instance = make(anthropic, { server, origin, ...(rest.keepRequests !== undefined ? { keepRequests: rest.keepRequests } : {}) });
    return instance;
  }

  enqueue(...steps: FakeStep[]): void {
    this.anthropic.enqueue(...steps);
  }
  setRoute(route?: FakeRoute): void {
    this.anthropic.setRoute(route);
  }
  remaining(): number {
    return this.anthropic.remaining();
  }
  release(gate = 'default'): void {
    this.anthropic.release(gate);
  }
  paused(gate = 'default'): Promise<void> {
    return this.anthropic.paused(gate);
  }
  /** The relayed requests the Anthropic fake accepted (Anthropic-shaped: `model` in the body). */
  messageRequests(): RecordedRequest[] {
    return this.anthropic.messageRequests();
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
    await this.anthropic.stop();
  }

  /** The platform's answer to one request (recorded already). */
  protected abstract handle(rec: RecordedRequest, raw: Buffer, signal: AbortSignal): Promise<PlatformReply>;
  /** The platform's reply to a failure of the fake itself. */
  protected abstract internalError(message: string): PlatformReply;

  /**
   * Sends an Anthropic request to the inner fake, as the platform's backend would. `betas` go in the
   * `anthropic-beta` header (Bedrock carries them in the body's `anthropic_beta`).
   */
  protected relay(path: '/v1/messages' | '/v1/messages/count_tokens', body: Record<string, unknown>, betas: string[], signal: AbortSignal): Promise<Response> {
    return fetch(this.anthropic.url + path, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': 'relayed-by-platform-fake',
        'anthropic-version': '2023-06-01',
        ...(betas.length ? { 'anthropic-beta': betas.join(',') } : {}),
      },
      body: JSON.stringify(body),
      signal,
    });
  }

  private async serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    let reply: PlatformReply;
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const raw = Buffer.concat(chunks);
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
      let body: unknown;
      if (raw.length > 0) {
        try {
          body = JSON.parse(raw.toString('utf8'));
        } catch {
          body = raw.toString('utf8');
        }
      }
      const url = new URL(req.url ?? '/', 'http://fake.invalid');
      const rec: RecordedRequest = { method: req.method ?? 'GET', path: url.pathname, headers, body, at: Date.now() };
      this.requests.push(rec);
      if (this.keepRequests !== undefined && this.requests.length > this.keepRequests) this.requests.splice(0, this.requests.length - this.keepRequests);
      reply = await this.handle(rec, raw, abort.signal);
    } catch (err) {
      reply = this.internalError(`platform fake internal error: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (reply.stream) {
      res.writeHead(reply.status, reply.headers);
      try {
        for await (const bytes of reply.stream) res.write(bytes);
        res.end();
      } catch {
        res.destroy();
      }
      return;
    }
    const payload = JSON.stringify(reply.body);
    res.writeHead(reply.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), ...reply.headers });
    res.end(payload);
  }
}

/** The server-sent events of an SSE body, as they arrive. */
export async function* sseEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<{ event: string; data: string }> {
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffered.indexOf('\n\n')) >= 0) {
      const frame = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      let event = 'message';
      const data: string[] = [];
      for (const line of frame.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
      }
      if (data.length) yield { event, data: data.join('\n') };
    }
  }
}

/** The Anthropic error body `{ type: 'error', error: { type, message } }` of a relayed reply, read. */
export function anthropicError(body: unknown): { type: string; message: string } {
  const e = (body as { error?: { type?: unknown; message?: unknown } } | undefined)?.error;
  return { type: typeof e?.type === 'string' ? e.type : 'api_error', message: typeof e?.message === 'string' ? e.message : 'error' };
}
