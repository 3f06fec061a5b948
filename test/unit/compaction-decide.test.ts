import { decideCompaction, decideFromFacts, decisionFacts, isIneffective, isQuiet, quietDecision, type CompactionDecisionInput } from '../../src/core/context/compaction/decide';
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

  it('is linear: 10x the entries, ~10x the work (property reads counted, not time)', () => {
    // Every property read on an entry or anything inside it is counted, wherever the code reads it (a
    // copy of the array still holds the same, counting, entries). Linear work grows ~10x from n to 10n;
    // a pass over the entries per entry grows ~100x.
    const reads = (turns: number): number => {
      let count = 0;
      const counting = <T extends object>(value: T): T =>
        new Proxy(value, {
          get(target, key, receiver) {
            count++;
            const v = Reflect.get(target, key, receiver);
            return v !== null && typeof v === 'object' ? counting(v) : v;
          },
        });
      const entries = session(turns).map(counting);
      decideCompaction({ entries, settings: settings({ keepRecentEntries: 20 }) });
      return count;
    };
    const small = reads(250); // 1,000 entries
    const big = reads(2500); // 10,000 entries
    expect(small).toBeGreaterThan(1000); // it does read the entries
    expect(big / small).toBeGreaterThan(5);
    expect(big / small).toBeLessThan(20);
  });
});

describe('what a decision travels with (the model activity input, every call)', () => {
  const entries = session(10);

  it('the facts carry only the settings the decision reads; the overflow ladder also gets recoverFromOverflow', () => {
    const threshold = decisionFacts({ entries, settings: settings({ keepRecentTokens: 50 }) });
    expect(threshold.settings).toEqual({ enabled: true, compactAtTokens: 100, contextWindowTokens: 200, keepRecentTokens: 50 });
    const overflow = decisionFacts({ entries, settings: settings(), trigger: 'overflow' });
    expect(overflow.settings).toEqual({ enabled: true, compactAtTokens: 100, contextWindowTokens: 200, recoverFromOverflow: true });
    // The same decision as from the full settings.
    expect(decideFromFacts(threshold)).toEqual(decideCompaction({ entries, settings: settings({ keepRecentTokens: 50 }) }));
  });

  it('a decision that changes nothing is quiet, and rebuilds from its facts to the same decision', () => {
    const facts = decisionFacts({ entries: session(1), settings: settings({ compactAtTokens: 10_000, contextWindowTokens: 100_000 }) });
    const decision = decideFromFacts(facts);
    expect(isQuiet(decision)).toBe(true);
    expect(quietDecision(facts)).toEqual(decision);
  });

  it('compacting, masking or warning is not quiet; a recorded quiet outcome wins over rules that would act now', () => {
    const over = decisionFacts({ entries, settings: settings() });
    expect(isQuiet(decideFromFacts(over))).toBe(false); // compacts
    expect(isQuiet({ ...decideFromFacts(over), compact: false, mask: { before: 3 } })).toBe(false);
    const tokens = over.estimatedTokens;
    const warn = decisionFacts({ entries, settings: settings({ compactAtTokens: tokens + 1, contextWindowTokens: tokens + 1 }) });
    expect(decideFromFacts(warn).warn).toBe(true);
    expect(isQuiet(decideFromFacts(warn))).toBe(false);
    const rebuilt = quietDecision(over);
    expect(rebuilt.compact).toBe(false);
    expect(rebuilt.reason).toBeNull();
    expect(isQuiet(rebuilt)).toBe(true);
  });
});
