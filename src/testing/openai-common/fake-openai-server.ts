/**
 * The HTTP side both OpenAI fakes share: a server on loopback that records every request, checks
 * the bearer key first (as OpenAI does), plays the script one step per accepted request, and writes
 * JSON bodies (with `x-request-id`) or server-sent events, paced, paused at a gate, or cut by an
 * error as a step's `stream` options say. Each protocol's fake says how a request is checked and how
 * a reply looks (../openai-responses, ../openai-chat).
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FakeRoute, FakeStep, RecordedRequest } from '../anthropic/fake-anthropic-script';
import { StreamGates, type FakeStreamOptions } from '../anthropic/fake-anthropic-sse';
import { errorBody, PrefixCache, SCRIPTED_ERRORS, type OpenAIErrorBody } from './fake-openai-plan';

export interface FakeOpenAIOptions {
  /** Played in order, one step per accepted request (say(), callTools(), reply(), fail()). */
  script?: FakeStep[];
  /** Consulted before the queue; undefined = use the queue. */
  route?: FakeRoute;
  /** When set, `Authorization: Bearer <key>` must carry it; otherwise any key is taken (none is refused). */
  apiKey?: string;
  /** Take requests without any key (a local server: Ollama, vLLM). Default false. */
  keyless?: boolean;
  /** Input tokens over this are refused with 400 `context_length_exceeded` (absent: no window). */
  contextWindowTokens?: number;
  /** Know only these model ids (others: 404 `model_not_found`). Absent: every id is known. */
  models?: string[];
  /** How streaming requests receive every step that sets no `stream` of its own (default: 8-char deltas). */
  stream?: FakeStreamOptions;
  /** Default 0 (ephemeral). */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
}

/** One server-sent event; `delta` marks the ones pacing, pauses and mid-stream errors count. */
export interface SseOut {
  event?: string;
  data: unknown;
  delta?: boolean;
}

export interface FakeReply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Sent as an event stream instead of `body`. */
  events?: SseOut[];
  /** The event that ends a stream cut by `errorAfterDeltas`. */
  streamError?: SseOut;
  stream?: FakeStreamOptions;
}

export const json = (status: number, body: unknown, headers?: Record<string, string>): FakeReply => ({ status, body, ...(headers ? { headers } : {}) });
export const invalid = (message: string, param: string | null = null, code: string | null = null): FakeReply => json(400, errorBody(message, 'invalid_request_error', param, code));

export abstract class FakeOpenAIServerBase {
  /** Every request received, rejected ones too, in arrival order. */
  readonly requests: RecordedRequest[] = [];
  private readonly accepted: RecordedRequest[] = [];
  private readonly queue: FakeStep[];
  private route: FakeRoute | undefined;
  private requestSeq = 0;
  protected idSeq = 0;
  private readonly gates = new StreamGates();
  private readonly cache = new PrefixCache();
  private server!: http.Server;
  /** Base URL to give the client, e.g. `http://127.0.0.1:41234/v1` (the SDK's `baseURL` includes /v1). */
  url = '';

  protected constructor(protected readonly opts: FakeOpenAIOptions) {
    this.queue = [...(opts.script ?? [])];
    this.route = opts.route;
  }

  protected async listen(): Promise<void> {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    const host = this.opts.host ?? '127.0.0.1';
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.opts.port ?? 0, host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    const { port } = this.server.address() as AddressInfo;
    this.url = `http://${host.includes(':') ? `[${host}]` : host}:${port}/v1`;
  }

  /** The requests that passed validation (each consumed, or tried to consume, a step). */
  acceptedRequests(): RecordedRequest[] {
    return [...this.accepted];
  }

  enqueue(...steps: FakeStep[]): void {
    this.queue.push(...steps);
  }

  remaining(): number {
    return this.queue.length;
  }

  /** Drops the steps not yet played and plays these instead (`fh fake` on SIGHUP). */
  replaceScript(steps: FakeStep[]): void {
    this.queue.splice(0, this.queue.length, ...steps);
  }

  setRoute(route?: FakeRoute): void {
    this.route = route;
  }

  /** Lets streams paused at `gate` go on; later ones pass it at once. */
  release(gate = 'default'): void {
    this.gates.release(gate);
  }

  /** Resolves once a stream waits at `gate` (or has passed it). */
  paused(gate = 'default'): Promise<void> {
    return this.gates.paused(gate);
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  /** The protocol's endpoints, after authentication. */
  protected abstract dispatch(rec: RecordedRequest): FakeReply;

  /** The next step for an accepted request (the route's, else the queue's), recorded as accepted. */
  protected nextStep(rec: RecordedRequest): Exclude<FakeStep, { kind: 'error' }> | FakeReply {
    this.accepted.push(rec);
    const step = this.route?.(rec) ?? this.queue.shift();
    if (!step) return json(500, errorBody('fake-openai: the script has no step left for this request', 'server_error'));
    if (step.kind !== 'error') return step;
    const e = SCRIPTED_ERRORS[step.status];
    const headers: Record<string, string> = {};
    if (step.retryAfterSeconds !== undefined) headers['retry-after'] = String(step.retryAfterSeconds);
    if (step.retryAfterMs !== undefined) headers['retry-after-ms'] = String(step.retryAfterMs);
    return json(e.status, errorBody(step.message ?? e.message, e.type, null, e.code), headers);
  }

  /** The refusal of a request over the window, in each protocol's words; undefined when it fits. */
  protected modelRefusal(model: string): FakeReply | undefined {
    if (this.opts.models && !this.opts.models.includes(model)) {
      return json(404, errorBody(`The model \`${model}\` does not exist or you do not have access to it.`, 'invalid_request_error', null, 'model_not_found'));
    }
    return undefined;
  }

  /** The input tokens OpenAI's automatic prompt cache would serve this request from (at most `input`). */
  protected cachedTokens(head: unknown, items: unknown[], input: number): number {
    return Math.min(input, this.cache.read(head, items));
  }

  protected streamOptions(step?: FakeStreamOptions): FakeStreamOptions {
    return step ?? this.opts.stream ?? {};
  }

  private authenticate(rec: RecordedRequest): FakeReply | undefined {
    if (this.opts.keyless) return undefined;
    const key = /^Bearer\s+(.+)$/i.exec(rec.headers['authorization'] ?? '')?.[1];
    if (!key) {
      return json(
        401,
        errorBody(
          "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the API from your browser and are prompted for a username and password. You can obtain an API key from https://platform.openai.com/account/api-keys.",
        ),
      );
    }
    if (this.opts.apiKey !== undefined && key !== this.opts.apiKey) {
      const shown = key.length > 4 ? `${key.slice(0, 3)}*****${key.slice(-4)}` : key;
      return json(401, errorBody(`Incorrect API key provided: ${shown}. You can find your API key at https://platform.openai.com/account/api-keys.`, 'invalid_request_error', null, 'invalid_api_key'));
    }
    return undefined;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const requestId = `req_fake${String(++this.requestSeq).padStart(8, '0')}`;
    let reply: FakeReply;
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const raw = Buffer.concat(chunks).toString('utf8');
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
      let body: any;
      let unparseable = false;
      if (raw.length > 0) {
        try {
          body = JSON.parse(raw);
        } catch {
          body = raw;
          unparseable = true;
        }
      }
      const rec: RecordedRequest = { method: req.method ?? 'GET', path: new URL(req.url ?? '/', 'http://fake.invalid').pathname, headers, body, at: Date.now() };
      this.requests.push(rec);
      reply =
        this.authenticate(rec) ??
        (unparseable
          ? invalid("We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.")
          : this.dispatch(rec));
    } catch (err) {
      reply = json(500, errorBody(`fake-openai internal error: ${err instanceof Error ? err.message : String(err)}`, 'server_error'));
    }
    const headers = { 'x-request-id': requestId, 'x-fake-openai': 'scripted', 'openai-processing-ms': '1', ...reply.headers };
    if (reply.events && reply.status === 200) {
      await this.writeEvents(res, reply, headers).catch(() => res.destroy());
      return;
    }
    const payload = JSON.stringify(reply.body ?? {});
    res.writeHead(reply.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), ...headers });
    res.end(payload);
  }

  private async writeEvents(res: http.ServerResponse, reply: FakeReply, headers: Record<string, string>): Promise<void> {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', ...headers });
    const opts = reply.stream ?? {};
    let deltas = 0;
    for (const e of reply.events!) {
      if (res.destroyed) return; // the client went away (an aborted call, a killed worker)
      if (e.delta) {
        if (opts.errorAfterDeltas !== undefined && deltas >= opts.errorAfterDeltas && reply.streamError) {
          res.write(sse(reply.streamError));
          res.end();
          return;
        }
        if (opts.pauseAfterDeltas !== undefined && deltas === opts.pauseAfterDeltas) await this.gates.wait(opts.gate ?? 'default');
        if (deltas > 0 && opts.delayMs) await new Promise((r) => setTimeout(r, opts.delayMs));
        deltas++;
      }
      res.write(sse(e));
    }
    res.end();
  }
}

function sse(e: SseOut): string {
  const data = typeof e.data === 'string' ? e.data : JSON.stringify(e.data);
  return `${e.event ? `event: ${e.event}\n` : ''}data: ${data}\n\n`;
}

export type { OpenAIErrorBody };

/** `text` cut into pieces of `size` characters (at least one piece, '' for none). */
export function pieces(text: string, size: number): string[] {
  if (!text) return [];
  const out: string[] = [];
  for (let i = 0; i < text.length; i += Math.max(1, size)) out.push(text.slice(i, i + Math.max(1, size)));
  return out;
}
