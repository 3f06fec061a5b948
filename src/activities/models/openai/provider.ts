/**
 * OpenAI behind the model port, through the official `openai` SDK (loaded on first use, ./sdk):
 * - `openai`: the Responses API (reasoning effort, encrypted reasoning kept, a count endpoint);
 * - `openai-chat` / `openai-compatible`: Chat Completions, OpenAI's or any server that speaks it.
 * Every call streams (one translation path; `onEvent` sees the canonical events as they come), and
 * the reply is assembled by the Anthropic path's accumulator (./reply).
 */
import { ModelCallError, UnknownModelError } from '../../../core/errors';
import { builtinContextWindow } from '../../../core/models';
import type { ModelCallResult } from '../../../core/ports';
import type { CallOptions, MessagesCall, ModelFacts, ModelProvider, ProviderCapabilities } from '../port';
import { chatParams, OPENAI_REASONING_MODEL, type ChatDialect } from './chat-request';
import { ChatTranslator } from './chat-events';
import { classifyOpenAIError } from './errors';
import { CanonicalReply } from './reply';
import { responsesParams } from './responses-request';
import { ResponsesTranslator } from './responses-events';
import { createOpenAIClient, type OpenAIClient } from './sdk';
import type { OpenAIChatModelConnection, OpenAICompatibleModelConnection, OpenAIModelConnection } from './settings';

type Settings = OpenAIModelConnection | OpenAIChatModelConnection | OpenAICompatibleModelConnection;

/** The client, the errors' label and the models lookups every OpenAI-protocol provider shares. */
abstract class OpenAIBase {
  private made: OpenAIClient | undefined;

  constructor(protected readonly settings: Settings) {}

  /**
   * The SDK client, made on first use (a run that needs no model call needs neither key nor package).
   *
   * @internal Typed by the `openai` SDK (an optional peer): stripped from the published declarations.
   */
  protected client(): OpenAIClient {
    return (this.made ??= createOpenAIClient(this.settings));
  }

  protected get label(): string {
    return this.settings.provider === 'openai-compatible' ? `OpenAI-compatible API (${this.settings.baseURL})` : 'OpenAI API';
  }

  protected fail(err: unknown, signal?: AbortSignal): ModelCallError {
    return classifyOpenAIError(err, this.label, this.settings.provider, signal);
  }

  /** OpenAI's models API says no window: the built-in table does (core/models), or nothing. */
  modelFacts(model: string): Promise<ModelFacts> {
    const window = builtinContextWindow(model);
    return Promise.resolve(window !== undefined ? { contextWindowTokens: window } : {});
  }

  /**
   * OpenAI: `models.retrieve` (404: unknown). A compatible server often serves only the list (vLLM):
   * there the model must be listed, and a server without a models endpoint at all cannot say (passes).
   */
  async verifyModel(model: string): Promise<void> {
    const client = this.client(); // a missing key or package is said as itself, not as a failed call
    try {
      if (this.settings.provider !== 'openai-compatible') {
        await client.models.retrieve(model);
        return;
      }
      const ids: string[] = [];
      for await (const m of client.models.list()) ids.push(m.id);
      if (!ids.includes(model)) throw new UnknownModelError(model);
    } catch (err) {
      if (err instanceof UnknownModelError) throw err;
      const classified = this.fail(err);
      if (classified.kind === 'not_found') {
        if (this.settings.provider === 'openai-compatible') return;
        throw new UnknownModelError(model);
      }
      throw classified;
    }
  }
}

export const OPENAI_RESPONSES_CAPABILITIES: ProviderCapabilities = {
  thinking: true,
  promptCaching: 'automatic',
  tokenCounting: true,
  serverContextEditing: false,
  thinkingSignatures: false,
};

/** OpenAI's Responses API (`POST /v1/responses`). */
export class OpenAIResponsesProvider extends OpenAIBase implements ModelProvider {
  readonly protocol = 'openai-responses' as const;
  readonly capabilities = OPENAI_RESPONSES_CAPABILITIES;

  async call(request: MessagesCall, options: CallOptions): Promise<ModelCallResult> {
    const reply = new CanonicalReply(options.onEvent);
    const translator = new ResponsesTranslator(this.label);
    const client = this.client(); // a missing key or package is said as itself, not as a failed call
    try {
      const stream = await client.responses.create(responsesParams(request), { signal: options.signal });
      for await (const event of stream) for (const e of translator.translate(event)) reply.emit(e);
      if (!translator.complete) throw new ModelCallError('network', `${this.label}: the stream ended before response.completed`);
    } catch (err) {
      throw this.fail(err, options.signal);
    }
    return reply.result();
  }

  /** `POST /v1/responses/input_tokens`: the exact input tokens of the request as it would be sent. */
  async countTokens(request: MessagesCall, signal?: AbortSignal): Promise<number> {
    const { model, instructions, input, tools, reasoning } = responsesParams(request);
    const client = this.client();
    try {
      const res = await client.responses.inputTokens.count(
        { model, input, ...(instructions ? { instructions } : {}), ...(tools ? { tools } : {}), ...(reasoning ? { reasoning } : {}) },
        { signal },
      );
      return res.input_tokens;
    } catch (err) {
      throw this.fail(err, signal);
    }
  }
}

/** Chat Completions (`POST /chat/completions`) on OpenAI or an OpenAI-compatible server. */
export class OpenAIChatProvider extends OpenAIBase implements ModelProvider {
  readonly protocol = 'openai-chat' as const;
  readonly capabilities: ProviderCapabilities;
  private readonly dialect: ChatDialect;

  constructor(settings: OpenAIChatModelConnection | OpenAICompatibleModelConnection) {
    super(settings);
    const compatible = settings.provider === 'openai-compatible';
    const reasoning = compatible ? settings.reasoningEffort === true : true;
    this.dialect = {
      maxTokensField: compatible ? (settings.maxTokensField ?? 'max_tokens') : 'max_completion_tokens',
      reasons: compatible ? () => reasoning : (model) => OPENAI_REASONING_MODEL.test(model),
      label: this.label,
    };
    // Thinking per model on OpenAI (its reasoning models); on a compatible server as its settings say.
    this.capabilities = { thinking: reasoning, promptCaching: compatible ? 'none' : 'automatic', tokenCounting: false, serverContextEditing: false, thinkingSignatures: false };
  }

  async call(request: MessagesCall, options: CallOptions): Promise<ModelCallResult> {
    const params = chatParams(request, this.dialect);
    const reply = new CanonicalReply(options.onEvent);
    const translator = new ChatTranslator();
    const client = this.client(); // a missing key or package is said as itself, not as a failed call
    try {
      const stream = await client.chat.completions.create(params, { signal: options.signal });
      for await (const chunk of stream) for (const e of translator.translate(chunk)) reply.emit(e);
      const end = translator.end();
      if (!end) throw new ModelCallError('network', `${this.label}: the stream ended without a finish_reason`);
      for (const e of end) reply.emit(e);
    } catch (err) {
      throw this.fail(err, options.signal);
    }
    return reply.result();
  }
}
