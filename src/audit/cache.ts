/**
 * Prompt-cache accounting for the audit: per call and per run, how many input tokens were read from
 * the cache, written to it, and sent uncached, and the hit rate read / (read + write + uncached).
 */
import type { Usage } from '../core/entries';

export interface CacheAccount {
  readTokens: number;
  writeTokens: number;
  uncachedInputTokens: number;
  /** read / (read + write + uncached), 0..1 rounded to 3 places; undefined when no input was counted. */
  hitRate: number | undefined;
}

export function cacheAccount(usage: Pick<Usage, 'inputTokens' | 'cacheReadInputTokens' | 'cacheCreationInputTokens'>): CacheAccount {
  const readTokens = usage.cacheReadInputTokens ?? 0;
  const writeTokens = usage.cacheCreationInputTokens ?? 0;
  const uncachedInputTokens = usage.inputTokens;
  const all = readTokens + writeTokens + uncachedInputTokens;
  return { readTokens, writeTokens, uncachedInputTokens, hitRate: all > 0 ? Math.round((readTokens / all) * 1000) / 1000 : undefined };
}

/** The sum of two accounts, with the hit rate of the sum. */
export function addCacheAccounts(a: CacheAccount, b: CacheAccount): CacheAccount {
  return cacheAccount({
    inputTokens: a.uncachedInputTokens + b.uncachedInputTokens,
    cacheReadInputTokens: a.readTokens + b.readTokens,
    cacheCreationInputTokens: a.writeTokens + b.writeTokens,
  });
}

export function emptyCacheAccount(): CacheAccount {
  return { readTokens: 0, writeTokens: 0, uncachedInputTokens: 0, hitRate: undefined };
}

/** "cache 1200 read / 300 written / 45 uncached · hit rate 77.4%" */
export function cacheText(c: CacheAccount): string {
  const rate = c.hitRate === undefined ? 'n/a' : `${(c.hitRate * 100).toFixed(1)}%`;
  return `cache ${c.readTokens} read / ${c.writeTokens} written / ${c.uncachedInputTokens} uncached · hit rate ${rate}`;
}
