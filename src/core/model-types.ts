/** The shapes of the model table's rows (./model-table reads them, ./model-table-data holds them). */

/** USD per million tokens of each token class a provider bills. */
export interface ModelPrices {
  /** Input tokens neither read from nor written to a cache. */
  input: number;
  output: number;
  /** Input tokens read from the prompt cache (cache hits). */
  cacheRead: number;
  /** Input tokens written to the prompt cache (Anthropic: its 5-minute cache; providers without write fees: input). */
  cacheWrite: number;
  /** Written to Anthropic's 1-hour cache (absent: cacheWrite). */
  cacheWrite1h?: number;
}

export interface ModelCapabilities {
  tools: boolean;
  thinking: boolean;
  caching: boolean;
  vision: boolean;
}

export interface ModelTableRow {
  /** Who serves the model's list price (anthropic, openai, google, moonshot, or an app's own name). */
  provider: string;
  name: string;
  /** The model ids this row covers. */
  match: RegExp;
  contextWindowTokens?: number;
  maxOutputTokens?: number;
  capabilities?: ModelCapabilities;
  prices?: ModelPrices;
  /** A prompt (input + cache reads + cache writes) over `promptTokens` pays these prices on every token of the call. */
  above?: { promptTokens: number; prices: ModelPrices };
  /** Why a figure may be off (third-party source, recent change). */
  unsure?: string;
}
