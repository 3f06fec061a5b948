import { contextBudget } from '../../src/core/budget';
import { estimateContextTokens } from '../../src/core/tokens';
import { session, summary, user } from './compaction-helpers';

describe('contextBudget', () => {
  const system = 's'.repeat(4000); // 1000 tokens
  const tools = [{ name: 't', input_schema: { type: 'object' } }];

  it('breaks the window into layers', () => {
    const entries = [summary(), ...session(2)];
    const h = estimateContextTokens({ system, tools, entries });
    const b = contextBudget({ system, tools, entries, contextWindowTokens: 100_000, reserveTokens: 4096 });
    expect(b.layers).toEqual({ systemPrompt: 1000, toolDefinitions: h.tools, summaries: h.summaries, history: h.history, reservedForResponse: 4096 });
    expect(b.usedTokens).toBe(h.total);
    expect(b.availableForHistory).toBe(100_000 - 1000 - h.tools - 4096);
    expect(b.usagePercent).toBeCloseTo((h.total / 100_000) * 100, 1);
    expect(b.estimateMethod).toBe('heuristic');
    expect(b.hint).toBeUndefined();
  });

  it('hints when history passes 70% of what is available for it', () => {
    const entries = [user('x'.repeat(4 * 7100))]; // ~7104 tokens
    const b = contextBudget({ entries, contextWindowTokens: 14_000, reserveTokens: 4000 }); // 10,000 available
    expect(b.historyPercentOfAvailable).toBeGreaterThan(70);
    expect(b.hint).toMatch(/compact/);
    expect(contextBudget({ entries, contextWindowTokens: 20_000, reserveTokens: 4000 }).hint).toBeUndefined();
  });

  it('uses the usage anchor for the total when it fits', () => {
    const entries = session(2);
    const b = contextBudget({ system, entries, contextWindowTokens: 100_000, reserveTokens: 0, anchor: { inputTokens: 9000, outputTokens: 100, entryCount: 7 } });
    expect(b.estimateMethod).toBe('usage-anchored');
    expect(b.usedTokens).toBe(9100);
    expect(b.layers.history).toBe(9100 - 1000);
  });
});
