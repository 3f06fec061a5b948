/**
 * Connections: a provider and its credentials/endpoint, by name, on the worker (or the inline process)
 * only. A workflow names a connection (never its credentials: they never enter history); this table
 * turns the name into the provider's client, made on first use. Each provider's package is an optional
 * peer loaded only when its connection is first used (see each provider's folder).
 */
import { UnknownConnectionError } from '../../core/sessions/host-errors';
import type { ModelProvider } from './port';
import { AnthropicProvider } from './anthropic/provider';
import type { ModelConnection } from './anthropic/messages';
import { OpenAIChatProvider, OpenAIResponsesProvider } from './openai/provider';
import type { OpenAIChatModelConnection, OpenAICompatibleModelConnection, OpenAIModelConnection } from './openai/settings';

export type { OpenAIChatModelConnection, OpenAICompatibleModelConnection, OpenAIModelConnection };
import { GoogleProvider } from './google/provider';
import type { GoogleModelConnection } from './google/settings';

export type { GoogleModelConnection };
import { BedrockProvider, type BedrockModelConnection } from './bedrock/provider';
import { VertexProvider, type VertexModelConnection } from './vertex/provider';

export type { BedrockModelConnection, VertexModelConnection };

/** The connection a run uses when it names none: Anthropic direct (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL). */
export const DEFAULT_CONNECTION = 'anthropic';

/** Anthropic's Messages API direct: `apiKey` (default ANTHROPIC_API_KEY), `baseURL` (default ANTHROPIC_BASE_URL). */
export interface AnthropicModelConnection extends ModelConnection {
  provider: 'anthropic';
}

/** One connection's settings: `provider` says which protocol; the rest is that provider's (credentials stay here). */
export type ModelConnectionSettings =
  | AnthropicModelConnection
  | OpenAIModelConnection
  | OpenAIChatModelConnection
  | OpenAICompatibleModelConnection
  | GoogleModelConnection
  | BedrockModelConnection
  | VertexModelConnection;

type Factories = { [P in ModelConnectionSettings['provider']]: (settings: Extract<ModelConnectionSettings, { provider: P }>) => ModelProvider };

/** How each provider's client is made. A provider whose package is an optional peer loads it here, lazily. */
const FACTORIES: Factories = {
  anthropic: (s) => new AnthropicProvider({ apiKey: s.apiKey, baseURL: s.baseURL }),
  // The `openai` package is required on the connection's first call (./openai/sdk), not here.
  openai: (s) => new OpenAIResponsesProvider(s),
  'openai-chat': (s) => new OpenAIChatProvider(s),
  'openai-compatible': (s) => new OpenAIChatProvider(s),
  google: (s) => new GoogleProvider({ apiKey: s.apiKey, baseURL: s.baseURL }),
  // Their SDKs load when the connection makes its first client (the provider's client()), not here.
  bedrock: ({ provider: _p, ...s }) => new BedrockProvider(s),
  vertex: ({ provider: _p, ...s }) => new VertexProvider(s),
};

/**
 * The connections every worker has without configuration, each reading its provider's own environment
 * the way that provider's SDK does. Settings given by name replace these.
 */
function builtinConnections(): Record<string, ModelConnectionSettings> {
  // Bedrock and Vertex read AWS_REGION / the AWS credential chain and CLOUD_ML_REGION /
  // ANTHROPIC_VERTEX_PROJECT_ID / Google's ADC through their SDKs, when first used.
  return { anthropic: { provider: 'anthropic' }, openai: { provider: 'openai' }, google: { provider: 'google' }, bedrock: { provider: 'bedrock' }, vertex: { provider: 'vertex' } };
}

export class Connections {
  private readonly settings: Record<string, ModelConnectionSettings>;
  private readonly made = new Map<string, ModelProvider>();

  /**
   * `anthropic`: the worker's Anthropic settings of old (`model: { apiKey, baseURL }`), kept as the
   * 'anthropic' connection; `settings`: named connections, which win over the built-in ones.
   */
  constructor(settings: Record<string, ModelConnectionSettings> = {}, anthropic: ModelConnection = {}) {
    const builtin = builtinConnections();
    builtin.anthropic = { provider: 'anthropic', ...anthropic };
    this.settings = { ...builtin, ...settings };
  }

  /** The names a run may use on this worker. */
  names(): string[] {
    return Object.keys(this.settings).sort();
  }

  /** The provider behind `name` (default: the default connection); UNKNOWN_CONNECTION names the ones there are. */
  provider(name: string = DEFAULT_CONNECTION): ModelProvider {
    const known = this.made.get(name);
    if (known) return known;
    const settings = this.settings[name];
    if (!settings) throw new UnknownConnectionError(name, this.names(), 'connection');
    const factory = FACTORIES[settings.provider] as (s: ModelConnectionSettings) => ModelProvider;
    const provider = factory(settings);
    this.made.set(name, provider);
    return provider;
  }
}
