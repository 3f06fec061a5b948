/**
 * Where context management runs: 'client' (our threshold compaction, masking, summaries) or 'server'
 * (Claude's own context editing and compaction, sent as `context_management` edits with each call).
 * 'auto' picks 'server' when the Models API says the model supports context management. The choice is
 * made once per model where the capabilities are looked up (the resolve-model activity), so it is
 * recorded in history and a replay under other settings follows what was recorded.
 * Pure: no I/O, no Temporal.
 */
import type { ResolvedCompactionSettings } from './settings';

export type CompactionStrategySetting = 'client' | 'server' | 'auto';
export type CompactionStrategy = 'client' | 'server';

/** What the Models API says the model supports of context management (absent: it did not say). */
export interface ServerContextCapabilities {
  clearToolUses: boolean;
  clearThinking: boolean;
  compact: boolean;
}

/** The recorded choice, and why; `edits` lists the server edits the model supports (server only). */
export interface StrategyDecision {
  strategy: CompactionStrategy;
  setting: CompactionStrategySetting;
  why: string;
  edits?: ServerContextCapabilities;
}

export const CONTEXT_MANAGEMENT_BETA = 'context-management-2025-06-27';
export const COMPACTION_BETA = 'compact-2026-01-12';
/** The smallest compaction trigger the API accepts (input tokens). */
export const SERVER_COMPACT_MIN_TRIGGER = 50_000;
/** Clearing old tool results is cheap and lossy only for stale output: it fires before our threshold. */
const CLEAR_TRIGGER_SHARE = 0.8;

/** The Models API's `capabilities.context_management`, reduced to what we use; undefined when absent. */
export function serverContextCapabilities(capabilities: unknown): ServerContextCapabilities | undefined {
  const cm = (capabilities as { context_management?: Record<string, unknown> } | null | undefined)?.context_management;
  if (!cm || typeof cm !== 'object') return undefined;
  const on = (key: string) => (cm[key] as { supported?: unknown } | null | undefined)?.supported === true;
  if (cm.supported !== true) return { clearToolUses: false, clearThinking: false, compact: false };
  return { clearToolUses: on('clear_tool_uses_20250919'), clearThinking: on('clear_thinking_20251015'), compact: on('compact_20260112') };
}

/** The strategy for `model` under `setting`, from what its capabilities say. */
export function chooseStrategy(setting: CompactionStrategySetting, model: string, caps: ServerContextCapabilities | undefined): StrategyDecision {
  const any = caps !== undefined && (caps.clearToolUses || caps.compact);
  if (setting === 'client') return { strategy: 'client', setting, why: 'compaction.strategy is client' };
  if (setting === 'auto') {
    if (!any) {
      const said = caps === undefined ? 'the Models API did not report its capabilities' : 'the Models API says it supports no context-management edit';
      return { strategy: 'client', setting, why: `auto: ${model}: ${said}` };
    }
    return { strategy: 'server', setting, why: `auto: ${model} supports ${supportedNames(caps!).join(', ')}`, edits: caps };
  }
  // 'server' asked for explicitly: trust it where the API is silent (clearing only), refuse what it denies.
  if (caps === undefined) {
    return { strategy: 'server', setting, why: `server: ${model}'s capabilities are unknown; clearing tool uses only`, edits: { clearToolUses: true, clearThinking: true, compact: false } };
  }
  if (!any) return { strategy: 'client', setting, why: `server: ${model} supports no context-management edit (Models API); client compaction instead` };
  return { strategy: 'server', setting, why: `server: ${model} supports ${supportedNames(caps).join(', ')}`, edits: caps };
}

function supportedNames(caps: ServerContextCapabilities): string[] {
  return [
    ...(caps.clearToolUses ? ['clear_tool_uses_20250919'] : []),
    ...(caps.clearThinking ? ['clear_thinking_20251015'] : []),
    ...(caps.compact ? ['compact_20260112'] : []),
  ];
}

export type ContextEdit =
  | { type: 'clear_thinking_20251015'; keep: { type: 'thinking_turns'; value: number } }
  | { type: 'clear_tool_uses_20250919'; trigger: { type: 'input_tokens'; value: number }; keep: { type: 'tool_uses'; value: number } }
  | { type: 'compact_20260112'; trigger: { type: 'input_tokens'; value: number } };

/** The request's `context_management` and the beta headers it needs. */
export interface ContextManagementParams {
  edits: ContextEdit[];
  betas: string[];
}

/**
 * The edits for a call under a server decision, with triggers derived from our settings: tool results
 * are cleared from 80% of compactAtTokens keeping the newest keepRecentEntries/2 tool uses (a use and
 * its result are two entries); the server compacts at compactAtTokens (at least the API's minimum);
 * thinking is cleared (keeping the last turn's) only when thinking is on, which the API requires.
 */
export function contextManagementParams(
  decision: StrategyDecision | undefined,
  settings: Pick<ResolvedCompactionSettings, 'compactAtTokens' | 'keepRecentEntries'> | undefined,
  thinking: boolean,
): ContextManagementParams | undefined {
  if (decision?.strategy !== 'server' || !decision.edits || !settings) return undefined;
  const caps = decision.edits;
  const edits: ContextEdit[] = [];
  // The API wants clear_thinking first when both are sent.
  if (thinking && caps.clearThinking) edits.push({ type: 'clear_thinking_20251015', keep: { type: 'thinking_turns', value: 1 } });
  if (caps.clearToolUses) {
    edits.push({
      type: 'clear_tool_uses_20250919',
      trigger: { type: 'input_tokens', value: Math.max(1, Math.floor(settings.compactAtTokens * CLEAR_TRIGGER_SHARE)) },
      keep: { type: 'tool_uses', value: Math.max(1, Math.floor(settings.keepRecentEntries / 2)) },
    });
  }
  if (caps.compact) edits.push({ type: 'compact_20260112', trigger: { type: 'input_tokens', value: Math.max(SERVER_COMPACT_MIN_TRIGGER, settings.compactAtTokens) } });
  if (edits.length === 0) return undefined;
  const betas = [
    ...(edits.some((e) => e.type !== 'compact_20260112') ? [CONTEXT_MANAGEMENT_BETA] : []),
    ...(caps.compact ? [COMPACTION_BETA] : []),
  ];
  return { edits, betas };
}

/** What the server did to one request (from `context_management.applied_edits` and compaction blocks). */
export interface AppliedContextEdit {
  type: 'clear_tool_uses_20250919' | 'clear_thinking_20251015' | 'compact_20260112';
  clearedInputTokens: number;
  clearedToolUses?: number;
  clearedThinkingTurns?: number;
}

/** Totals of what the server cleared and compacted over a session. */
export interface ServerContextUsage {
  edits: number;
  clearedToolUses: number;
  clearedThinkingTurns: number;
  clearedInputTokens: number;
  compactions: number;
}

export function emptyServerContextUsage(): ServerContextUsage {
  return { edits: 0, clearedToolUses: 0, clearedThinkingTurns: 0, clearedInputTokens: 0, compactions: 0 };
}

export function addAppliedEdits(total: ServerContextUsage, applied: readonly AppliedContextEdit[]): ServerContextUsage {
  let t = total;
  for (const e of applied) {
    t = {
      edits: t.edits + 1,
      clearedToolUses: t.clearedToolUses + (e.clearedToolUses ?? 0),
      clearedThinkingTurns: t.clearedThinkingTurns + (e.clearedThinkingTurns ?? 0),
      clearedInputTokens: t.clearedInputTokens + e.clearedInputTokens,
      compactions: t.compactions + (e.type === 'compact_20260112' ? 1 : 0),
    };
  }
  return t;
}
