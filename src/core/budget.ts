/**
 * Context budget diagnostics: how the window splits between system prompt, tools, summaries, history
 * and the reply reserve, with a hint when history is getting tight.
 */
import type { Entry } from './entries';
import { anchoredEstimate, estimateContextTokens, type EstimateMethod, type ToolLike, type UsageAnchor } from './tokens';

export const HISTORY_HINT_PERCENT = 70;

export interface ContextBudget {
  contextWindowTokens: number;
  layers: {
    systemPrompt: number;
    toolDefinitions: number;
    summaries: number;
    history: number;
    reservedForResponse: number;
  };
  /** Prompt tokens (everything but the reserve). */
  usedTokens: number;
  /** Window less system prompt, tools and reserve: what summaries + history may use. */
  availableForHistory: number;
  usagePercent: number;
  historyPercentOfAvailable: number;
  estimateMethod: EstimateMethod;
  hint?: string;
}

function pct(part: number, whole: number): number {
  return whole > 0 ? Math.round((part / whole) * 1000) / 10 : part > 0 ? 100 : 0;
}

export function contextBudget(input: {
  system?: string;
  tools?: readonly ToolLike[];
  entries: readonly Entry[];
  contextWindowTokens: number;
  reserveTokens: number;
  anchor?: UsageAnchor;
}): ContextBudget {
  const h = estimateContextTokens(input);
  const anchored = anchoredEstimate({ anchor: input.anchor, entries: input.entries, system: input.system, tools: input.tools });
  // The model's reported usage is the better total; the heuristic only apportions it across layers.
  const history = anchored.method === 'usage-anchored' ? Math.max(0, anchored.total - h.system - h.tools - h.summaries) : h.history;
  const usedTokens = h.system + h.tools + h.summaries + history;
  const availableForHistory = Math.max(0, input.contextWindowTokens - h.system - h.tools - input.reserveTokens);
  const historyPercentOfAvailable = pct(h.summaries + history, availableForHistory);
  const budget: ContextBudget = {
    contextWindowTokens: input.contextWindowTokens,
    layers: {
      systemPrompt: h.system,
      toolDefinitions: h.tools,
      summaries: h.summaries,
      history,
      reservedForResponse: input.reserveTokens,
    },
    usedTokens,
    availableForHistory,
    usagePercent: pct(usedTokens, input.contextWindowTokens),
    historyPercentOfAvailable,
    estimateMethod: anchored.method,
  };
  // Compare unrounded: 70.04% is past the line even though it displays as 70.
  if ((h.summaries + history) * 100 > HISTORY_HINT_PERCENT * availableForHistory) {
    budget.hint = `History uses ${historyPercentOfAvailable}% of the ${availableForHistory} tokens available for it; consider compacting (session.compact()) or starting a new session.`;
  }
  return budget;
}
