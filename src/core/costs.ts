/**
 * What a conversation's model calls cost so far, and its budget. A CostMeter prices each call from the
 * usage its provider reported (./model-table), keeps the running total and the running turn's, and refuses
 * a call that could take the total past the budget (BUDGET_EXCEEDED) before it is made. Pure and
 * deterministic: on Temporal it runs in workflow code, and a replay prices the same usage the same way.
 */
import { z } from 'zod';
import type { Usage } from './entries';
import { FabricError } from './errors';
import { callCostBoundUsd, callCostUsd, modelInfo, type ModelOverrides } from './model-table';
import type { ModelCallRequest } from './ports';
import { estimateContextTokens } from './tokens';
import { parseWith } from './validate';
import { lazySchema } from './lazy-schema';

/** What the calls so far cost. A call whose model has no price makes the total unknown (null), never 0. */
export interface UsageCost {
  /** USD of every call so far; null while any call's model has no price. */
  usd: number | null;
  /** USD of the calls whose model has a price. */
  pricedUsd: number;
  /** Calls whose model has no price (set one with init({ models })). */
  unpricedCalls: number;
  /** The models without a price that answered calls. */
  unpricedModels: string[];
  /** The latest prompt's calls (the running one's while it runs); null: one had no price. */
  turnUsd: number | null;
}

/** A session's spending limit: no model call starts that could take its cost past `maxCostUsd`. */
export interface CostBudget {
  maxCostUsd: number;
}

export const costBudgetSchema = lazySchema(() => z.object({ maxCostUsd: z.number().finite().nonnegative() }).strict());

export function parseCostBudget(budget: unknown, where = 'budget'): CostBudget {
  return parseWith(costBudgetSchema, budget, where);
}

/**
 * The next model call could take the session's cost past its budget (or its cost cannot be known). Thrown
 * before the call: nothing was spent on it, the prompt is rolled back, and the session stays usable (raise
 * or remove the budget, and prompt again).
 */
export class BudgetExceededError extends FabricError {
  constructor(
    readonly maxCostUsd: number,
    readonly spentUsd: number | null,
    readonly nextCallBoundUsd: number | null,
    readonly model: string,
  ) {
    super(
      'BUDGET_EXCEEDED',
      spentUsd === null || nextCallBoundUsd === null
        ? `The session's budget of ${usd(maxCostUsd)} cannot be kept: ${spentUsd === null ? 'a model that answered earlier' : `model ${model}`} has no price (give it one with init({ models: { '${model}': { prices } } })), so the next call was not made.`
        : `The next call to ${model} could cost up to ${usd(nextCallBoundUsd)}; with ${usd(spentUsd)} spent that would pass the session's budget of ${usd(maxCostUsd)}, so it was not made. Raise the budget (settings.budget.maxCostUsd) to go on.`,
    );
  }
}

/** USD for people: cents for sums above a dollar, more digits below (a call can cost $0.0004). */
export function usd(amount: number): string {
  if (amount >= 1) return `$${amount.toFixed(2)}`;
  const digits = amount >= 0.01 ? 4 : 6;
  return `$${amount.toFixed(digits).replace(/0+$/, '').replace(/\.$/, '')}`;
}

/** A cost for people: `$0.012`, or `unknown (no price for m)` when any call's model had none. */
export function costText(cost: UsageCost | undefined): string {
  if (!cost) return 'unknown';
  if (cost.usd !== null) return usd(cost.usd);
  const models = cost.unpricedModels.join(', ');
  return `unknown (no price for ${models || 'a model'}${cost.pricedUsd > 0 ? `; ${usd(cost.pricedUsd)} for the priced calls` : ''})`;
}

/** What a CostMeter reads of its conversation's settings (they change during a session). */
export interface MeterConfig {
  models?: ModelOverrides;
  budget?: CostBudget;
  cache?: { ttl: '5m' | '1h' };
}

/** A conversation's token totals and their cost, call by call. */
export class CostMeter {
  private tokens: Usage = { inputTokens: 0, outputTokens: 0 };
  private calls = 0;
  private priced = 0;
  /** The budget a session set (settings.budget), over the agent's (init({ budget })); null: none at all. */
  private budget: CostBudget | null | undefined;
  private turn = { priced: 0, unpriced: 0 };
  private unpriced = 0;
  private readonly unpricedModels: string[] = [];

  /**
   * Counts one call's usage and prices it (the app's rows, `config.models`, over the built-in table; cache
   * writes at the session's cache TTL); returns its cost (null: the model has no price).
   */
  record(call: { model: string; usage: Usage }, config: MeterConfig): number | null {
    const { model, usage } = call;
    this.calls += 1;
    this.tokens = addUsage(this.tokens, usage);
    const cost = callCostUsd(usage, modelInfo(model, config.models), config.cache ? { cacheTtl: config.cache.ttl } : {});
    if (cost === null) {
      this.unpriced += 1;
      this.turn.unpriced += 1;
      if (!this.unpricedModels.includes(model)) this.unpricedModels.push(model);
    } else {
      this.priced += cost;
      this.turn.priced += cost;
    }
    return cost;
  }

  /** A prompt starts: the turn's cost counts from 0. */
  startTurn(): void {
    this.turn = { priced: 0, unpriced: 0 };
  }

  /** From the next call on: this budget (null: none, whatever the agent set; undefined: the agent's). */
  setBudget(budget: CostBudget | null | undefined): void {
    this.budget = budget;
  }

  /** Carries the totals of an earlier run of the same conversation (a continue-as-new). */
  restore(usage: Usage & { modelCalls: number; cost: UsageCost }): void {
    const { modelCalls, cost, ...tokens } = usage;
    this.tokens = { inputTokens: tokens.inputTokens, outputTokens: tokens.outputTokens, cacheReadInputTokens: tokens.cacheReadInputTokens ?? 0, cacheCreationInputTokens: tokens.cacheCreationInputTokens ?? 0 };
    this.calls = modelCalls;
    this.priced = cost.pricedUsd;
    this.unpriced = cost.unpricedCalls;
    this.unpricedModels.splice(0, this.unpricedModels.length, ...cost.unpricedModels);
  }

  /** The tokens of every call so far, and how many calls. */
  usage(): Usage & { modelCalls: number } {
    return { ...this.tokens, modelCalls: this.calls };
  }

  cost(): UsageCost {
    return {
      usd: this.unpriced > 0 ? null : this.priced,
      pricedUsd: this.priced,
      unpricedCalls: this.unpriced,
      unpricedModels: [...this.unpricedModels],
      turnUsd: this.turn.unpriced > 0 ? null : this.turn.priced,
    };
  }

  /**
   * `req`, unless it could take the total past `config.budget`: then BudgetExceededError. The bound: its
   * prompt estimated (./tokens), and all the tokens it may write (maxTokens and thinking) at the output rate.
   */
  withinBudget(req: ModelCallRequest, config: MeterConfig): ModelCallRequest {
    const budget = this.budget === undefined ? config.budget : this.budget;
    if (!budget) return req;
    const next = {
      model: req.model,
      promptTokens: estimateContextTokens({ system: req.system, tools: req.tools, entries: req.entries }).total,
      maxOutputTokens: req.maxTokens + (req.thinking?.budgetTokens ?? 0),
      ...(req.cache ? { cacheTtl: req.cache.ttl } : {}),
    };
    const bound = callCostBoundUsd(modelInfo(next.model, config.models), next);
    const spent = this.unpriced > 0 ? null : this.priced;
    if (spent === null || bound === null || spent + bound > budget.maxCostUsd) {
      throw new BudgetExceededError(budget.maxCostUsd, spent, bound, next.model);
    }
    return req;
  }
}

/** Two usages added, token class by token class. */
export function addUsage(a: Usage, b: Usage): Usage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadInputTokens: (a.cacheReadInputTokens ?? 0) + (b.cacheReadInputTokens ?? 0),
    cacheCreationInputTokens: (a.cacheCreationInputTokens ?? 0) + (b.cacheCreationInputTokens ?? 0),
  };
}

/** Two conversations' costs together: unknown (null) when either is. */
export function addCost(a: UsageCost | undefined, b: UsageCost): UsageCost {
  if (!a) return { ...b, unpricedModels: [...b.unpricedModels] };
  const pricedUsd = a.pricedUsd + b.pricedUsd;
  const unpricedCalls = a.unpricedCalls + b.unpricedCalls;
  return {
    usd: unpricedCalls > 0 ? null : pricedUsd,
    pricedUsd,
    unpricedCalls,
    unpricedModels: [...new Set([...a.unpricedModels, ...b.unpricedModels])],
    turnUsd: a.turnUsd === null || b.turnUsd === null ? null : a.turnUsd + b.turnUsd,
  };
}
