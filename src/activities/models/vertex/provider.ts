/**
 * Claude on Google Vertex AI (rawPredict / streamRawPredict), through Anthropic's own
 * `@anthropic-ai/vertex-sdk`: the same Messages request and stream events as Anthropic direct
 * (../anthropic/messages builds the request, accumulates the stream and reads errors; Vertex passes
 * Anthropic's error bodies through, and Google's own `{ error: { code, message, status } }` reads the
 * same way), sent to `/projects/{p}/locations/{r}/publishers/anthropic/models/{model}:…` with a Google
 * OAuth bearer token.
 *
 * The SDK is an optional peer, loaded when the connection makes its first client, and typed here by
 * the little we use of it: no declaration of ours names its types, so an app without it compiles.
 *
 * What Vertex offers (Anthropic's docs, "Claude on Vertex AI" and the features' platform tables, read
 * 2026-11): extended thinking, signed; prompt caching with our breakpoints (explicit); a token-count
 * endpoint (`count-tokens:rawPredict`, which the SDK routes `messages.countTokens` to); context editing
 * and server compaction listed as beta on "Claude Models on Google Cloud", sent with the
 * `anthropic-beta` header as to Anthropic. No Models API: the window comes from the built-in table
 * (core/models), and with capabilities unknown the 'auto' strategy stays on client compaction.
 */
import type Anthropic from '@anthropic-ai/sdk';
import type { ModelCallResult } from '../../../core/ports';
import { builtinContextWindow } from '../../../core/models';
import { InvalidInputError, UnknownModelError, type ModelCallError } from '../../../core/errors';
import type { CallOptions, MessagesCall, ModelFacts, ModelProvider, ProviderCapabilities } from '../port';
import { callMessages, classifyAnthropicError, streamMessages, type MessagesClient, type MessagesPlatform } from '../anthropic/messages';
import { countTokensParams } from '../anthropic/count-tokens';
import { loadProviderPackage } from '../optional-package';

/**
 * The API version Vertex takes, in the body. Set here rather than left to the SDK, which puts its own
 * header's version there (`2026-10-21` since 1.0); Vertex documents `vertex-2023-10-16` (a body value
 * wins over the SDK's).
 */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

/** Claude on Google Vertex AI. Unset fields are read the way the Vertex SDK reads them (see docs/models.md). */
export interface VertexModelConnection {
  provider: 'vertex';
  /** Default ANTHROPIC_VERTEX_PROJECT_ID, then the project of the Google credentials. */
  projectId?: string;
  /** Default CLOUD_ML_REGION (required one way or the other; `global` for the global endpoint). */
  region?: string;
  /** Default ANTHROPIC_VERTEX_BASE_URL, then https://{region}-aiplatform.googleapis.com/v1. */
  baseURL?: string;
  /** An OAuth access token sent as it is (otherwise Google's Application Default Credentials). */
  accessToken?: string;
}

export const VERTEX_CAPABILITIES: ProviderCapabilities = {
  thinking: true,
  promptCaching: 'explicit',
  tokenCounting: true,
  serverContextEditing: true,
  thinkingSignatures: true,
};

/** The client as we use it: the Messages surface and the count endpoint. */
interface VertexClient extends MessagesClient {
  messages: Pick<Anthropic['messages'], 'create' | 'countTokens'>;
  beta: { messages: Pick<Anthropic['beta']['messages'], 'create' | 'countTokens'> };
}
/** The SDK's constructor, as much of it as we use (typed here: see the header). */
interface VertexClientOptions {
  region?: string;
  projectId?: string;
  baseURL?: string;
  authClient?: { projectId: string | null; getRequestHeaders(): Promise<Headers> };
  maxRetries: number;
}
interface VertexModule {
  AnthropicVertex: new (options: VertexClientOptions) => VertexClient;
}

const classifyVertexError = (err: unknown, baseURL?: string): ModelCallError => classifyAnthropicError(err, baseURL, 'Vertex AI');
const PLATFORM: MessagesPlatform = { bodyFields: { anthropic_version: VERTEX_ANTHROPIC_VERSION }, classify: classifyVertexError };

export function createVertexClient(s: Omit<VertexModelConnection, 'provider'>): VertexClient {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { AnthropicVertex } = loadProviderPackage<VertexModule>('@anthropic-ai/vertex-sdk', 'the vertex connection', () => require('@anthropic-ai/vertex-sdk'));
  if (!s.region && !process.env.CLOUD_ML_REGION) {
    throw new InvalidInputError('vertex connection', 'region', [{ path: 'region', message: 'required: set it in the connection settings or CLOUD_ML_REGION' }]);
  }
  return new AnthropicVertex({
    ...(s.region ? { region: s.region } : {}),
    ...(s.projectId ? { projectId: s.projectId } : {}),
    ...(s.baseURL ? { baseURL: s.baseURL } : {}),
    // The SDK keeps an `accessToken` option but signs with its auth client only (1.1.3), so a given
    // token is that client: it answers the one call the SDK makes of it, for the request's headers.
    ...(s.accessToken ? { authClient: tokenAuthClient(s.accessToken, s.projectId) } : {}),
    // SDK retries off: Temporal's retry policy (or the caller, inline) decides, so retries show in history.
    maxRetries: 0,
  });
}

function tokenAuthClient(token: string, projectId: string | undefined): NonNullable<VertexClientOptions['authClient']> {
  return { projectId: projectId ?? null, getRequestHeaders: async () => new Headers({ authorization: `Bearer ${token}` }) };
}

export class VertexProvider implements ModelProvider {
  readonly protocol = 'vertex' as const;
  readonly capabilities = VERTEX_CAPABILITIES;
  private made: VertexClient | undefined;

  constructor(private readonly settings: Omit<VertexModelConnection, 'provider'> = {}) {}

  /** The SDK client, made (and the SDK loaded) on first use. */
  client(): VertexClient {
    return (this.made ??= createVertexClient(this.settings));
  }

  async call(request: MessagesCall, options: CallOptions): Promise<ModelCallResult> {
    // Never a pre-serialised body (no `serialisedBodies`): the SDK rewrites the body it serialises itself.
    return options.onEvent
      ? streamMessages(this.client(), request, options.onEvent, options.signal, undefined, PLATFORM)
      : callMessages(this.client(), request, options.signal, undefined, PLATFORM);
  }

  /** Vertex's count endpoint; with context management on the beta surface with the call's betas, as Anthropic's. */
  async countTokens(request: MessagesCall, signal?: AbortSignal): Promise<number> {
    const params = { ...countTokensParams(request), anthropic_version: VERTEX_ANTHROPIC_VERSION } as Anthropic.MessageCountTokensParams;
    const betas = request.contextManagement?.betas;
    try {
      const res = betas?.length
        ? await this.client().beta.messages.countTokens({ ...(params as Anthropic.Beta.MessageCountTokensParams), betas: [...betas] }, { signal })
        : await this.client().messages.countTokens(params, { signal });
      return res.input_tokens;
    } catch (err) {
      throw classifyVertexError(err, this.client().baseURL);
    }
  }

  /** No Models API on Vertex: the window of the model from the built-in table. */
  async modelFacts(model: string): Promise<ModelFacts> {
    const window = builtinContextWindow(model);
    return window !== undefined ? { contextWindowTokens: window } : {};
  }

  /** Without a Models API the most that can be said before a call: Vertex's Anthropic models are `claude-…` (`@version` optional). */
  async verifyModel(model: string): Promise<void> {
    if (!/^claude-[\w.-]+(?:@[\w.-]+)?$/.test(model)) throw new UnknownModelError(model);
  }
}
