/** The audit's prompt-cache accounting: hit rate = read / (read + write + uncached input). */
import { addCacheAccounts, cacheAccount, cacheText, emptyCacheAccount } from '../../src/audit/cache';

describe('audit cache accounting', () => {
  it('per call: read, written, uncached and the hit rate', () => {
    const c = cacheAccount({ inputTokens: 100, cacheReadInputTokens: 600, cacheCreationInputTokens: 300 });
    expect(c).toEqual({ readTokens: 600, writeTokens: 300, uncachedInputTokens: 100, hitRate: 0.6 });
    expect(cacheText(c)).toBe('cache 600 read / 300 written / 100 uncached · hit rate 60.0%');
  });

  it('no cache fields: everything uncached, rate 0; no input at all: no rate', () => {
    expect(cacheAccount({ inputTokens: 50 })).toEqual({ readTokens: 0, writeTokens: 0, uncachedInputTokens: 50, hitRate: 0 });
    expect(emptyCacheAccount().hitRate).toBeUndefined();
    expect(cacheText(emptyCacheAccount())).toMatch(/hit rate n\/a/);
  });

  it('the run: sums, with the rate of the sums (not the mean of rates)', () => {
    const run = addCacheAccounts(
      cacheAccount({ inputTokens: 10, cacheReadInputTokens: 0, cacheCreationInputTokens: 990 }),
      cacheAccount({ inputTokens: 10, cacheReadInputTokens: 990, cacheCreationInputTokens: 0 }),
    );
    expect(run).toEqual({ readTokens: 990, writeTokens: 990, uncachedInputTokens: 20, hitRate: 0.495 });
  });
});
