/**
 * The official `openai` SDK, loaded on first use: it is an optional peer (only OpenAI users install
 * it), so nothing loads it until an OpenAI connection makes its first call, and without it that call
 * says what to install (PROVIDER_PACKAGE_MISSING) instead of failing with a module-not-found.
 * Nothing outside this folder names the SDK's types: an app without the package still compiles.
 */
import { MissingApiKeyError, ProviderPackageMissingError } from '../../../core/errors';
import type { OpenAIChatModelConnection, OpenAICompatibleModelConnection, OpenAIModelConnection } from './settings';

type OpenAIModule = typeof import('openai');
/** @internal Typed by the `openai` SDK (an optional peer): stripped from the published declarations. */
export type OpenAIClient = import('openai').OpenAI;

let loaded: OpenAIModule | undefined;

/**
 * The SDK module; `provider` names the connection's provider in the error when it is missing.
 *
 * @internal Typed by the `openai` SDK (an optional peer): stripped from the published declarations.
 */
export function openaiSdk(provider: string): OpenAIModule {
  if (loaded) return loaded;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    loaded = require('openai') as OpenAIModule;
    return loaded;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND' && /['"]openai['"]/.test(String((err as Error).message))) {
      throw new ProviderPackageMissingError('openai', provider);
    }
    throw err;
  }
}

/** For tests: forget the loaded module, so the next use loads it again (or fails to). */
export function forgetOpenAISdk(): void {
  loaded = undefined;
}

type AnyOpenAISettings = OpenAIModelConnection | OpenAIChatModelConnection | OpenAICompatibleModelConnection;

/**
 * The client for a connection. SDK retries are off: Temporal's retry policy (or the inline caller)
 * decides, so every retry shows in history, as on the Anthropic path.
 *
 * @internal Typed by the `openai` SDK (an optional peer): stripped from the published declarations.
 */
export function createOpenAIClient(settings: AnyOpenAISettings): OpenAIClient {
  const sdk = openaiSdk(settings.provider);
  if (settings.provider === 'openai-compatible') {
    const fromEnv = settings.apiKeyEnv ? process.env[settings.apiKeyEnv] : undefined;
    if (settings.apiKeyEnv && !settings.apiKey && !fromEnv) {
      throw new MissingApiKeyError(`No API key for ${settings.baseURL}: set ${settings.apiKeyEnv} (on the worker, for Temporal runs) or give the connection an apiKey.`);
    }
    const apiKey = settings.apiKey ?? fromEnv;
    return new sdk.OpenAI({
      // The SDK insists on credentials; a keyless local server (Ollama, vLLM) gets no Authorization header at all.
      apiKey: apiKey ?? 'no-key',
      baseURL: settings.baseURL,
      organization: null,
      project: null,
      defaultHeaders: { ...settings.headers, ...(apiKey ? {} : { Authorization: null }) },
      maxRetries: 0,
    });
  }
  const apiKey = settings.apiKey ?? process.env.OPENAI_API_KEY;
  if (!apiKey) {
    throw new MissingApiKeyError(`No OpenAI API key for the '${settings.provider}' connection: set OPENAI_API_KEY (on the worker, for Temporal runs) or give the connection an apiKey.`);
  }
  return new sdk.OpenAI({
    apiKey,
    ...(settings.baseURL ? { baseURL: settings.baseURL } : {}),
    ...(settings.organization ? { organization: settings.organization } : {}),
    ...(settings.project ? { project: settings.project } : {}),
    maxRetries: 0,
  });
}
