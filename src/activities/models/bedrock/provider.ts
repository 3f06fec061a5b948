/**
 * Claude on Amazon Bedrock (InvokeModel / InvokeModelWithResponseStream), through Anthropic's own
 * `@anthropic-ai/bedrock-sdk`: the same Messages request and stream events as Anthropic direct (../anthropic/messages
 * builds the request, accumulates the stream and reads the reply), sent to `/model/{id}/invoke…`, signed
 * with SigV4, streamed back as AWS event-stream frames, which the SDK turns back into Anthropic's events.
 *
 * The SDK is an optional peer, loaded when the connection makes its first client, and typed here by
 * the little we use of it: no declaration of ours names its types, so an app without it compiles.
 *
 * What Bedrock offers (Anthropic's docs, "Claude on Amazon Bedrock" and the features' platform tables,
 * read 2026-11): extended thinking, signed (thinkingSignatures); prompt caching with our breakpoints
 * (explicit); context editing (clear_tool_uses, clear_thinking) and server compaction are listed as
 * beta on "Amazon Bedrock (InvokeModel)", so `context_management` is sent, its betas in the body's
 * `anthropic_beta`, as the SDK moves them there. No token-count endpoint (the SDK removes
 * `countTokens`) and no Models API: the window comes from the built-in table (core/models), and with
 * capabilities unknown the 'auto' strategy stays on client compaction.
 */
import type { ModelCallResult } from '../../../core/ports';
import { builtinContextWindow } from '../../../core/models';
import { UnknownModelError } from '../../../core/errors';
import type { CallOptions, MessagesCall, ModelFacts, ModelProvider, ProviderCapabilities } from '../port';
import { callMessages, streamMessages, type MessagesClient, type MessagesPlatform } from '../anthropic/messages';
import { loadProviderPackage } from '../optional-package';
import { classifyBedrockError } from './errors';

/**
 * The API version InvokeModel takes, in the body. Set here rather than left to the SDK, which puts its
 * own header's version there (`2026-10-21` since 1.0), which Bedrock refuses for the ARN-versioned
 * models (Anthropic's docs warn of exactly this; a body value wins over the SDK's).
 */
export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';

/** Claude on Amazon Bedrock. Unset fields are read the way the Bedrock SDK reads them (see docs/models.md). */
export interface BedrockModelConnection {
  provider: 'bedrock';
  /** Default AWS_REGION, then us-east-1. */
  region?: string;
  /** Default ANTHROPIC_BEDROCK_BASE_URL, then https://bedrock-runtime.{region}.amazonaws.com. */
  baseURL?: string;
  /** With awsSecretKey: static credentials (otherwise the AWS credential chain: AWS_ACCESS_KEY_ID, profiles, SSO, instance roles). */
  awsAccessKey?: string;
  awsSecretKey?: string;
  awsSessionToken?: string;
  /** A Bedrock API key, sent as a bearer token instead of SigV4 (default AWS_BEARER_TOKEN_BEDROCK, unless static keys are given). */
  apiKey?: string;
}

export const BEDROCK_CAPABILITIES: ProviderCapabilities = {
  thinking: true,
  promptCaching: 'explicit',
  tokenCounting: false,
  serverContextEditing: true,
  thinkingSignatures: true,
};

/** The SDK's constructor, as much of it as we use (typed here: see the header). */
interface BedrockClientOptions {
  awsRegion?: string;
  baseURL?: string;
  awsAccessKey?: string | null;
  awsSecretKey?: string | null;
  awsSessionToken?: string | null;
  apiKey?: string | null;
  maxRetries: number;
}
interface BedrockModule {
  AnthropicBedrock: new (options: BedrockClientOptions) => MessagesClient;
}

const PLATFORM: MessagesPlatform = { bodyFields: { anthropic_version: BEDROCK_ANTHROPIC_VERSION }, classify: classifyBedrockError };

export function createBedrockClient(s: Omit<BedrockModelConnection, 'provider'>): MessagesClient {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { AnthropicBedrock } = loadProviderPackage<BedrockModule>('@anthropic-ai/bedrock-sdk', 'the bedrock connection', () => require('@anthropic-ai/bedrock-sdk'));
  const staticKeys = s.awsAccessKey !== undefined || s.awsSecretKey !== undefined;
  return new AnthropicBedrock({
    ...(s.region ? { awsRegion: s.region } : {}),
    ...(s.baseURL ? { baseURL: s.baseURL } : {}),
    // Static keys given in the settings are what signs: `apiKey: null` keeps AWS_BEARER_TOKEN_BEDROCK
    // (which the SDK would otherwise prefer) out of it.
    ...(staticKeys
      ? { awsAccessKey: s.awsAccessKey ?? null, awsSecretKey: s.awsSecretKey ?? null, awsSessionToken: s.awsSessionToken ?? null, apiKey: s.apiKey ?? null }
      : s.apiKey
        ? { apiKey: s.apiKey }
        : {}),
    // SDK retries off: Temporal's retry policy (or the caller, inline) decides, so retries show in history.
    maxRetries: 0,
  });
}

/**
 * The Claude model name inside a Bedrock id (`anthropic.claude-…`, with an inference profile's
 * `us.`/`eu.`/`global.` prefix, or inside an ARN), or undefined when the id names none.
 */
export function bedrockClaudeName(model: string): string | undefined {
  return /(?:^|[./])anthropic\.(claude-[^/]+)$/.exec(model)?.[1];
}

export class BedrockProvider implements ModelProvider {
  readonly protocol = 'bedrock' as const;
  readonly capabilities = BEDROCK_CAPABILITIES;
  private made: MessagesClient | undefined;

  constructor(private readonly settings: Omit<BedrockModelConnection, 'provider'> = {}) {}

  /** The SDK client, made (and the SDK loaded) on first use. */
  client(): MessagesClient {
    return (this.made ??= createBedrockClient(this.settings));
  }

  async call(request: MessagesCall, options: CallOptions): Promise<ModelCallResult> {
    // Never a pre-serialised body (no `serialisedBodies`): the SDK rewrites the body it serialises itself.
    return options.onEvent
      ? streamMessages(this.client(), request, options.onEvent, options.signal, undefined, PLATFORM)
      : callMessages(this.client(), request, options.signal, undefined, PLATFORM);
  }

  /** No Models API on Bedrock's runtime: the window of the Claude model the id names, from the built-in table. */
  async modelFacts(model: string): Promise<ModelFacts> {
    const name = bedrockClaudeName(model);
    const window = name ? builtinContextWindow(name) : undefined;
    return window !== undefined ? { contextWindowTokens: window } : {};
  }

  /**
   * Without a Models API the most that can be said before a call: an id that names no Claude model
   * (Anthropic's own `claude-…` ids among them) is not one Bedrock's Anthropic models answer to. An
   * application inference profile's ARN is opaque, so it passes.
   */
  async verifyModel(model: string): Promise<void> {
    if (bedrockClaudeName(model) === undefined && !/^arn:aws[\w-]*:bedrock:/.test(model)) throw new UnknownModelError(model);
  }
}
