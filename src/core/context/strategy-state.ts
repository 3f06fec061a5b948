/**
 * A session's side of the server strategy: the recorded decision, the edits each call sends, and the
 * account of what the server cleared and compacted (for events and the session's usage totals).
 */
import type { ModelCallResult } from '../ports';
import type { ResolvedCompactionSettings } from './settings';
import type { EventPayloads } from '../events';
import {
  addAppliedEdits,
  contextManagementParams,
  emptyServerContextUsage,
  type ContextManagementParams,
  type ServerContextUsage,
  type StrategyDecision,
} from './strategy';

export class ServerContextStrategy {
  private totals: ServerContextUsage = emptyServerContextUsage();

  constructor(private readonly decision: StrategyDecision | undefined) {}

  /** Claude manages the context: our threshold compaction stays off (overflow recovery stays on). */
  get active(): boolean {
    return this.decision?.strategy === 'server';
  }

  /** The edits a call sends under these settings (undefined: client strategy, or compaction off). */
  params(settings: ResolvedCompactionSettings | undefined, thinking: boolean): ContextManagementParams | undefined {
    return settings?.enabled ? contextManagementParams(this.decision, settings, thinking) : undefined;
  }

  /** Adds what the server did on this call; the event to emit, when it did something. */
  account(result: ModelCallResult): EventPayloads['context_edited'] | undefined {
    const applied = result.contextManagement?.applied ?? [];
    if (applied.length === 0) return undefined;
    this.totals = addAppliedEdits(this.totals, applied);
    return {
      edits: applied.map((e) => ({ ...e })),
      clearedToolUses: applied.reduce((n, e) => n + (e.clearedToolUses ?? 0), 0),
      clearedInputTokens: applied.reduce((n, e) => n + e.clearedInputTokens, 0),
      compacted: applied.some((e) => e.type === 'compact_20260112'),
    };
  }

  usage(): ServerContextUsage {
    return { ...this.totals };
  }
}
