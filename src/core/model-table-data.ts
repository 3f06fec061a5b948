/**
 * The built-in model table: list prices (USD per million tokens) and limits of the frontier models, per
 * provider. Pure data; ./model-table reads it. First match wins, so a specific id comes before its family.
 *
 * Sources, looked up 2026-11-28 (prices change: an app overrides a row with init({ models })):
 * - Anthropic: platform.claude.com/docs/en/about-claude/pricing and the per-model overview pages
 *   (models/sonnet-5-5, sonnet-5, opus-5; "5m cache writes" is cacheWrite, "1h cache writes" cacheWrite1h,
 *   "cache hits" cacheRead). The same ids on Bedrock (`anthropic.claude-…`, `us.anthropic.claude-…`) and
 *   Vertex (`claude-…@date`) are priced as on the Claude API (their list prices match the API's; regional
 *   endpoints and inference_geo add a premium this table does not model).
 * - OpenAI: developers.openai.com/api/docs/pricing as quoted by third-party summaries (March 2026);
 *   "cached input" is cacheRead; OpenAI bills no cache writes (cacheWrite = input).
 * - Google: ai.google.dev/gemini-api/docs/pricing (Paid tier, text), as quoted 2026-03/07; "context caching
 *   price" is cacheRead; the cache's storage per hour is not a token price and is not counted.
 * - Moonshot: platform.moonshot.ai/docs/pricing/chat (2026-03); "cache hit" is cacheRead.
 * `unsure` marks a row whose figures came only from third-party pages or changed recently.
 */
import type { ModelTableRow } from './model-types';

const CLAUDE = { tools: true, thinking: true, caching: true, vision: true } as const;
const GPT = { tools: true, thinking: false, caching: true, vision: true } as const;
const REASONING = { tools: true, thinking: true, caching: true, vision: true } as const;
const GEMINI = { tools: true, thinking: true, caching: true, vision: true } as const;

/** A Claude family's id, wherever it is served (API, Bedrock's `anthropic.` prefix, Vertex's `@date`). */
const claude = (family: string): RegExp => new RegExp(`(?:^|[./])claude-${family}(?:$|[-@:\\[])`);
/** Claude's price ladder: cache writes 1.25× (5m) and 2× (1h) of input, unless said. */
const claudePrices = (input: number, output: number, cacheRead: number, cacheWrite = input * 1.25, cacheWrite1h = input * 2) => ({
  input,
  output,
  cacheRead,
  cacheWrite,
  cacheWrite1h,
});
/** Providers that bill no cache writes: a written token costs what an input token does. */
const flat = (input: number, output: number, cacheRead: number) => ({ input, output, cacheRead, cacheWrite: input });

export const BUILTIN_MODEL_TABLE: readonly ModelTableRow[] = [
  // Anthropic (Claude API; the same ids on Bedrock and Vertex)
  { provider: 'anthropic', name: 'Claude Fable 5.1', match: claude('fable-5-1'), contextWindowTokens: 1_000_000, maxOutputTokens: 128_000, capabilities: CLAUDE, prices: claudePrices(10, 50, 0.25) },
  { provider: 'anthropic', name: 'Claude Fable 5', match: claude('fable-5'), contextWindowTokens: 1_000_000, maxOutputTokens: 128_000, capabilities: CLAUDE, prices: claudePrices(10, 50, 1) },
  { provider: 'anthropic', name: 'Claude Opus 5.5', match: claude('opus-5-5'), contextWindowTokens: 1_000_000, maxOutputTokens: 128_000, capabilities: CLAUDE, prices: claudePrices(4, 20, 0.2), unsure: 'cache prices from third-party pages (0.05× read, 1.25×/2× writes)' },
  { provider: 'anthropic', name: 'Claude Opus 5', match: claude('opus-5'), contextWindowTokens: 1_000_000, maxOutputTokens: 128_000, capabilities: CLAUDE, prices: claudePrices(5, 25, 0.5) },
  { provider: 'anthropic', name: 'Claude Opus 4.5', match: claude('opus-4-5'), contextWindowTokens: 200_000, maxOutputTokens: 64_000, capabilities: CLAUDE, prices: claudePrices(5, 25, 0.5) },
  { provider: 'anthropic', name: 'Claude Opus 4.6–4.8', match: claude('opus-4-[678]'), contextWindowTokens: 1_000_000, maxOutputTokens: 128_000, capabilities: CLAUDE, prices: claudePrices(5, 25, 0.5) },
  { provider: 'anthropic', name: 'Claude Opus 4 / 4.1', match: claude('opus-4'), contextWindowTokens: 200_000, maxOutputTokens: 32_000, capabilities: CLAUDE, prices: claudePrices(15, 75, 1.5) },
  { provider: 'anthropic', name: 'Claude Sonnet 5.5', match: claude('sonnet-5-5'), contextWindowTokens: 1_000_000, maxOutputTokens: 128_000, capabilities: CLAUDE, prices: claudePrices(2, 10, 0.2), unsure: 'cache reads may be $0.10 since 2026-10-07 (third-party reports); the pricing page seen says $0.20' },
  { provider: 'anthropic', name: 'Claude Sonnet 5', match: claude('sonnet-5'), contextWindowTokens: 1_000_000, maxOutputTokens: 128_000, capabilities: CLAUDE, prices: claudePrices(2, 10, 0.2) },
  { provider: 'anthropic', name: 'Claude Sonnet 4.6', match: claude('sonnet-4-6'), contextWindowTokens: 1_000_000, maxOutputTokens: 64_000, capabilities: CLAUDE, prices: claudePrices(3, 15, 0.3) },
  { provider: 'anthropic', name: 'Claude Sonnet 4 / 4.5 / 3.7', match: claude('(?:sonnet-4|3-7-sonnet)'), contextWindowTokens: 200_000, maxOutputTokens: 64_000, capabilities: CLAUDE, prices: claudePrices(3, 15, 0.3) },
  { provider: 'anthropic', name: 'Claude Haiku 5.5', match: claude('haiku-5-5'), contextWindowTokens: 1_000_000, maxOutputTokens: 128_000, capabilities: CLAUDE, prices: claudePrices(0.1, 0.5, 0.01, 0.125, 0.2), above: { promptTokens: 100_000, prices: claudePrices(0.5, 2.5, 0.05, 0.625, 1) }, unsure: 'prices from third-party pages; prompts over 100k tokens pay the higher band' },
  { provider: 'anthropic', name: 'Claude Haiku 4.5', match: claude('haiku-4-5'), contextWindowTokens: 200_000, maxOutputTokens: 64_000, capabilities: CLAUDE, prices: claudePrices(1, 5, 0.1) },
  { provider: 'anthropic', name: 'Claude Haiku 3.5', match: claude('3-5-haiku'), contextWindowTokens: 200_000, maxOutputTokens: 8_192, capabilities: { ...CLAUDE, thinking: false }, prices: claudePrices(0.8, 4, 0.08) },
  { provider: 'anthropic', name: 'Claude Haiku 3', match: claude('3-haiku'), contextWindowTokens: 200_000, maxOutputTokens: 4_096, capabilities: { ...CLAUDE, thinking: false }, prices: claudePrices(0.25, 1.25, 0.03, 0.3, 0.5) },

  // OpenAI (Responses / Chat Completions)
  { provider: 'openai', name: 'GPT-5.4', match: /^gpt-5\.4(?:$|-20)/, contextWindowTokens: 272_000, maxOutputTokens: 128_000, capabilities: REASONING, prices: flat(2.5, 15, 0.25), unsure: 'third-party summary (March 2026); cached input assumed 0.1× as for gpt-5.x' },
  { provider: 'openai', name: 'GPT-5.2', match: /^gpt-5\.2(?:$|-20)/, contextWindowTokens: 400_000, maxOutputTokens: 128_000, capabilities: REASONING, prices: flat(1.75, 14, 0.175), unsure: 'not confirmed on a page seen here' },
  { provider: 'openai', name: 'GPT-5 nano', match: /^gpt-5(?:\.\d)?-nano/, contextWindowTokens: 400_000, maxOutputTokens: 128_000, capabilities: REASONING, prices: flat(0.05, 0.4, 0.005) },
  { provider: 'openai', name: 'GPT-5 mini', match: /^gpt-5(?:\.\d)?-mini/, contextWindowTokens: 400_000, maxOutputTokens: 128_000, capabilities: REASONING, prices: flat(0.25, 2, 0.025) },
  { provider: 'openai', name: 'GPT-5 pro', match: /^gpt-5(?:\.\d)?-pro/, contextWindowTokens: 400_000, maxOutputTokens: 272_000, capabilities: REASONING, prices: flat(15, 120, 15) },
  { provider: 'openai', name: 'GPT-5 / 5.1 (and -codex)', match: /^gpt-5(?:\.1)?(?:$|-codex|-20|-chat)/, contextWindowTokens: 400_000, maxOutputTokens: 128_000, capabilities: REASONING, prices: flat(1.25, 10, 0.125) },
  { provider: 'openai', name: 'GPT-4.1 nano', match: /^gpt-4\.1-nano/, contextWindowTokens: 1_047_576, maxOutputTokens: 32_768, capabilities: GPT, prices: flat(0.1, 0.4, 0.025) },
  { provider: 'openai', name: 'GPT-4.1 mini', match: /^gpt-4\.1-mini/, contextWindowTokens: 1_047_576, maxOutputTokens: 32_768, capabilities: GPT, prices: flat(0.4, 1.6, 0.1) },
  { provider: 'openai', name: 'GPT-4.1', match: /^gpt-4\.1(?:$|-20)/, contextWindowTokens: 1_047_576, maxOutputTokens: 32_768, capabilities: GPT, prices: flat(2, 8, 0.5) },
  { provider: 'openai', name: 'GPT-4o mini', match: /^gpt-4o-mini/, contextWindowTokens: 128_000, maxOutputTokens: 16_384, capabilities: GPT, prices: flat(0.15, 0.6, 0.075) },
  { provider: 'openai', name: 'GPT-4o', match: /^gpt-4o(?:$|-20)/, contextWindowTokens: 128_000, maxOutputTokens: 16_384, capabilities: GPT, prices: flat(2.5, 10, 1.25) },
  { provider: 'openai', name: 'o4-mini', match: /^o4-mini/, contextWindowTokens: 200_000, maxOutputTokens: 100_000, capabilities: REASONING, prices: flat(1.1, 4.4, 0.275) },
  { provider: 'openai', name: 'o3-mini', match: /^o3-mini/, contextWindowTokens: 200_000, maxOutputTokens: 100_000, capabilities: { ...REASONING, vision: false }, prices: flat(1.1, 4.4, 0.55) },
  { provider: 'openai', name: 'o3', match: /^o3(?:$|-20)/, contextWindowTokens: 200_000, maxOutputTokens: 100_000, capabilities: REASONING, prices: flat(2, 8, 0.5) },
  { provider: 'openai', name: 'o1', match: /^o1(?:$|-20)/, contextWindowTokens: 200_000, maxOutputTokens: 100_000, capabilities: REASONING, prices: flat(15, 60, 7.5) },

  // Google Gemini (prompts over 200k tokens pay the higher band on Pro models)
  { provider: 'google', name: 'Gemini 3 / 3.1 Pro', match: /^gemini-3(?:\.1)?-pro/, contextWindowTokens: 1_048_576, maxOutputTokens: 65_536, capabilities: GEMINI, prices: flat(2, 12, 0.2), above: { promptTokens: 200_000, prices: flat(4, 18, 0.4) } },
  { provider: 'google', name: 'Gemini 3 Flash', match: /^gemini-3(?:\.1)?-flash(?!-lite)/, contextWindowTokens: 1_048_576, maxOutputTokens: 65_536, capabilities: GEMINI, prices: flat(0.5, 3, 0.05) },
  { provider: 'google', name: 'Gemini 2.5 Pro', match: /^gemini-2\.5-pro/, contextWindowTokens: 1_048_576, maxOutputTokens: 65_536, capabilities: GEMINI, prices: flat(1.25, 10, 0.125), above: { promptTokens: 200_000, prices: flat(2.5, 15, 0.25) } },
  { provider: 'google', name: 'Gemini 2.5 Flash-Lite', match: /^gemini-2\.5-flash-lite/, contextWindowTokens: 1_048_576, maxOutputTokens: 65_536, capabilities: GEMINI, prices: flat(0.1, 0.4, 0.01) },
  { provider: 'google', name: 'Gemini 2.5 Flash', match: /^gemini-2\.5-flash/, contextWindowTokens: 1_048_576, maxOutputTokens: 65_536, capabilities: GEMINI, prices: flat(0.3, 2.5, 0.03) },

  // Moonshot Kimi (OpenAI-compatible)
  { provider: 'moonshot', name: 'Kimi K2.6', match: /^kimi-k2\.6/, contextWindowTokens: 262_144, capabilities: { ...REASONING }, prices: flat(0.95, 4, 0.16), unsure: 'third-party page (June 2026)' },
  { provider: 'moonshot', name: 'Kimi K2.5', match: /^kimi-k2\.5/, contextWindowTokens: 262_144, capabilities: { ...REASONING }, prices: flat(0.6, 3, 0.1) },
  { provider: 'moonshot', name: 'Kimi K2 (0711)', match: /^kimi-k2-0711/, contextWindowTokens: 131_072, capabilities: { ...GPT, vision: false }, prices: flat(0.6, 2.5, 0.15) },
  { provider: 'moonshot', name: 'Kimi K2', match: /^kimi-k2(?:$|-)/, contextWindowTokens: 262_144, capabilities: { ...GPT, vision: false }, prices: flat(0.6, 2.5, 0.15), unsure: 'turbo and thinking variants are priced apart by Moonshot; override them' },
];
