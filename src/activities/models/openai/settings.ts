/**
 * The OpenAI connections' settings, as a worker (or an inline run) is given them. Credentials stay on
 * the worker: a workflow names the connection, never these. Each field left out is read the way the
 * official `openai` SDK reads it (OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_ORG_ID, OPENAI_PROJECT_ID).
 */

/** OpenAI's Responses API (`provider: 'openai'`): reasoning effort, encrypted reasoning, automatic prompt caching. */
export interface OpenAIModelConnection {
  provider: 'openai';
  /** Default: OPENAI_API_KEY. */
  apiKey?: string;
  /** Default: OPENAI_BASE_URL, then https://api.openai.com/v1. */
  baseURL?: string;
  organization?: string;
  project?: string;
}

/** OpenAI's Chat Completions API (`provider: 'openai-chat'`), for OpenAI itself or a server that speaks it. */
export interface OpenAIChatModelConnection {
  provider: 'openai-chat';
  /** Default: OPENAI_API_KEY. */
  apiKey?: string;
  /** Default: OPENAI_BASE_URL, then https://api.openai.com/v1. */
  baseURL?: string;
  organization?: string;
  project?: string;
}

/**
 * Any server that speaks OpenAI's Chat Completions (Kimi/Moonshot, OpenRouter, vLLM, Ollama, …), by
 * base URL. Nothing is read from OPENAI_* variables: such a server is not OpenAI.
 */
export interface OpenAICompatibleModelConnection {
  provider: 'openai-compatible';
  /** The server's OpenAI-compatible root, e.g. `https://api.moonshot.ai/v1`, `http://127.0.0.1:11434/v1`. */
  baseURL: string;
  /** The key, given directly. Neither this nor `apiKeyEnv`: no Authorization header (local servers). */
  apiKey?: string;
  /** The environment variable that holds the key (read on the worker), e.g. `MOONSHOT_API_KEY`. */
  apiKeyEnv?: string;
  /** Extra headers on every request (e.g. OpenRouter's `HTTP-Referer` and `X-Title`). */
  headers?: Record<string, string>;
  /**
   * The output limit's field: `max_tokens` (default; what compatible servers all read) or OpenAI's
   * newer `max_completion_tokens`.
   */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
  /** The models take `reasoning_effort` (thinking levels are sent); default false: thinking is refused. */
  reasoningEffort?: boolean;
}
