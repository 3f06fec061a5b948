/**
 * The context gauge: the session's context budget split into the layers a person reasons about
 * (system prompt, tools, memory, summary, conversation, tool results), the reply reserve, the compaction
 * threshold, the 70% hint and the usage so far. Pure: built from what the session's queries answer
 * (contextBudget, messages, compactionState, usage), nothing else is asked.
 */
import { HISTORY_HINT_PERCENT, type ContextBudget } from '../core/budget';
import type { Entry } from '../core/entries';
import type { CompactionState } from '../core/conversation';
import { estimateEntryTokens, estimateTextTokens } from '../core/tokens';
import type { AgentUsage } from '../wire/messages';
import { costText } from '../core/costs';

export interface GaugeLayer {
  key: 'system' | 'tools' | 'memory' | 'summary' | 'conversation' | 'toolResults' | 'attachments';
  label: string;
  tokens: number;
}

export interface ContextGauge {
  contextWindowTokens: number;
  layers: GaugeLayer[];
  reserveTokens: number;
  usedTokens: number;
  usagePercent: number;
  /** Compaction runs past this many prompt tokens (absent when compaction is off). */
  thresholdTokens?: number;
  /** How full the room for history is; the hint shows past {@link HISTORY_HINT_PERCENT}. */
  historyPercentOfAvailable: number;
  hintPercent: number;
  hint?: string;
  estimateMethod: string;
  /** `cost`: what the calls cost, for people (`$0.021`, or `unknown (no price for m)`; never $0 for an unpriced model). */
  usage?: { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number; cacheHitRate: number; modelCalls: number; cost: string };
}

export function contextGauge(input: {
  budget: ContextBudget;
  entries: readonly Entry[];
  compaction: CompactionState | null;
  usage: AgentUsage | null;
}): ContextGauge {
  const { budget, entries } = input;
  // The budget has one history layer; tool results and memory are apportioned from the entries with the
  // same estimator, then capped to what the budget says, so the layers always add up to its total.
  let toolResults = 0;
  let memory = 0;
  let attachments = 0;
  for (const e of entries) {
    if (e.type === 'tool_results') toolResults += estimateEntryTokens(e);
    else if (e.type === 'summary' && e.injected) memory += estimateTextTokens(e.injected);
    else if (e.type === 'user' && e.attachments) attachments += estimateEntryTokens(e) - estimateEntryTokens({ type: 'user', text: e.text });
  }
  toolResults = Math.min(toolResults, budget.layers.history);
  attachments = Math.min(attachments, budget.layers.history - toolResults);
  memory = Math.min(memory, budget.layers.summaries);
  const layers: GaugeLayer[] = [
    { key: 'system', label: 'System prompt', tokens: budget.layers.systemPrompt },
    { key: 'tools', label: 'Tools', tokens: budget.layers.toolDefinitions },
    { key: 'memory', label: 'Memory', tokens: memory },
    { key: 'summary', label: 'Summary', tokens: budget.layers.summaries - memory },
    { key: 'conversation', label: 'Conversation', tokens: budget.layers.history - toolResults - attachments },
    { key: 'toolResults', label: 'Tool results', tokens: toolResults },
    // A layer of its own only when there is one, so a gauge without attachments is as it was.
    ...(attachments > 0 ? [{ key: 'attachments' as const, label: 'Attachments', tokens: attachments }] : []),
  ];
  const settings = input.compaction?.settings;
  const gauge: ContextGauge = {
    contextWindowTokens: budget.contextWindowTokens,
    layers,
    reserveTokens: budget.layers.reservedForResponse,
    usedTokens: budget.usedTokens,
    usagePercent: budget.usagePercent,
    historyPercentOfAvailable: budget.historyPercentOfAvailable,
    hintPercent: HISTORY_HINT_PERCENT,
    estimateMethod: budget.estimateMethod,
    ...(settings?.enabled ? { thresholdTokens: settings.compactAtTokens } : {}),
    ...(budget.hint ? { hint: budget.hint } : {}),
  };
  const u = input.usage;
  if (u) {
    const read = u.cacheReadInputTokens ?? 0;
    const write = u.cacheCreationInputTokens ?? 0;
    const prompt = u.inputTokens + read + write;
    gauge.usage = {
      inputTokens: u.inputTokens,
      outputTokens: u.outputTokens,
      cacheReadTokens: read,
      cacheWriteTokens: write,
      cacheHitRate: prompt > 0 ? Math.round((read / prompt) * 1000) / 10 : 0,
      modelCalls: u.modelCalls,
      cost: costText(u.cost),
    };
  }
  return gauge;
}
