/**
 * Extended thinking as an agent sets it: a level (`'off' | 'low' | 'medium' | 'high' | 'max'`, the
 * session setting's scale) or an explicit `{ budgetTokens }`. Resolved to the budget sent on each
 * model call, or undefined for off. Pure; the zod schema is the border check for `init()` options.
 */
import { z } from 'zod';
import type { ThinkingBudget } from './ports';
import { THINKING_LEVELS, thinkingBudgetTokens, type ThinkingLevel } from './sessions/settings';
import { parseWith } from './validate';
import { lazySchema } from './lazy-schema';

/** The API's minimum thinking budget ("budget_tokens: Input should be greater than or equal to 1024"). */
export const MIN_THINKING_BUDGET_TOKENS = 1024;

const budgetSchema = lazySchema(() => z
  .object({ budgetTokens: z.number().int().min(MIN_THINKING_BUDGET_TOKENS, `must be at least ${MIN_THINKING_BUDGET_TOKENS} (the API's minimum)`) })
  .strict());

export const thinkingOptionSchema = lazySchema(() => z.union([z.enum(THINKING_LEVELS), budgetSchema]));

export type ThinkingOption = ThinkingLevel | ThinkingBudget;

/** The budget for an option (undefined: off). */
export function resolveThinking(option: ThinkingOption | undefined): ThinkingBudget | undefined {
  if (option === undefined) return undefined;
  if (typeof option === 'string') {
    const budgetTokens = thinkingBudgetTokens(option);
    return budgetTokens === undefined ? undefined : { budgetTokens };
  }
  return { budgetTokens: option.budgetTokens };
}

/** Validates a budget given directly (Session.changeThinking); a bad one names `field.budgetTokens`. */
export function parseThinkingBudget(value: unknown, field: string): ThinkingBudget {
  return parseWith(z.object({ [field]: budgetSchema }).strict(), { [field]: value }, 'thinking')[field] as ThinkingBudget;
}
