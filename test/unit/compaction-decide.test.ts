import { decideCompaction, isIneffective, type CompactionDecisionInput } from '../../src/core/context/compaction/decide';
import type { ResolvedCompactionSettings } from '../../src/core/context/settings';
import { estimateContextTokens } from '../../src/core/tokens';
import { session } from './compaction-helpers';

const settings = (over: Partial<ResolvedCompactionSettings> = {}): ResolvedCompactionSettings => ({
  enabled: true,
  compactAtTokens: 100,
  reserveTokens: 10,
  keepRecentEntries: 4,
  recoverFromOverflow: true,
  contextWindowTokens: 200,
  ...over,
});

describe('decideCompaction', () => {
  const entries = session(10); // 40 entries, well over 100 tokens

  it('compacts when over the threshold and there is something to compact', () => {
    const d = decideCompaction({ entries, settings: settings() });
    const est = estimateContextTokens({ entries }).total;
    expect(d).toMatchObject({
      compact: true,
      reason: 'threshold',
      estimatedTokens: est,
      estimateMethod: 'heuristic',
      threshold: 100,
      contextWindowTokens: 200,
      warn: true,
      cut: 36,
      entriesBefore: 40,
      keptEntries: 4,
      ineffectiveSkip: false,
    });
    expect(d.usagePercent).toBeCloseTo((est / 200) * 100, 1);
    expect(d.why).toMatch(/over the threshold/);
  });

  it('does not compact below the threshold, when disabled, or with nothing to compact', () => {
    expect(decideCompaction({ entries, settings: settings({ compactAtTokens: 1e6, contextWindowTokens: 2e6 }) })).toMatchObject({ compact: false, reason: null, warn: false });
    expect(decideCompaction({ entries, settings: settings({ enabled: false }) })).toMatchObject({ compact: false, why: 'compaction is disabled' });
    const d = decideCompaction({ entries, settings: settings({ keepRecentEntries: 40 }) });
    expect(d).toMatchObject({ compact: false, cut: 0 });
    expect(d.why).toMatch(/nothing to compact/);
  });

  it('uses the usage anchor when given', () => {
    const d = decideCompaction({ entries, settings: settings(), anchor: { inputTokens: 10, outputTokens: 1, entryCount: 39 } });
    expect(d).toMatchObject({ estimatedTokens: 11, estimateMethod: 'usage-anchored', compact: false });
  });

  it('does not loop after an ineffective compaction until enough new entries arrive', () => {
    const input: CompactionDecisionInput = { entries, settings: settings(), lastCompaction: { entryCountAfter: 37, tokensAfter: 150, ineffective: true } };
    const d = decideCompaction(input);
    expect(d).toMatchObject({ compact: false, ineffectiveSkip: true, reason: null });
    expect(d.why).toMatch(/last compaction/);
    // 40 - 35 = 5 > keep (4): compact again.
    expect(decideCompaction({ ...input, lastCompaction: { entryCountAfter: 35, tokensAfter: 150, ineffective: true } })).toMatchObject({ compact: true, ineffectiveSkip: false });
    // An effective last compaction never blocks.
    expect(decideCompaction({ ...input, lastCompaction: { entryCountAfter: 39, tokensAfter: 50, ineffective: false } }).compact).toBe(true);
  });

  it('isIneffective means still above the threshold', () => {
    expect(isIneffective(101, 100)).toBe(true);
    expect(isIneffective(100, 100)).toBe(false);
  });

  it('is linear: 10,000 entries decide quickly', () => {
    const big = session(2500);
    const start = performance.now();
    for (let i = 0; i < 10; i++) decideCompaction({ entries: big, settings: settings({ keepRecentEntries: 20 }) });
    expect((performance.now() - start) / 10).toBeLessThan(100);
  });
});
