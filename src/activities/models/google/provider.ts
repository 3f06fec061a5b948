/**
 * Google Gemini (the Gemini Developer API) through the official `@google/genai` SDK, an optional peer
 * loaded when the connection is first used. Every call streams (`generateContentStream`, which asks
 * for `:streamGenerateContent?alt=sse`); ./reply tells the stream as our events and the reply
 * accumulator puts the reply together, streamed to a reader or not.
 */
import type { GoogleGenAI } from '@google/genai';
import type { AssistantBlock } from '../../../core/entries';
import { MissingApiKeyError, ModelCallError, UnknownModelError } from '../../../core/errors';
import type { ModelCallResult } from '../../../core/ports';
import { keptEntry } from '../../../core/replies';
import { ReplyAccumulator } from '../anthropic/reply-accumulator';
import { requireProviderPackage } from '../optional-peer';
import type { CallOptions, MessagesCall, ModelFacts, ModelProvider, ProviderCapabilities } from '../port';
import { classifyGeminiError } from './errors';
import { GeminiStreamTranslator, type GeminiChunk } from './reply';
import { geminiConfig, geminiContents, geminiRequest } from './request';
import { geminiApiKey, type GoogleModelConnection } from './settings';

export const GOOGLE_PACKAGE = '@google/genai';

export const GOOGLE_CAPABILITIES: ProviderCapabilities = {
  thinking: true,
  // Implicit caching: Gemini caches repeated prefixes itself and reports the reads.
  promptCaching: 'automatic',
  tokenCounting: true,
  serverContextEditing: false,
  thinkingSignatures: true,
};

type GenAiModule = { GoogleGenAI: new (options: Record<string, unknown>) => GoogleGenAI };

/** The SDK's module, loaded on first use (PROVIDER_PACKAGE_MISSING when the app did not install it). */
function loadGenAi(): GenAiModule {
  return requireProviderPackage<GenAiModule>(GOOGLE_PACKAGE, 'google');
}

export class GoogleProvider implements ModelProvider {
  readonly protocol = 'google' as const;
  readonly capabilities = GOOGLE_CAPABILITIES;
  private made: GoogleGenAI | undefined;
  // A private field, not a constructor parameter: the published declarations then name nothing of the
  // SDK (an optional peer), so a project without it compiles them with skipLibCheck: false.
  private readonly sdk: GenAiModule = loadGenAi();

  constructor(private readonly settings: Omit<GoogleModelConnection, 'provider'>) {}

  /** The SDK client, made on first use (a run that needs no model call needs no API key). */
  private client(): GoogleGenAI {
    if (this.made) return this.made;
    const apiKey = geminiApiKey(this.settings);
    if (!apiKey) {
      throw new MissingApiKeyError(
        "No Gemini API key: set GEMINI_API_KEY or GOOGLE_API_KEY (on the worker, for Temporal runs) or give the connection { provider: 'google', apiKey }.",
      );
    }
    // No retries in the SDK (its default too): Temporal's retry policy (or the caller, inline) decides.
    const fetch = sandboxFetch();
    const httpOptions = { ...(this.settings.baseURL ? { baseUrl: this.settings.baseURL } : {}), ...(fetch ? { fetch } : {}) };
    return (this.made = new this.sdk.GoogleGenAI({ apiKey, ...(Object.keys(httpOptions).length ? { httpOptions } : {}) }));
  }

  async call(request: MessagesCall, options: CallOptions): Promise<ModelCallResult> {
    if (request.contextManagement) {
      throw new ModelCallError('invalid_request', 'Gemini has no server-side context editing (context management is Claude\'s): use the client-side compaction strategy on a google connection.');
    }
    const { contents, config } = geminiRequest(request);
    const translator = new GeminiStreamTranslator(request.model);
    const reply = new ReplyAccumulator();
    const emit = (events: ReturnType<GeminiStreamTranslator['add']>) => {
      for (const event of events) {
        reply.add(event);
        options.onEvent?.(event);
      }
    };
    const client = this.client(); // MISSING_API_KEY as it is, not a network error
    try {
      const stream = await client.models.generateContentStream({
        model: request.model,
        contents: contents as never,
        config: { ...config, ...(options.signal ? { abortSignal: options.signal } : {}) } as never,
      });
      for await (const chunk of stream) emit(translator.add(chunk as GeminiChunk));
      emit(translator.finish());
    } catch (err) {
      throw classifyGeminiError(err, this.settings.baseURL);
    }
    return resultOf(reply.final() as unknown as FinalReply);
  }

  /**
   * Gemini's count endpoint, with the system instruction and tools: those only go in a whole
   * `generateContentRequest` (the SDK's countTokens takes contents alone on this API), so the
   * request is sent as that, through the SDK's extra body.
   */
  async countTokens(request: MessagesCall, signal?: AbortSignal): Promise<number> {
    const { systemInstruction, tools } = geminiConfig(request);
    const model = request.model.startsWith('models/') ? request.model : `models/${request.model}`;
    const generateContentRequest = { model, contents: geminiContents(request), ...(systemInstruction ? { systemInstruction } : {}), ...(tools ? { tools } : {}) };
    const client = this.client();
    try {
      const res = await client.models.countTokens({
        model: request.model,
        contents: undefined as never,
        config: { httpOptions: { extraBody: { generateContentRequest } }, ...(signal ? { abortSignal: signal } : {}) },
      });
      return res.totalTokens ?? 0;
    } catch (err) {
      throw classifyGeminiError(err, this.settings.baseURL);
    }
  }

  async modelFacts(model: string): Promise<ModelFacts> {
    const client = this.client();
    try {
      const info = await client.models.get({ model });
      return info.inputTokenLimit && info.inputTokenLimit > 0 ? { contextWindowTokens: info.inputTokenLimit } : {};
    } catch (err) {
      const classified = classifyGeminiError(err, this.settings.baseURL);
      // A bad key must surface now, not as a silent fallback to the built-in table.
      if (classified.kind === 'authentication' || classified.kind === 'permission') throw classified;
      return {};
    }
  }

  async verifyModel(model: string): Promise<void> {
    const client = this.client();
    try {
      await client.models.get({ model });
    } catch (err) {
      const classified = classifyGeminiError(err, this.settings.baseURL);
      if (classified.kind === 'not_found') throw new UnknownModelError(model);
      throw classified;
    }
  }
}

const UNDICI_DISPATCHER = Symbol.for('undici.globalDispatcher.1');

/**
 * Plain fetch where Node's fetch dispatcher is not on this realm's globalThis (a vm sandbox such as
 * Jest's): the SDK reaches for it there to lift fetch's timeouts and fails every call with "Undici
 * globalDispatcher is not available". Elsewhere undefined: the SDK's own dispatcher (no timeouts).
 */
function sandboxFetch(): typeof fetch | undefined {
  if (typeof Headers !== 'undefined') new Headers(); // Node sets the dispatcher up lazily
  return (globalThis as Record<symbol, unknown>)[UNDICI_DISPATCHER] ? undefined : globalThis.fetch;
}

interface FinalReply {
  model: string;
  stop_reason: string | null;
  content: Array<Record<string, unknown> & { type: string }>;
  usage: { input_tokens: number; output_tokens: number; cache_read_input_tokens?: number; cache_creation_input_tokens?: number };
}

function resultOf(res: FinalReply): ModelCallResult {
  const content: AssistantBlock[] = [];
  for (const b of res.content) {
    if (b.type === 'thinking') content.push({ type: 'thinking', thinking: b.thinking as string, signature: b.signature as string });
    else if (b.type === 'redacted_thinking') content.push({ type: 'redacted_thinking', data: b.data as string });
    else if (b.type === 'text') content.push({ type: 'text', text: b.text as string });
    else if (b.type === 'tool_use') content.push({ type: 'tool_use', id: b.id as string, name: b.name as string, input: b.input });
  }
  const usage = {
    inputTokens: res.usage.input_tokens,
    outputTokens: res.usage.output_tokens,
    cacheReadInputTokens: res.usage.cache_read_input_tokens ?? 0,
    cacheCreationInputTokens: res.usage.cache_creation_input_tokens ?? 0,
  };
  const entry = keptEntry({ type: 'assistant', content, stopReason: res.stop_reason ?? undefined, model: res.model, usage });
  return { entry, usage, stopReason: res.stop_reason, model: res.model };
}
