/**
 * A scripted, protocol-faithful fake of the Anthropic Messages API.
 *
 * It is NOT a model: every reply comes from a script (or a `route` callback) written by the test, and
 * every response says so in the `x-fake-anthropic: scripted` header. What it does reproduce faithfully is
 * the protocol around the model: request validation and the real error shapes/messages, the
 * "prompt is too long" rejection, rate-limit/overload/server errors, response bodies that satisfy the
 * SDK's `Message` / `ModelInfo` types, and the models endpoints. The real `@anthropic-ai/sdk` client
 * talks to it over loopback HTTP via `baseURL`.
 *
 * ## Test API
 *
 * ```ts
 * const fake = await FakeAnthropicServer.start({ script: [say('hi')], contextWindow: 5000 });
 * // client: new Anthropic({ apiKey: 'x', baseURL: fake.url })
 * fake.enqueue(callTools({ name: 'read', input: { path: 'a' } }), say('done'));
 * fake.setRoute((req) => (isSummaryRequest(req) ? say('summary') : undefined)); // consulted before the queue
 * fake.requests;          // every request, rejected ones too;  fake.messageRequests(): the accepted ones
 * fake.remaining();       // steps not yet played
 * await fake.stop();
 * ```
 *
 * Steps (one per accepted POST /v1/messages):
 * - `say(text, { stopReason?, usage? })`: one text block. `stopReason` may be any the API returns
 *   except `tool_use` (`end_turn` default, `max_tokens`, `stop_sequence`, `pause_turn`, `refusal`,
 *   `model_context_window_exceeded`). `say('\n\n')` is a whitespace-only reply, as real models send.
 * - `callTools(...calls)`: tool_use blocks, `stop_reason: "tool_use"`.
 * - `reply({ content, stopReason?, usage? })`: any reply. `content` items are strings (text blocks, sent
 *   verbatim, even empty or whitespace) or tool calls `{ name, input?, id? }` (tool_use blocks;
 *   `input` may be partial, e.g. a call cut off by `stopReason: 'max_tokens'`). `content: []` is an
 *   empty reply. `stopReason` defaults to `tool_use` when there is a call, else `end_turn`.
 * - `fail(status, { message?, retryAfterSeconds?, retryAfterMs? })`: an HTTP error with the real body.
 *
 * A request with `stream: true` gets the step as server-sent events, exactly as the API streams
 * (see fake-anthropic-sse.ts); a step's `stream: { chunkChars, delayMs, pauseAfterDeltas, gate,
 * errorAfterDeltas, errorType }` paces it, pauses it until `fake.release(gate)`, or ends it with an
 * `error` event mid-stream (overloaded_error by default). An error step is an HTTP error either way.
 *
 * Requests are checked by {@link validateMessagesRequest} (exported: tests can hold any conversation to
 * the same rules). A violation is a 400 `invalid_request_error` with the real API's message, and no step
 * is consumed. The window check: input tokens (see {@link countFakeTokens}) over the model's window are
 * rejected with "prompt is too long"; with `maxTokensMustFit` (older models) input + `max_tokens` over
 * the window is rejected too, with the real "input length and `max_tokens` exceed context limit"
 * message. Newer models instead accept the request and stop at the window
 * (`stop_reason: "model_context_window_exceeded"`), which a script can play.
 *
 * No dependencies beyond node:http. The SDK is imported for types only (erased at runtime).
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type Anthropic from '@anthropic-ai/sdk';
import { betasOf, COMPACTION_BETA } from './fake-anthropic-betas';
import { isObj } from './fake-anthropic-blocks';
import { defaultMinCacheableTokens, PromptCache } from './fake-anthropic-cache';
import { checkCapabilities, modelCapabilities } from './fake-anthropic-capabilities';
import { checkCompactionBlocks, compactEditOf, dropBeforeCompaction } from './fake-anthropic-compaction';
import { applyContextEdits, COMPACT_DEFAULT_TRIGGER, type AppliedEdit } from './fake-anthropic-context-edits';
import { sealRedactedThinking, signCompaction, signThinking } from './fake-anthropic-signatures';
import { thinkingOn } from './fake-anthropic-thinking';
import { StreamGates, streamDurationMs, writeEventStream, type FakeStreamOptions } from './fake-anthropic-sse';

import {
  isThinkingItem,
  type FakeAnthropicOptions,
  type FakeErrorStatus,
  type FakeRedactedThinking,
  type FakeRoute,
  type FakeStep,
  type FakeThinking,
  type FakeToolCall,
  type FakeUsage,
  type RecordedRequest,
} from './fake-anthropic-script';
import { countFakeTokens, countOutputTokens, DEFAULT_MAX_OUTPUT_TOKENS, validateMessagesRequest } from './fake-anthropic-validate';

export * from './fake-anthropic-script';
export { countFakeTextTokens, countFakeTokens, validateMessagesRequest, type ValidateMessagesOptions } from './fake-anthropic-validate';
export { sseEventsFor, type FakeStreamOptions, type SseEvent } from './fake-anthropic-sse';
export { COMPACTION_BETA, CONTEXT_MANAGEMENT_BETA } from './fake-anthropic-betas';
export { defaultMinCacheableTokens } from './fake-anthropic-cache';
export type { FakeCapabilities } from './fake-anthropic-capabilities';
export { CLEARED_TOOL_RESULT } from './fake-anthropic-context-edits';
export { signThinking } from './fake-anthropic-signatures';

type ContentBlock = Anthropic.ContentBlock;
type Message = Anthropic.Message;
type StopReason = Anthropic.StopReason;
type ModelInfo = Anthropic.ModelInfo;

// ---------------------------------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------------------------------

const DEFAULT_CONTEXT_WINDOW = 200_000;
/** The real API's request size limit for the Messages endpoint. */
const MAX_BODY_BYTES = 32 * 1024 * 1024;

/** Error `type` and default message for each status a step may produce (the real API's values). */
const ERRORS: Record<FakeErrorStatus, { type: string; message: string }> = {
  400: { type: 'invalid_request_error', message: 'Invalid request (scripted)' },
  401: { type: 'authentication_error', message: 'invalid x-api-key' },
  403: { type: 'permission_error', message: 'Your API key does not have permission to use the specified resource.' },
  404: { type: 'not_found_error', message: 'Not Found' },
  413: { type: 'request_too_large', message: 'Request exceeds the maximum allowed number of bytes.' },
  429: { type: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit (scripted)' },
  500: { type: 'api_error', message: 'Internal server error' },
  529: { type: 'overloaded_error', message: 'Overloaded' },
};

interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** A message sent as an event stream (the request asked for `stream: true`). */
  stream?: FakeStreamOptions;
  /** A non-streaming reply of a paced step: sent after the time its stream would take. */
  pace?: FakeStreamOptions;
}

export class FakeAnthropicServer {
  /** Every request received, including rejected ones, in arrival order. */
  readonly requests: RecordedRequest[] = [];
  private readonly accepted: RecordedRequest[] = [];
  /** Accepted requests so far, kept or not (a step's number in the fake's own errors). */
  private acceptedCount = 0;
  private readonly queue: FakeStep[];
  private route: FakeRoute | undefined;
  private requestSeq = 0;
  private messageSeq = 0;
  private toolUseSeq = 0;
  private readonly cache = new PromptCache();
  private readonly gates = new StreamGates();
  /** Added to Date.now(): the fake's clock, which tests move with {@link advanceTime}. */
  private clockOffsetMs = 0;

  private constructor(
    private readonly server: http.Server,
    /** Base URL to pass as the client's `baseURL`, e.g. `http://127.0.0.1:41234`. */
    readonly url: string,
    private readonly opts: FakeAnthropicOptions,
  ) {
    this.queue = [...(opts.script ?? [])];
    this.route = opts.route;
  }

  static async start(opts: FakeAnthropicOptions = {}): Promise<FakeAnthropicServer> {
    const keep = opts.keepRequests;
    if (keep !== undefined && !(Number.isInteger(keep) && keep >= 0)) {
      throw new RangeError(`FakeAnthropicServer: keepRequests must be a non-negative integer, got ${String(keep)}`);
    }
    let instance: FakeAnthropicServer | undefined;
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
    const urlHost = host.includes(':') ? `[${host}]` : host;
    instance = new FakeAnthropicServer(server, `http://${urlHost}:${port}`, opts);
    return instance;
  }

  /** `rec` added to `list`, of which only the newest `keepRequests` stay. */
  private kept(list: RecordedRequest[], rec: RecordedRequest): void {
    list.push(rec);
    const keep = this.opts.keepRequests;
    if (keep !== undefined && list.length > keep) list.splice(0, list.length - keep);
  }

  /** Only the POST /v1/messages requests that passed validation (i.e. that consumed, or tried to consume, a step). */
  messageRequests(): RecordedRequest[] {
    return [...this.accepted];
  }

  enqueue(...steps: FakeStep[]): void {
    this.queue.push(...steps);
  }

  remaining(): number {
    return this.queue.length;
  }

  /** Drops the steps not yet played and plays these instead (`fh fake` on SIGHUP: the script read again). */
  replaceScript(steps: FakeStep[]): void {
    this.queue.splice(0, this.queue.length, ...steps);
  }

  setRoute(route?: FakeRoute): void {
    this.route = route;
  }

  /** The fake's clock (Date.now() plus every {@link advanceTime}); prompt-cache lifetimes run on it. */
  now(): number {
    return Date.now() + this.clockOffsetMs;
  }

  /** Moves the fake's clock forward, e.g. past a cache entry's 5-minute lifetime. */
  advanceTime(ms: number): void {
    if (!(ms >= 0)) throw new RangeError(`advanceTime: ms must be a non-negative number, got ${ms}`);
    this.clockOffsetMs += ms;
  }

  /** Lets streams paused at `gate` (FakeStreamOptions.pauseAfterDeltas) go on; later ones pass it at once. */
  release(gate = 'default'): void {
    this.gates.release(gate);
  }

  /** Resolves once a stream waits at `gate` (or has passed it). */
  paused(gate = 'default'): Promise<void> {
    return this.gates.paused(gate);
  }

  /** Forgets every cached prompt prefix. */
  clearCache(): void {
    this.cache.clear();
  }

  /** How many cached prefixes are alive now. */
  cacheEntries(): number {
    return this.cache.size(this.now());
  }

  /** The exact function the server uses for `input_tokens` and the prompt-too-long check. */
  countTokens(body: { system?: unknown; tools?: unknown; messages: unknown }): number {
    return countFakeTokens(body);
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve()); // resolves (with an error we ignore) if already closed
      // The SDK's fetch keeps connections alive; without this close() would wait for them to idle out.
      this.server.closeAllConnections();
    });
  }

  // -------------------------------------------------------------------------------------------------

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    let reply: Reply;
    const requestId = `req_fake_${String(++this.requestSeq).padStart(6, '0')}`;
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const raw = Buffer.concat(chunks);

      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) {
        if (v !== undefined) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
      }
      let body: any;
      let unparseable = false;
      if (raw.length > 0) {
        const text = raw.toString('utf8');
        try {
          body = JSON.parse(text);
        } catch {
          body = text;
          unparseable = true;
        }
      }
      const rec: RecordedRequest = {
        method: req.method ?? 'GET',
        path: new URL(req.url ?? '/', 'http://fake.invalid').pathname,
        headers,
        body,
        at: Date.now(),
      };
      if (isObj(body) && Array.isArray(body.messages)) rec.inputTokens = countFakeTokens(body as { messages: unknown });
      this.kept(this.requests, rec);

      reply =
        raw.length > MAX_BODY_BYTES
          ? errorReply(413, ERRORS[413].message)
          : unparseable
            ? errorReply(400, 'There was an error parsing the body of your request. Please check that the body is valid JSON.')
            : this.dispatch(rec);
    } catch (err) {
      // A throwing `route` callback, for instance: surface it as a 500 rather than hanging the client.
      reply = errorReply(500, `fake-anthropic internal error: ${err instanceof Error ? err.message : String(err)}`);
    }

    if (reply.stream && reply.status === 200) {
      const headers = { 'request-id': requestId, 'x-fake-anthropic': 'scripted', ...reply.headers };
      await writeEventStream(res, reply.body as Message, headers, reply.stream, this.gates).catch(() => res.destroy());
      return;
    }
    // A paced step takes as long without streaming as its stream would (the model generates either way).
    if (reply.pace?.delayMs && reply.status === 200) await new Promise((r) => setTimeout(r, streamDurationMs(reply.body as Message, reply.pace!)));
    const payload = JSON.stringify(withRequestId(reply.body, requestId));
    res.writeHead(reply.status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(payload),
      'request-id': requestId,
      'x-fake-anthropic': 'scripted',
      ...reply.headers,
    });
    res.end(payload);
  }

  private dispatch(rec: RecordedRequest): Reply {
    // Authentication comes first, for every endpoint, as with the real API.
    const bearer = /^Bearer\s+(.+)$/i.exec(rec.headers['authorization'] ?? '')?.[1];
    const key = rec.headers['x-api-key'] ?? bearer;
    if (key === undefined) return errorReply(401, 'x-api-key header is required');
    if (this.opts.apiKey !== undefined && key !== this.opts.apiKey) return errorReply(401, 'invalid x-api-key');
    if (rec.headers['anthropic-version'] === undefined) return errorReply(400, 'anthropic-version: header is required');

    const { method, path } = rec;
    if (method === 'POST' && path === '/v1/messages') return this.createMessage(rec);
    if (method === 'POST' && path === '/v1/messages/count_tokens') return this.countTokensEndpoint(rec);
    if (method === 'GET' && path === '/v1/models') return this.listModels();
    const m = /^\/v1\/models\/([^/]+)$/.exec(path);
    if (method === 'GET' && m) {
      const id = decodeURIComponent(m[1]);
      if (!this.knows(id)) return errorReply(404, `model: ${id}`);
      return { status: 200, body: this.modelInfo(id) };
    }
    return errorReply(404, 'Not Found');
  }

  /** Validation shared by messages and count_tokens (the same fields are accepted and rejected by both). */
  private validate(rec: RecordedRequest, generation: boolean): Reply | undefined {
    const body = rec.body;
    const model: unknown = isObj(body) ? body.model : undefined;
    const betas = betasOf(rec.headers);
    const spec = typeof model === 'string' ? this.opts.models?.[model] : undefined;
    const invalid = validateMessagesRequest(body, {
      generation,
      maxOutputTokens: spec?.maxTokens || DEFAULT_MAX_OUTPUT_TOKENS,
      betas,
    });
    if (invalid) return errorReply(400, invalid);
    const compaction = betas.includes(COMPACTION_BETA) ? checkCompactionBlocks(body) : undefined;
    if (compaction) return errorReply(400, compaction.message, {}, { error_code: compaction.errorCode });
    if (!this.knows(body.model)) return errorReply(404, `model: ${body.model}`);
    if (spec?.capabilities) {
      const unsupported = checkCapabilities(body, modelCapabilities(spec.capabilities));
      if (unsupported) return errorReply(400, unsupported);
    }
    return undefined;
  }

  /**
   * The prompt the model would see: after a compaction block only what follows it, with the
   * context-management edits applied (the client's history is not changed), counted by the fake tokenizer.
   */
  private effectivePrompt(body: Record<string, any>): { prompt: Record<string, any>; applied: AppliedEdit[]; original: number } {
    const compacted = dropBeforeCompaction(body);
    const original = countFakeTokens(compacted as { messages: unknown });
    const { body: prompt, applied } = applyContextEdits(compacted, (b) => countFakeTokens(b as { messages: unknown }));
    return { prompt, applied, original };
  }

  private createMessage(rec: RecordedRequest): Reply {
    const rejected = this.validate(rec, true);
    if (rejected) return rejected;
    const body = rec.body;

    const { prompt, applied } = this.effectivePrompt(body);
    const inputTokens = countFakeTokens(prompt as { messages: unknown });
    rec.inputTokens = inputTokens;
    const modelSpec = this.opts.models?.[body.model];
    const window = modelSpec?.maxInputTokens ?? this.opts.contextWindow ?? DEFAULT_CONTEXT_WINDOW;
    if (inputTokens > window) return errorReply(400, `prompt is too long: ${inputTokens} tokens > ${window} maximum`);
    if ((modelSpec?.maxTokensMustFit ?? this.opts.maxTokensMustFit) && inputTokens + body.max_tokens > window) {
      return errorReply(
        400,
        `input length and \`max_tokens\` exceed context limit: ${inputTokens} + ${body.max_tokens} > ${window}, decrease input length or \`max_tokens\` and try again`,
      );
    }

    const contextManagement = body.context_management ? { context_management: { applied_edits: applied } } : {};

    // Server-side compaction (compact_20260112): past the trigger the server summarises the conversation
    // and returns a `compaction` block first (SDK BetaCompactionBlock); with pause_after_compaction the
    // reply is that block alone with stop_reason "compaction" (SDK BetaStopReason), and no step is played.
    const compact = compactEditOf(body);
    const compactTrigger = compact?.trigger?.value ?? COMPACT_DEFAULT_TRIGGER;
    let compactionBlock: ContentBlock | undefined;
    let promptAfterCompaction = prompt;
    if (compact && inputTokens >= compactTrigger) {
      const summary = this.opts.compactionSummary?.(rec) ?? `Summary of the conversation so far (${body.messages.length} messages, scripted by the fake).`;
      compactionBlock = { type: 'compaction', content: summary, encrypted_content: null, signature: signCompaction(summary) } as unknown as ContentBlock;
      promptAfterCompaction = { ...prompt, messages: [{ role: 'user', content: [{ type: 'text', text: summary }] }] };
    }

    this.kept(this.accepted, rec);
    this.acceptedCount++;
    const modelMin = modelSpec?.minCacheableTokens ?? defaultMinCacheableTokens(body.model);
    const cacheUsage = () =>
      this.cache.use(promptAfterCompaction, { now: this.now(), minTokens: modelMin, count: (b) => countFakeTokens(b as { messages: unknown }) });

    if (compactionBlock && compact?.pause_after_compaction) {
      const streamed = body.stream === true ? { stream: this.opts.stream ?? {} } : {};
      return { status: 200, body: this.message(body, [compactionBlock], 'compaction' as StopReason, null, cacheUsage(), undefined, contextManagement), ...streamed };
    }

    const step = this.route?.(rec) ?? this.queue.shift();
    if (!step) {
      // 400 so the client does not retry: the test is wrong, and should fail loudly.
      return errorReply(400, `fake-anthropic: script exhausted at request #${this.acceptedCount} (scripted server, not a model)`);
    }
    if (step.kind === 'error') {
      const spec = ERRORS[step.status];
      const headers: Record<string, string> = {};
      if (step.retryAfterSeconds !== undefined) headers['retry-after'] = String(step.retryAfterSeconds);
      if (step.retryAfterMs !== undefined) headers['retry-after-ms'] = String(step.retryAfterMs);
      return errorReply(step.status, step.message ?? spec.message, headers);
    }

    const content: ContentBlock[] = compactionBlock ? [compactionBlock] : [];
    const text = (t: string) => content.push({ type: 'text', text: t, citations: null });
    const toolUse = (call: FakeToolCall) =>
      content.push({
        type: 'tool_use',
        id: call.id ?? `toolu_fake_${++this.toolUseSeq}`,
        name: call.name,
        input: call.input === undefined ? {} : call.input,
        caller: { type: 'direct' },
      });
    const thinking = (t: FakeThinking | FakeRedactedThinking) =>
      content.push(
        t.kind === 'thinking'
          ? { type: 'thinking', thinking: t.thinking, signature: signThinking(t.thinking) }
          : { type: 'redacted_thinking', data: sealRedactedThinking(t.payload) },
      );
    let stopReason: StopReason;
    if (step.kind === 'text') {
      if (step.thinking !== undefined) thinking({ kind: 'thinking', thinking: step.thinking });
      text(step.text);
      stopReason = step.stopReason ?? 'end_turn';
    } else if (step.kind === 'tool_use') {
      step.thinking?.forEach(thinking);
      if (step.text) text(step.text);
      step.calls.forEach(toolUse);
      stopReason = 'tool_use';
    } else {
      for (const item of step.content) {
        if (typeof item === 'string') text(item);
        else if (isThinkingItem(item)) thinking(item);
        else toolUse(item);
      }
      stopReason = step.stopReason ?? (step.content.some((c) => typeof c !== 'string' && !isThinkingItem(c)) ? 'tool_use' : 'end_turn');
    }
    if (!thinkingOn(body) && content.some((b) => b.type === 'thinking' || b.type === 'redacted_thinking')) {
      // The real API never thinks unasked; a script that does is a broken test, so fail it loudly.
      return errorReply(500, `fake-anthropic: script step #${this.acceptedCount} has thinking blocks but the request did not enable thinking`);
    }
    let stopSequence: string | null = null;
    if (stopReason === 'stop_sequence') {
      // The real API echoes which stop sequence matched; the first requested one is our best stand-in.
      const seqs = body.stop_sequences;
      stopSequence = Array.isArray(seqs) && typeof seqs[0] === 'string' ? seqs[0] : null;
    }
    const pacing = step.stream ?? this.opts.stream ?? {};
    const streamed = body.stream === true ? { stream: pacing } : { pace: pacing };
    return { status: 200, body: this.message(body, content, stopReason, stopSequence, cacheUsage(), step.usage, contextManagement), ...streamed };
  }

  private message(
    body: Record<string, any>,
    content: ContentBlock[],
    stopReason: StopReason,
    stopSequence: string | null,
    cache: ReturnType<PromptCache['use']>,
    override: FakeUsage | undefined,
    extra: Record<string, unknown>,
  ): Message {
    // Typed as the SDK's Message so the compiler keeps this in step with the real response shape.
    const message: Message = {
      id: `msg_fake_${++this.messageSeq}`,
      type: 'message',
      role: 'assistant',
      model: body.model,
      content,
      stop_reason: stopReason,
      stop_sequence: stopSequence,
      stop_details: null,
      container: null,
      diagnostics: null,
      usage: {
        input_tokens: override?.input_tokens ?? cache.input_tokens,
        output_tokens: override?.output_tokens ?? countOutputTokens(content),
        cache_creation_input_tokens: cache.cache_creation_input_tokens,
        cache_read_input_tokens: cache.cache_read_input_tokens,
        cache_creation: cache.cache_creation,
        inference_geo: null,
        output_tokens_details: null,
        server_tool_use: null,
        service_tier: 'standard',
        speed: null,
      },
    };
    // Beta fields (BetaMessage.context_management) ride along only when the request used them.
    return { ...message, ...extra } as Message;
  }

  private countTokensEndpoint(rec: RecordedRequest): Reply {
    const rejected = this.validate(rec, false);
    if (rejected) return rejected;
    const { prompt, original } = this.effectivePrompt(rec.body);
    const inputTokens = countFakeTokens(prompt as { messages: unknown });
    rec.inputTokens = inputTokens;
    // BetaMessageTokensCount: with context management, the count before edits rides along.
    const extra = rec.body.context_management ? { context_management: { original_input_tokens: original } } : {};
    return { status: 200, body: { input_tokens: inputTokens, ...extra } };
  }

  private knows(id: string): boolean {
    return !this.opts.onlyListedModels || Object.prototype.hasOwnProperty.call(this.opts.models ?? {}, id);
  }

  private modelInfo(id: string): ModelInfo {
    const m = this.opts.models?.[id];
    // The fake "knows" every model id: unknown ids get the default window rather than a 404.
    return {
      type: 'model',
      id,
      display_name: m?.displayName ?? `Scripted fake (${id})`,
      created_at: '1970-01-01T00:00:00Z', // the API uses the epoch when a release date is unknown
      max_input_tokens: m?.maxInputTokens ?? this.opts.contextWindow ?? DEFAULT_CONTEXT_WINDOW,
      max_tokens: m?.maxTokens ?? DEFAULT_MAX_OUTPUT_TOKENS,
      capabilities: m?.capabilities ? modelCapabilities(m.capabilities) : null,
      deprecated_at: null,
      lifecycle: 'active',
      line: null,
      retires_at: null,
    };
  }

  private listModels(): Reply {
    // Only configured models are listed (the fake cannot enumerate "every model"); no pagination.
    const data = Object.keys(this.opts.models ?? {}).map((id) => this.modelInfo(id));
    return {
      status: 200,
      body: { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data[data.length - 1]?.id ?? null },
    };
  }
}

function errorReply(status: number, message: string, headers: Record<string, string> = {}, details?: Record<string, string>): Reply {
  const type = ERRORS[status as FakeErrorStatus]?.type ?? 'api_error';
  // The real API tells the SDK whether to retry; mirror the SDK's own defaults for these statuses.
  const retry = status === 429 || status >= 500;
  return {
    status,
    // `details.error_code` is what the SDK maps to its typed errors (e.g. CompactionSignatureInvalidError).
    body: { type: 'error', error: details ? { type, message, details } : { type, message } },
    headers: { 'x-should-retry': String(retry), ...headers },
  };
}

/** Error bodies carry the request id too (`request_id`), as the real API's do. */
function withRequestId(body: unknown, requestId: string): unknown {
  return isObj(body) && body.type === 'error' ? { ...body, request_id: requestId } : body;
}
