/**
 * What a model is and what it costs: its context window, output limit, capabilities and price per token
 * class (USD per million tokens), from the built-in table (./model-table-data) under the app's own rows
 * (`init({ models })`). Pure and deterministic: workflow code prices each call from the usage the provider
 * reported, so a replay computes the same cost. A model the table does not know has no price: its cost is
 * unknown (null), never 0.
 */
import { z } from 'zod';
import type { Usage } from './entries';
import { parseWith } from './validate';
import { BUILTIN_MODEL_TABLE } from './model-table-data';
import type { ModelCapabilities, ModelPrices, ModelTableRow } from './model-types';
import { lazySchema } from './lazy-schema';

export type { ModelCapabilities, ModelPrices, ModelTableRow } from './model-types';

/** What the table says of one model id. */
export interface ModelInfo {
  model: string;
  /** The row that matched ('app' for a row the app gave in init({ models })). */
  source: 'builtin' | 'app';
  provider?: string;
  name?: string;
  contextWindowTokens?: number;
  maxOutputTokens?: number;
  capabilities?: ModelCapabilities;
  prices?: ModelPrices;
  above?: { promptTokens: number; prices: ModelPrices };
  unsure?: string;
}

const price = lazySchema(() => z.number().finite().nonnegative());
export const modelPricesSchema = lazySchema(() => z
  .object({ input: price, output: price, cacheRead: price.optional(), cacheWrite: price.optional(), cacheWrite1h: price.optional() })
  .strict());

/** One row an app gives for a model id (exact id), over the built-in row of that id. */
export const modelOverrideSchema = lazySchema(() => z
  .object({
    contextWindowTokens: z.number().int().positive().optional(),
    maxOutputTokens: z.number().int().positive().optional(),
    prices: modelPricesSchema.optional(),
    capabilities: z.object({ tools: z.boolean(), thinking: z.boolean(), caching: z.boolean(), vision: z.boolean() }).partial().strict().optional(),
  })
  .strict());

/**
 * `init({ models: { 'my-model': { contextWindowTokens, maxOutputTokens, prices: { input, output, cacheRead?,
 * cacheWrite? } } } })`: a model the table lacks, or a price of yours (a negotiated rate, a new model).
 * cacheRead and cacheWrite default to input.
 */
export type ModelOverride = {
  contextWindowTokens?: number;
  maxOutputTokens?: number;
  prices?: { input: number; output: number; cacheRead?: number; cacheWrite?: number; cacheWrite1h?: number };
  capabilities?: Partial<ModelCapabilities>;
};
export type ModelOverrides = Record<string, ModelOverride>;

export const modelOverridesSchema = lazySchema(() => z.record(z.string().min(1).max(200), modelOverrideSchema));

export function parseModelOverrides(overrides: unknown, where = 'models'): ModelOverrides {
  return parseWith(modelOverridesSchema, overrides, where) as ModelOverrides;
}

/** The built-in table's rows (for docs and `fh`): read-only. */
export function builtinModelTable(): readonly ModelTableRow[] {
  return BUILTIN_MODEL_TABLE;
}

/** What the table (under the app's rows) says of `model`. An id nobody priced comes back with no prices. */
export function modelInfo(model: string, overrides?: ModelOverrides): ModelInfo {
  const row = BUILTIN_MODEL_TABLE.find((r) => r.match.test(model));
  const base: ModelInfo = row
    ? { model, source: 'builtin', provider: row.provider, name: row.name, ...definedOf(row) }
    : { model, source: 'builtin' };
  const own = overrides && Object.prototype.hasOwnProperty.call(overrides, model) ? overrides[model] : undefined;
  if (!own) return base;
  const info: ModelInfo = { ...base, source: 'app' };
  if (own.contextWindowTokens !== undefined) info.contextWindowTokens = own.contextWindowTokens;
  if (own.maxOutputTokens !== undefined) info.maxOutputTokens = own.maxOutputTokens;
  if (own.capabilities) info.capabilities = { ...(base.capabilities ?? { tools: true, thinking: false, caching: false, vision: false }), ...stripUndefined(own.capabilities) };
  if (own.prices) {
    const p = own.prices;
    // The app's price is the price: the built-in long-prompt band no longer applies, nor the doubt.
    info.prices = { input: p.input, output: p.output, cacheRead: p.cacheRead ?? p.input, cacheWrite: p.cacheWrite ?? p.input, ...(p.cacheWrite1h !== undefined ? { cacheWrite1h: p.cacheWrite1h } : {}) };
    delete info.above;
    delete info.unsure;
  }
  return info;
}

function definedOf(row: ModelTableRow): Partial<ModelInfo> {
  const { contextWindowTokens, maxOutputTokens, capabilities, prices, above, unsure } = row;
  return stripUndefined({ contextWindowTokens, maxOutputTokens, capabilities, prices, above, unsure });
}

function stripUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/** Tokens of a call's prompt, as providers band prices by it: uncached input, cache reads and writes. */
export function promptTokens(usage: Usage): number {
  return usage.inputTokens + (usage.cacheReadInputTokens ?? 0) + (usage.cacheCreationInputTokens ?? 0);
}

/** The prices one call pays: the long-prompt band when its prompt is over the row's threshold. */
export function pricesFor(info: ModelInfo, prompt: number): ModelPrices | undefined {
  if (!info.prices) return undefined;
  return info.above && prompt > info.above.promptTokens ? info.above.prices : info.prices;
}

/**
 * One call's cost in USD from the usage its provider reported (Anthropic's shape: inputTokens excludes the
 * cache's reads and writes), or null when the model has no price. `cacheTtl` '1h' prices cache writes at
 * the 1-hour rate where the row has one.
 */
export function callCostUsd(usage: Usage, info: ModelInfo, options: { cacheTtl?: '5m' | '1h' } = {}): number | null {
  const p = pricesFor(info, promptTokens(usage));
  if (!p) return null;
  const write = options.cacheTtl === '1h' ? (p.cacheWrite1h ?? p.cacheWrite) : p.cacheWrite;
  const microDollars =
    usage.inputTokens * p.input +
    usage.outputTokens * p.output +
    (usage.cacheReadInputTokens ?? 0) * p.cacheRead +
    (usage.cacheCreationInputTokens ?? 0) * write;
  return microDollars / 1_000_000;
}

/**
 * The most a call may cost before it is made: every prompt token at the dearest input rate (a cache write
 * can cost more than plain input) and every token it may write (`maxOutputTokens`, thinking included) at the
 * output rate. The prompt is an estimate (./tokens), so this is a bound on what the call can add, not a
 * forecast of it. null: the model has no price.
 */
export function callCostBoundUsd(info: ModelInfo, estimate: { promptTokens: number; maxOutputTokens: number; cacheTtl?: '5m' | '1h' }): number | null {
  const p = pricesFor(info, estimate.promptTokens);
  if (!p) return null;
  const write = estimate.cacheTtl === '1h' ? (p.cacheWrite1h ?? p.cacheWrite) : p.cacheWrite;
  const dearestInput = estimate.cacheTtl ? Math.max(p.input, write) : p.input;
  return (estimate.promptTokens * dearestInput + estimate.maxOutputTokens * p.output) / 1_000_000;
}
