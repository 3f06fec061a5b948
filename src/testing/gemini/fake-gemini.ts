/**
 * A scripted, protocol-faithful fake of Google's Gemini API (generativelanguage, v1beta), for
 * `@google/genai` clients (`httpOptions: { baseUrl: fake.url }`). It is NOT a model: it plays the
 * steps a test scripts, in the Anthropic fake's language (`say`, `callTools`, `reply`, `think`,
 * `fail`), and says so in the `x-fake-gemini: scripted` header. What it reproduces is the protocol:
 *
 * - `POST /v1beta/models/{model}:generateContent` and `:streamGenerateContent?alt=sse` (and the same
 *   under `/v1/`, which `@google/genai` 3 asks for) (`data:`
 *   events: text and thoughts in pieces, each function call whole in one chunk with its thought
 *   signature, usage on every chunk, the finish reason and output counts on the last);
 * - `POST …:countTokens` (`contents`, or a whole `generateContentRequest`), `GET /v1beta/models/{model}`
 *   and `GET /v1beta/models`;
 * - the key (`x-goog-api-key` or `?key=`: missing is 403 PERMISSION_DENIED, wrong is 400
 *   API_KEY_INVALID), what the API refuses (./fake-gemini-validate) and the window: a request over
 *   it is Gemini's 400 "The input token count (N) exceeds the maximum number of tokens allowed (M).";
 * - errors in Google's shape `{ error: { code, message, status, details? } }` (a 429 carries RetryInfo);
 * - implicit caching: a request that repeats an earlier one's contents reads that prefix
 *   (`cachedContentTokenCount`) once it is `implicitCacheMinTokens` long.
 *
 * ```ts
 * const fake = await FakeGeminiServer.start({ script: [callTools({ name: 'read', input: { path: 'a' } }), say('done')], apiKey: 'k' });
 * const ai = new GoogleGenAI({ apiKey: 'k', httpOptions: { baseUrl: fake.url } });
 * ```
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FakeErrorStatus, FakeRoute, FakeStep, RecordedRequest } from '../anthropic/fake-anthropic-script';
import { StreamGates, type FakeStreamOptions } from '../anthropic/fake-anthropic-sse';
import { chunkParts, partsFor, writeGeminiStream, type BuiltReply, type FakeGeminiResponse } from './fake-gemini-reply';
import { countGeminiTokens, validateGenerateContent } from './fake-gemini-validate';

export { countGeminiTokens, signFunctionCall, validateGenerateContent, type ValidateGeminiOptions } from './fake-gemini-validate';
export type { FakeGeminiPart, FakeGeminiResponse } from './fake-gemini-reply';

export interface FakeGeminiModel {
  inputTokenLimit?: number;
  outputTokenLimit?: number;
  displayName?: string;
}

export interface FakeGeminiOptions {
  /** Played in order, one step per accepted generateContent / streamGenerateContent. */
  script?: FakeStep[];
  /** Consulted before the queue; undefined = use the queue. */
  route?: FakeRoute;
  /** When set, the key must equal it. A key is always required, as by the real API. */
  apiKey?: string;
  /** The input-token window of every model not in `models` (default 1,048,576, Gemini 2.5's). */
  contextWindowTokens?: number;
  models?: Record<string, FakeGeminiModel>;
  /** Know only the models in `models` (others are 404 NOT_FOUND). Default false. */
  onlyListedModels?: boolean;
  /** How streams are sent when a step sets none (default: 8-character pieces, no delay). */
  stream?: FakeStreamOptions;
  /** Refuse a current-turn function call sent back without its signature (Gemini 3). Default true. */
  requireThoughtSignatures?: boolean;
  /** Number each function call (`functionCall.id`, as Gemini 3 does). Default true; false: calls carry no id (Gemini 2.5). */
  functionCallIds?: boolean;
  /** The shortest prefix implicit caching reads (default 1024, Gemini 2.5 Flash's; 0 turns it off). */
  implicitCacheMinTokens?: number;
  port?: number;
  host?: string;
}

const DEFAULT_WINDOW = 1_048_576;
const DEFAULT_OUTPUT_LIMIT = 65_536;

const ERRORS: Record<FakeErrorStatus, { code: number; status: string; message: string }> = {
  400: { code: 400, status: 'INVALID_ARGUMENT', message: 'Request contains an invalid argument. (scripted)' },
  401: { code: 401, status: 'UNAUTHENTICATED', message: 'Request had invalid authentication credentials.' },
  403: { code: 403, status: 'PERMISSION_DENIED', message: 'The caller does not have permission' },
  404: { code: 404, status: 'NOT_FOUND', message: 'Requested entity was not found.' },
  413: { code: 400, status: 'INVALID_ARGUMENT', message: 'Request payload size exceeds the limit: 20971520 bytes.' },
  429: { code: 429, status: 'RESOURCE_EXHAUSTED', message: 'You exceeded your current quota, please check your plan and billing details. (scripted)' },
  500: { code: 500, status: 'INTERNAL', message: 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting' },
  529: { code: 503, status: 'UNAVAILABLE', message: 'The model is overloaded. Please try again later.' },
};

interface Reply {
  status: number;
  body: unknown;
  stream?: { chunks: FakeGeminiResponse[]; options: FakeStreamOptions };
}

export class FakeGeminiServer {
  /** Every request, refused ones too, in arrival order. */
  readonly requests: RecordedRequest[] = [];
  private readonly accepted: RecordedRequest[] = [];
  private readonly queue: FakeStep[];
  private route: FakeRoute | undefined;
  private readonly gates = new StreamGates();
  private readonly cache: Array<{ key: string; contents: string[] }> = [];
  private seq = 0;
  private callSeq = 0;

  private constructor(
    private readonly server: http.Server,
    /** The client's base URL (`httpOptions.baseUrl`), e.g. `http://127.0.0.1:41234`. */
    readonly url: string,
    private readonly opts: FakeGeminiOptions,
  ) {
    this.queue = [...(opts.script ?? [])];
    this.route = opts.route;
  }

  static async start(opts: FakeGeminiOptions = {}): Promise<FakeGeminiServer> {
    let instance: FakeGeminiServer | undefined;
    const server = http.createServer((req, res) => void instance!.handle(req, res));
    const host = opts.host ?? '127.0.0.1';
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.port ?? 0, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const { port } = server.address() as AddressInfo;
    instance = new FakeGeminiServer(server, `http://${host.includes(':') ? `[${host}]` : host}:${port}`, opts);
    return instance;
  }

  /** The generate requests that passed validation (each played, or tried to play, a step). */
  generateRequests(): RecordedRequest[] {
    return [...this.accepted];
  }

  enqueue(...steps: FakeStep[]): void {
    this.queue.push(...steps);
  }

  remaining(): number {
    return this.queue.length;
  }

  replaceScript(steps: FakeStep[]): void {
    this.queue.splice(0, this.queue.length, ...steps);
  }

  setRoute(route?: FakeRoute): void {
    this.route = route;
  }

  /** Lets streams paused at `gate` go on. */
  release(gate = 'default'): void {
    this.gates.release(gate);
  }

  /** Resolves once a stream waits at `gate`. */
  paused(gate = 'default'): Promise<void> {
    return this.gates.paused(gate);
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    let reply: Reply;
    const url = new URL(req.url ?? '/', 'http://fake.invalid');
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
      const rec: RecordedRequest = { method: req.method ?? 'GET', path: url.pathname, headers, body, at: Date.now() };
      this.requests.push(rec);
      reply = unparseable ? googleError(400, 'INVALID_ARGUMENT', `Invalid JSON payload received. Unexpected token.`) : this.dispatch(rec, url);
    } catch (err) {
      reply = googleError(500, 'INTERNAL', `fake-gemini internal error: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (reply.stream && url.searchParams.get('alt') === 'sse') {
      await writeGeminiStream(res, reply.stream, { 'x-fake-gemini': 'scripted' }, this.gates).catch(() => res.destroy());
      return;
    }
    // Without alt=sse the stream endpoint answers one JSON array of the chunks, as Gemini does.
    const payload = JSON.stringify(reply.stream ? reply.stream.chunks : reply.body);
    res.writeHead(reply.status, { 'content-type': 'application/json; charset=UTF-8', 'content-length': Buffer.byteLength(payload), 'x-fake-gemini': 'scripted' });
    res.end(payload);
  }

  private dispatch(rec: RecordedRequest, url: URL): Reply {
    const key = rec.headers['x-goog-api-key'] ?? url.searchParams.get('key') ?? undefined;
    if (key === undefined || key === '') {
      return googleError(403, 'PERMISSION_DENIED', "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.");
    }
    if (this.opts.apiKey !== undefined && key !== this.opts.apiKey) {
      return googleError(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', [
        { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com', metadata: { service: 'generativelanguage.googleapis.com' } },
      ]);
    }
    const m = /^\/v1(?:beta)?\/models(?:\/([^/:]+)(?::([A-Za-z]+))?)?$/.exec(rec.path);
    if (!m) return googleError(404, 'NOT_FOUND', `The requested URL ${rec.path} was not found on this server.`);
    const model = m[1] ? decodeURIComponent(m[1]) : undefined;
    const method = m[2];
    if (rec.method === 'GET' && model === undefined) {
      return { status: 200, body: { models: Object.keys(this.opts.models ?? {}).map((id) => this.modelInfo(id)) } };
    }
    if (model === undefined) return googleError(404, 'NOT_FOUND', `The requested URL ${rec.path} was not found on this server.`);
    if (!this.knows(model)) {
      return googleError(404, 'NOT_FOUND', `models/${model} is not found for API version v1beta, or is not supported for ${method ?? 'get'}. Call ListModels to see the list of available models and their supported methods.`);
    }
    if (rec.method === 'GET' && method === undefined) return { status: 200, body: this.modelInfo(model) };
    if (rec.method === 'POST' && (method === 'generateContent' || method === 'streamGenerateContent')) return this.generate(rec, model, method === 'streamGenerateContent');
    if (rec.method === 'POST' && method === 'countTokens') return this.countTokens(rec);
    return googleError(404, 'NOT_FOUND', `The requested URL ${rec.path} was not found on this server.`);
  }

  private window(model: string): number {
    return this.opts.models?.[model]?.inputTokenLimit ?? this.opts.contextWindowTokens ?? DEFAULT_WINDOW;
  }

  private generate(rec: RecordedRequest, model: string, streamed: boolean): Reply {
    const body = rec.body;
    const invalid = validateGenerateContent(body, { requireThoughtSignatures: this.opts.requireThoughtSignatures });
    if (invalid) return googleError(400, 'INVALID_ARGUMENT', invalid);
    const input = countGeminiTokens(body);
    rec.inputTokens = input;
    const window = this.window(model);
    if (input > window) return googleError(400, 'INVALID_ARGUMENT', `The input token count (${input}) exceeds the maximum number of tokens allowed (${window}).`);
    this.accepted.push(rec);
    const cached = this.cachedTokens(body);
    const step = this.route?.(rec) ?? this.queue.shift();
    if (!step) return googleError(400, 'INVALID_ARGUMENT', `fake-gemini: script exhausted at request #${this.accepted.length} (scripted server, not a model)`);
    if (step.kind === 'error') return stepError(step);
    const includeThoughts = body.generationConfig?.thinkingConfig?.includeThoughts === true;
    const built = partsFor(step, includeThoughts, this.opts.functionCallIds === false ? undefined : () => `fake_call_${++this.callSeq}`);
    const id = `fake_resp_${++this.seq}`;
    const usage = (final: boolean) => usageMetadata(built, input, cached, final);
    const response = (parts: BuiltReply['parts'], final: boolean): FakeGeminiResponse => ({
      candidates: [{ content: { parts, role: 'model' }, ...(final ? { finishReason: built.finishReason } : {}), index: 0 }],
      usageMetadata: usage(final),
      modelVersion: model,
      responseId: id,
    });
    if (!streamed) return { status: 200, body: response(built.parts, true) };
    const options = { chunkChars: 8, ...this.opts.stream, ...step.stream };
    const pieces = chunkParts(built.parts, options.chunkChars ?? 8);
    const chunks = pieces.length === 0 ? [response([], true)] : pieces.map((parts, i) => response(parts, i === pieces.length - 1));
    return { status: 200, body: undefined, stream: { chunks, options } };
  }

  private countTokens(rec: RecordedRequest): Reply {
    const body = rec.body ?? {};
    if (body.contents !== undefined && body.generateContentRequest !== undefined) {
      return googleError(400, 'INVALID_ARGUMENT', 'contents and generate_content_request are mutually exclusive: send one of them.');
    }
    const request = body.generateContentRequest ?? { contents: body.contents };
    const invalid = validateGenerateContent(request, { requireThoughtSignatures: false });
    if (invalid) return googleError(400, 'INVALID_ARGUMENT', invalid);
    const total = countGeminiTokens(request);
    rec.inputTokens = total;
    return { status: 200, body: { totalTokens: total, promptTokensDetails: [{ modality: 'TEXT', tokenCount: total }] } };
  }

  /** Implicit caching: the longest run of contents an earlier request (same system and tools) began with. */
  private cachedTokens(body: any): number {
    const min = this.opts.implicitCacheMinTokens ?? 1024;
    const key = JSON.stringify([body.systemInstruction ?? null, body.tools ?? null]);
    const contents = (body.contents as unknown[]).map((c) => JSON.stringify(c));
    let best = 0;
    for (const earlier of this.cache) {
      if (earlier.key !== key) continue;
      let n = 0;
      while (n < earlier.contents.length && n < contents.length && earlier.contents[n] === contents[n]) n++;
      best = Math.max(best, n);
    }
    this.cache.push({ key, contents });
    if (this.cache.length > 32) this.cache.shift();
    if (min <= 0 || best === 0) return 0;
    const tokens = countGeminiTokens({ systemInstruction: body.systemInstruction, tools: body.tools, contents: body.contents.slice(0, best) });
    return tokens >= min ? tokens : 0;
  }

  private knows(model: string): boolean {
    return !this.opts.onlyListedModels || Object.prototype.hasOwnProperty.call(this.opts.models ?? {}, model);
  }

  private modelInfo(id: string): Record<string, unknown> {
    const m = this.opts.models?.[id];
    return {
      name: `models/${id}`,
      version: '001',
      displayName: m?.displayName ?? `Scripted fake (${id})`,
      description: 'A scripted fake of the Gemini API (not a model).',
      inputTokenLimit: this.window(id),
      outputTokenLimit: m?.outputTokenLimit ?? DEFAULT_OUTPUT_LIMIT,
      supportedGenerationMethods: ['generateContent', 'countTokens'],
      temperature: 1,
      topP: 0.95,
      topK: 64,
      maxTemperature: 2,
      thinking: true,
    };
  }
}

function usageMetadata(built: BuiltReply, input: number, cached: number, final: boolean): Record<string, unknown> {
  const prompt = built.usage?.input_tokens ?? input;
  const base = { promptTokenCount: prompt, ...(cached > 0 ? { cachedContentTokenCount: cached } : {}), promptTokensDetails: [{ modality: 'TEXT', tokenCount: prompt }] };
  if (!final) return { ...base, totalTokenCount: prompt };
  const candidates = built.usage?.output_tokens ?? built.candidatesTokens;
  const thoughts = built.thoughtsTokens;
  return { ...base, candidatesTokenCount: candidates, ...(thoughts > 0 ? { thoughtsTokenCount: thoughts } : {}), totalTokenCount: prompt + candidates + thoughts };
}

function stepError(step: Extract<FakeStep, { kind: 'error' }>): Reply {
  const spec = ERRORS[step.status];
  const delay = step.retryAfterMs !== undefined ? step.retryAfterMs / 1000 : step.retryAfterSeconds;
  const details = delay !== undefined ? [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${delay}s` }] : undefined;
  return googleError(spec.code, spec.status, step.message ?? spec.message, details);
}

function googleError(code: number, status: string, message: string, details?: unknown[]): Reply {
  return { status: code, body: { error: { code, message, status, ...(details ? { details } : {}) } } };
}
