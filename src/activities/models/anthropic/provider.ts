/**
 * Anthropic's Messages API, direct: the richest connection (server-side context editing, thinking
 * signatures, explicit prompt caching, a count endpoint) and the shape every other provider is
 * translated from and into (see ../port).
 */
import type Anthropic from '@anthropic-ai/sdk';
import type { ModelCallResult } from '../../../core/ports';
import type { CallOptions, MessagesCall, ModelFacts, ModelProvider, ProviderCapabilities } from '../port';
import { callMessages, createAnthropicClient, lookupModelFacts, streamMessages, verifyModel, type ModelConnection } from './messages';
import { countTokensParams } from './count-tokens';

export const ANTHROPIC_CAPABILITIES: ProviderCapabilities = {
  thinking: true,
  promptCaching: 'explicit',
  tokenCounting: true,
  serverContextEditing: true,
  thinkingSignatures: true,
};

export class AnthropicProvider implements ModelProvider {
  readonly protocol = 'anthropic' as const;
  readonly capabilities = ANTHROPIC_CAPABILITIES;
  readonly serialisedBodies = true;
  private made: Anthropic | undefined;

  constructor(private readonly connection: ModelConnection = {}) {}

  /** The SDK client, made on first use (a run that needs no model call needs no API key). */
  client(): Anthropic {
    return (this.made ??= createAnthropicClient(this.connection));
  }

  call(request: MessagesCall, options: CallOptions): Promise<ModelCallResult> {
    return options.onEvent
      ? streamMessages(this.client(), request, options.onEvent, options.signal, options.body)
      : callMessages(this.client(), request, options.signal, options.body);
  }

  /**
   * With context management the count goes to the beta surface with the call's betas:
   * `context_management` exists only there, and without them the API refuses it ("context_management:
   * Extra inputs are not permitted"), which once left every such count to the heuristic.
   */
  async countTokens(request: MessagesCall, signal?: AbortSignal): Promise<number> {
    const params = countTokensParams(request);
    const betas = request.contextManagement?.betas;
    const res = betas?.length
      ? await this.client().beta.messages.countTokens({ ...(params as Anthropic.Beta.MessageCountTokensParams), betas: [...betas] }, { signal })
      : await this.client().messages.countTokens(params, { signal });
    return res.input_tokens;
  }

  modelFacts(model: string): Promise<ModelFacts> {
    return lookupModelFacts(this.client(), model);
  }

  verifyModel(model: string): Promise<void> {
    return verifyModel(this.client(), model);
  }
}
