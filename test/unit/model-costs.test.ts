/** The model table (src/core/model-table.ts) and what calls cost from it (src/core/costs.ts). */
import { builtinModelTable, callCostBoundUsd, callCostUsd, modelInfo, parseModelOverrides } from '../../src/core/model-table';
import { BudgetExceededError, CostMeter, costText, usd } from '../../src/core/costs';
import type { ModelCallRequest } from '../../src/core/ports';
import { contextBudget } from '../../src/core/budget';
import { contextGauge } from '../../src/board/gauge';
import { applySettingsPatch, defaultSessionSettings } from '../../src/core/sessions/settings';

const M = 1_000_000;

describe('the model table', () => {
  it.each([
    ['claude-sonnet-5-5', 'Claude Sonnet 5.5', 2, 10],
    ['claude-sonnet-5', 'Claude Sonnet 5', 2, 10],
    ['claude-sonnet-4-5-20250929', 'Claude Sonnet 4 / 4.5 / 3.7', 3, 15],
    ['us.anthropic.claude-sonnet-4-5-20250929-v1:0', 'Claude Sonnet 4 / 4.5 / 3.7', 3, 15],
    ['claude-opus-4-1@20250805', 'Claude Opus 4 / 4.1', 15, 75],
    ['claude-opus-4-5', 'Claude Opus 4.5', 5, 25],
    ['claude-haiku-4-5-20251001', 'Claude Haiku 4.5', 1, 5],
    ['gpt-5.1', 'GPT-5 / 5.1 (and -codex)', 1.25, 10],
    ['gpt-5-mini', 'GPT-5 mini', 0.25, 2],
    ['gpt-4.1', 'GPT-4.1', 2, 8],
    ['gpt-4.1-mini-2025-04-14', 'GPT-4.1 mini', 0.4, 1.6],
    ['o4-mini', 'o4-mini', 1.1, 4.4],
    ['gemini-2.5-flash', 'Gemini 2.5 Flash', 0.3, 2.5],
    ['gemini-2.5-flash-lite', 'Gemini 2.5 Flash-Lite', 0.1, 0.4],
    ['gemini-3-pro-preview', 'Gemini 3 / 3.1 Pro', 2, 12],
    ['kimi-k2-0905-preview', 'Kimi K2', 0.6, 2.5],
  ])('prices %s as %s', (model, name, input, output) => {
    const info = modelInfo(model);
    expect(info.name).toBe(name);
    expect(info.prices).toMatchObject({ input, output });
  });

  it("knows each row's window, output limit and capabilities, and every price is a number", () => {
    for (const row of builtinModelTable()) {
      expect(row.prices && Object.values(row.prices).every((p) => typeof p === 'number' && p >= 0)).toBe(true);
      expect(row.contextWindowTokens).toBeGreaterThan(0);
      expect(row.capabilities).toBeDefined();
    }
    expect(modelInfo('claude-sonnet-5-5')).toMatchObject({ provider: 'anthropic', contextWindowTokens: 1_000_000, maxOutputTokens: 128_000 });
  });

  it('has no price for a model it does not know', () => {
    expect(modelInfo('my-local-llama').prices).toBeUndefined();
    expect(callCostUsd({ inputTokens: 10, outputTokens: 10 }, modelInfo('my-local-llama'))).toBeNull();
  });

  it("takes the app's row over the built-in one, and fills cache prices from input", () => {
    const overrides = parseModelOverrides({ 'my-model': { contextWindowTokens: 32_000, prices: { input: 1, output: 2 } }, 'claude-sonnet-5-5': { prices: { input: 9, output: 9, cacheRead: 1, cacheWrite: 3 } } });
    expect(modelInfo('my-model', overrides)).toMatchObject({ source: 'app', contextWindowTokens: 32_000, prices: { input: 1, output: 2, cacheRead: 1, cacheWrite: 1 } });
    expect(modelInfo('claude-sonnet-5-5', overrides)).toMatchObject({ source: 'app', contextWindowTokens: 1_000_000, prices: { input: 9, output: 9, cacheRead: 1, cacheWrite: 3 } });
  });

  it('refuses a bad row naming the field', () => {
    expect(() => parseModelOverrides({ m: { prices: { input: -1, output: 1 } } })).toThrow(/models: m\.prices\.input/);
    expect(() => parseModelOverrides({ m: { window: 5 } })).toThrow(/models: m\.window: Unrecognized key: "window"/);
  });
});

describe('what a call costs', () => {
  const sonnet = modelInfo('claude-sonnet-5-5'); // 2 in, 10 out, 0.2 read, 2.5 write (5m), 4 write (1h)

  it('prices each token class at its own rate', () => {
    expect(callCostUsd({ inputTokens: M, outputTokens: 0 }, sonnet)).toBeCloseTo(2, 10);
    expect(callCostUsd({ inputTokens: 0, outputTokens: M }, sonnet)).toBeCloseTo(10, 10);
    expect(callCostUsd({ inputTokens: 0, outputTokens: 0, cacheReadInputTokens: M }, sonnet)).toBeCloseTo(0.2, 10);
    expect(callCostUsd({ inputTokens: 0, outputTokens: 0, cacheCreationInputTokens: M }, sonnet)).toBeCloseTo(2.5, 10);
    expect(callCostUsd({ inputTokens: 0, outputTokens: 0, cacheCreationInputTokens: M }, sonnet, { cacheTtl: '1h' })).toBeCloseTo(4, 10);
    expect(callCostUsd({ inputTokens: 1000, outputTokens: 200, cacheReadInputTokens: 5000, cacheCreationInputTokens: 300 }, sonnet)).toBeCloseTo(
      (1000 * 2 + 200 * 10 + 5000 * 0.2 + 300 * 2.5) / M,
      12,
    );
  });

  it('prices a long prompt at the higher band where the provider has one', () => {
    const pro = modelInfo('gemini-2.5-pro');
    expect(callCostUsd({ inputTokens: 200_000, outputTokens: 0 }, pro)).toBeCloseTo(0.25, 10);
    expect(callCostUsd({ inputTokens: 200_001, outputTokens: 0 }, pro)).toBeCloseTo((200_001 * 2.5) / M, 10);
  });

  it('bounds a call before it is made: the prompt at the dearest input rate, all its output at the output rate', () => {
    expect(callCostBoundUsd(sonnet, { promptTokens: 1000, maxOutputTokens: 4096 })).toBeCloseTo((1000 * 2 + 4096 * 10) / M, 12);
    expect(callCostBoundUsd(sonnet, { promptTokens: 1000, maxOutputTokens: 0, cacheTtl: '1h' })).toBeCloseTo((1000 * 4) / M, 12);
    expect(callCostBoundUsd(modelInfo('nobody'), { promptTokens: 1, maxOutputTokens: 1 })).toBeNull();
  });

  it('shows amounts for people, and an unknown cost as unknown', () => {
    expect(usd(12.3456)).toBe('$12.35');
    expect(usd(0.01234)).toBe('$0.0123');
    expect(usd(0.00042)).toBe('$0.00042');
    expect(usd(0)).toBe('$0');
    expect(costText({ usd: null, pricedUsd: 0.5, unpricedCalls: 1, unpricedModels: ['x'], turnUsd: null })).toBe('unknown (no price for x; $0.5 for the priced calls)');
  });
});

describe("a conversation's meter and budget", () => {
  const req = (over: Partial<ModelCallRequest> = {}): ModelCallRequest => ({ sessionId: 's', model: 'claude-sonnet-5-5', maxTokens: 1000, tools: [], entries: [{ type: 'user', text: 'x'.repeat(400) }], ...over });

  it('sums the calls, and an unpriced call makes the total unknown, never 0', () => {
    const meter = new CostMeter();
    expect(meter.record({ model: 'claude-sonnet-5-5', usage: { inputTokens: 100, outputTokens: 10 } }, {})).toBeCloseTo((100 * 2 + 10 * 10) / M, 12);
    meter.record({ model: 'claude-haiku-4-5', usage: { inputTokens: 100, outputTokens: 10, cacheReadInputTokens: 50 } }, {});
    expect(meter.cost().usd).toBeCloseTo((100 * 2 + 10 * 10 + 100 * 1 + 10 * 5 + 50 * 0.1) / M, 12);
    expect(meter.usage()).toEqual({ inputTokens: 200, outputTokens: 20, cacheReadInputTokens: 50, cacheCreationInputTokens: 0, modelCalls: 2 });
    expect(meter.record({ model: 'mystery', usage: { inputTokens: 1, outputTokens: 1 } }, {})).toBeNull();
    expect(meter.cost()).toMatchObject({ usd: null, unpricedCalls: 1, unpricedModels: ['mystery'] });
  });

  it('refuses the call that could pass the budget, before it is made', () => {
    const meter = new CostMeter();
    meter.record({ model: 'claude-sonnet-5-5', usage: { inputTokens: 0, outputTokens: 1000 } }, {}); // $0.01
    const next = req(); // ~100 prompt tokens + 1000 output: at most ~$0.0102
    expect(meter.withinBudget(next, { budget: { maxCostUsd: 0.021 } })).toBe(next);
    const err = (() => {
      try {
        meter.withinBudget(next, { budget: { maxCostUsd: 0.02 } });
      } catch (e) {
        return e;
      }
    })() as BudgetExceededError;
    expect(err).toBeInstanceOf(BudgetExceededError);
    expect(err.code).toBe('BUDGET_EXCEEDED');
    expect(err.spentUsd).toBeCloseTo(0.01, 12);
    expect(err.nextCallBoundUsd).toBeGreaterThan(0.01);
    // Thinking tokens are output too: the same call with thinking is dearer.
    expect(() => meter.withinBudget(req({ thinking: { budgetTokens: 1024 } }), { budget: { maxCostUsd: 0.021 } })).toThrow(BudgetExceededError);
  });

  it('refuses a budgeted call whose model has no price (its cost cannot be kept under a limit)', () => {
    expect(() => new CostMeter().withinBudget(req({ model: 'mystery' }), { budget: { maxCostUsd: 100 } })).toThrow(/no price/);
    expect(new CostMeter().withinBudget(req({ model: 'mystery' }), {})).toBeDefined();
  });
});

describe("the board's gauge", () => {
  const budget = contextBudget({ entries: [{ type: 'user', text: 'hi' }], contextWindowTokens: 200_000, reserveTokens: 4096 });
  const usage = { inputTokens: 2000, outputTokens: 800, modelCalls: 2, summarizer: { inputTokens: 0, outputTokens: 0, calls: 0 } };

  it("shows the session's cost, and an unknown one as unknown", () => {
    const priced = contextGauge({ budget, entries: [], compaction: null, usage: { ...usage, cost: { usd: 0.021, pricedUsd: 0.021, unpricedCalls: 0, unpricedModels: [], turnUsd: 0.01 } } });
    expect(priced.usage?.cost).toBe('$0.021');
    const unknown = contextGauge({ budget, entries: [], compaction: null, usage: { ...usage, cost: { usd: null, pricedUsd: 0, unpricedCalls: 2, unpricedModels: ['my-llama'], turnUsd: null } } });
    expect(unknown.usage?.cost).toBe('unknown (no price for my-llama)');
  });
});

describe('a session budget setting and a carried cost', () => {
  it('is validated by field, and null removes it', () => {
    const s = applySettingsPatch(defaultSessionSettings(), { budget: { maxCostUsd: 2 } }, { started: true });
    expect(s.budget).toEqual({ maxCostUsd: 2 });
    expect(applySettingsPatch(s, { budget: null }, { started: true }).budget).toBeUndefined();
    expect(() => applySettingsPatch(s, { budget: { maxCostUsd: -1 } }, { started: true })).toThrow(/settings\.budget\.maxCostUsd/);
  });

  it('goes on from the cost an earlier run carried (a budget counts the whole session)', () => {
    const first = new CostMeter();
    first.record({ model: 'claude-sonnet-5-5', usage: { inputTokens: 0, outputTokens: 1000 } }, {});
    const next = new CostMeter();
    next.restore({ ...first.usage(), cost: first.cost() });
    expect(next.cost().usd).toBeCloseTo(0.01, 12);
    expect(() => next.withinBudget({ sessionId: 's', model: 'claude-sonnet-5-5', maxTokens: 1000, tools: [], entries: [] }, { budget: { maxCostUsd: 0.015 } })).toThrow(BudgetExceededError);
  });
});
