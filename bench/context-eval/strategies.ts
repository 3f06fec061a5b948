/**
 * The context strategies the evaluation compares, each built from the SDK's own code (nothing
 * re-implemented except the server-side rule, which runs on Anthropic's side):
 * - `none`: history as it is.
 * - `summary-only`: the compaction decision (../../compaction/decide) and compaction
 *   (../../compaction/compact) with the deterministic fallback summary, because no model is available
 *   here: a real summariser writes a different Goal/Progress text; user messages and files are carried
 *   the same way in both.
 * - `masking+summary`: stale tool results masked (../mask, default preserve predicate, the compaction's
 *   keep window), then the same compaction when still over the threshold.
 * - `server-side`: Anthropic's `clear_tool_uses_20250919` edit as src/testing/anthropic/fake-anthropic-context-edits
 *   applies it: over the trigger, every tool result but those of the last 3 tool uses is replaced by a
 *   placeholder in the request; the client's history is never changed.
 */
import type { Entry } from '../../src/core/entries';
import type { RuntimePorts } from '../../src/core/ports';
import type { ResolvedCompactionSettings } from '../../src/core/context/settings';
import { estimateContextTokens, estimateTextTokens } from '../../src/core/tokens';
import type { ToolSpec } from '../../src/core/tools-spec';
import { compactHistory } from '../../src/core/context/compaction/compact';
import { decideCompaction, isIneffective, type LastCompaction } from '../../src/core/context/compaction/decide';
import { renderEntriesForSummary } from '../../src/core/context/compaction/render';
import { DEFAULT_USER_MESSAGE_BUDGET_TOKENS } from '../../src/core/context/compaction/user-messages';
import { maskStaleToolResults } from '../../src/core/context/mask';

export type StrategyName = 'none' | 'summary-only' | 'masking+summary' | 'server-side';
export const STRATEGIES: readonly StrategyName[] = ['none', 'summary-only', 'masking+summary', 'server-side'];

/** The placeholder text the fake server (and, in spirit, the API) puts in a cleared result. */
export const CLEARED_TOOL_RESULT = '[tool result cleared by context management]';
/** Tool uses whose results clear_tool_uses keeps (the API's default). */
export const SERVER_KEEP_TOOL_USES = 3;

export interface StrategyContext {
  settings: ResolvedCompactionSettings;
  system: string;
  tools: readonly ToolSpec[];
}

export interface CallPlan {
  /** The history the client keeps from now on. */
  history: Entry[];
  /** What this model call sends (after any server-side edit). */
  sent: Entry[];
  compacted: boolean;
  /** Tokens a real summariser would have been sent for this compaction (the rendered slice; 0 when none). */
  summarizerInputTokens: number;
}

/** One strategy: called before every model call with the history kept so far. */
export interface ContextStrategy {
  readonly name: StrategyName;
  beforeCall(history: Entry[]): Promise<CallPlan>;
}

/** Compaction with the fallback summary never touches the model or tools; anything else is a bug here. */
function modelFreePorts(): RuntimePorts {
  const refuse = (what: string) => (): never => {
    throw new Error(`the evaluation has no model: ${what} was called`);
  };
  return {
    runtime: 'inline',
    callModel: refuse('callModel'),
    decideThenCallModel: refuse('decideThenCallModel'),
    summarize: refuse('summarize'),
    runTool: refuse('runTool'),
    decideCompaction: refuse('decideCompaction'),
    resolveModel: refuse('resolveModel'),
    now: () => 0,
    emit: () => undefined,
  };
}

/** The SDK's compaction loop, deterministic: decide (with the no-loops guard), compact with the fallback. */
class Compactor {
  private last: LastCompaction | undefined;
  private readonly ports = modelFreePorts();

  constructor(private readonly ctx: StrategyContext) {}

  async maybeCompact(history: Entry[]): Promise<{ history: Entry[]; compacted: boolean; summarizerInputTokens: number }> {
    const { settings, system, tools } = this.ctx;
    const decision = decideCompaction({ entries: history, system, tools: [...tools], settings, lastCompaction: this.last });
    if (!decision.compact) return { history, compacted: false, summarizerInputTokens: 0 };
    const fixedTokens = estimateContextTokens({ system, tools, entries: [] }).total;
    const attempt = await compactHistory(this.ports, history, {
      sessionId: 'eval',
      reason: 'threshold',
      keepRecentEntries: decision.keptEntries,
      generateSummary: false,
      model: 'none',
      summarizerBudgetTokens: settings.contextWindowTokens,
      summaryMaxTokens: 0,
      fixedTokens,
      userMessageBudgetTokens: DEFAULT_USER_MESSAGE_BUDGET_TOKENS,
    });
    if (!attempt.ok) return { history, compacted: false, summarizerInputTokens: 0 };
    const { outcome } = attempt;
    this.last = { entryCountAfter: outcome.messagesAfter, tokensAfter: outcome.tokensAfter, ineffective: isIneffective(outcome.tokensAfter, settings.compactAtTokens) };
    const slice = history.slice(0, outcome.cut).filter((e) => e.type !== 'summary');
    return { history: outcome.entries, compacted: true, summarizerInputTokens: estimateTextTokens(renderEntriesForSummary(slice)) };
  }
}

/**
 * clear_tool_uses over entries, as the fake server applies it to messages: when the request is over
 * `triggerTokens`, the results of all but the last `keep` tool uses become the placeholder.
 */
export function clearToolUses(entries: readonly Entry[], ctx: { triggerTokens: number; keep: number; system?: string; tools?: readonly ToolSpec[] }): Entry[] {
  const total = estimateContextTokens({ system: ctx.system, tools: ctx.tools, entries }).total;
  if (total <= ctx.triggerTokens) return [...entries];
  const ids: string[] = [];
  for (const e of entries) if (e.type === 'assistant') for (const b of e.content) if (b.type === 'tool_use') ids.push(b.id);
  const cleared = new Set(ids.slice(0, Math.max(0, ids.length - ctx.keep)));
  if (cleared.size === 0) return [...entries];
  return entries.map((e) => {
    if (e.type !== 'tool_results' || !e.results.some((r) => cleared.has(r.tool_use_id))) return e;
    // Like the fake server: the cleared block keeps only its id (is_error goes with the content).
    return { ...e, results: e.results.map((r) => (cleared.has(r.tool_use_id) ? { type: 'tool_result' as const, tool_use_id: r.tool_use_id, content: CLEARED_TOOL_RESULT } : r)) };
  });
}

export function makeStrategy(name: StrategyName, ctx: StrategyContext): ContextStrategy {
  const unchanged = (history: Entry[]): CallPlan => ({ history, sent: history, compacted: false, summarizerInputTokens: 0 });
  switch (name) {
    case 'none':
      return { name, beforeCall: async (history) => unchanged(history) };
    case 'summary-only': {
      const compactor = new Compactor(ctx);
      return {
        name,
        async beforeCall(history) {
          const r = await compactor.maybeCompact(history);
          return { history: r.history, sent: r.history, compacted: r.compacted, summarizerInputTokens: r.summarizerInputTokens };
        },
      };
    }
    case 'masking+summary': {
      const compactor = new Compactor(ctx);
      return {
        name,
        async beforeCall(history) {
          // Masking first (before any summary), over the same keep window compaction uses.
          const masked = maskStaleToolResults(history, { keepRecent: { entries: ctx.settings.keepRecentEntries, tokens: ctx.settings.keepRecentTokens } }).entries;
          const r = await compactor.maybeCompact(masked);
          return { history: r.history, sent: r.history, compacted: r.compacted, summarizerInputTokens: r.summarizerInputTokens };
        },
      };
    }
    case 'server-side':
      return {
        name,
        beforeCall: async (history) => ({
          history,
          sent: clearToolUses(history, { triggerTokens: ctx.settings.compactAtTokens, keep: SERVER_KEEP_TOOL_USES, system: ctx.system, tools: ctx.tools }),
          compacted: false,
          summarizerInputTokens: 0,
        }),
      };
  }
}
