import type { Entry, Usage, UserEntry } from '../../entries';
import type { CompactionReason } from '../../events';
import { COMPACTION_DEFAULTS, type ResolvedCompactionSettings } from '../settings';
import { usageAnchor } from '../../tokens';
import { contextBudget, type ContextBudget } from '../../budget';
import { keepCount } from '../keep-window';
import { planMask } from '../mask-plan';
import type { CompactOutcome } from './compact';
import type { CompactionDecision, DecisionFacts } from './decide';
import { ContextWindowExceededError } from './errors';
import { isPatched } from '../../ports';
import { dropInjected, ladderFacts, OVERFLOW_LADDER_PATCH, purgeToolResults, type LadderStep, type OverflowLadderState } from '../ladder';
import { CompactionRunner, type AnchorMark, type CompactionState, type SummarizerUsage } from './runner';

export type { AnchorMark, CompactionContext, CompactionRecord, CompactionState, SummarizerUsage } from './runner';

/**
 * Owns everything about keeping one session's history inside the window: when to compact (the recorded
 * threshold decision, the overflow ladder, a manual compaction) and what the state query reports;
 * carrying it out is CompactionRunner's (./runner). The session's turn loop asks it
 * before each model call and on an overflow; it hands back the rewritten history.
 */
export class CompactionController extends CompactionRunner {
  /** What the threshold decision before a model call is made from (a few numbers; O(n) to compute). */
  thresholdFacts(entries: readonly Entry[], settings: ResolvedCompactionSettings): DecisionFacts {
    const facts = this.facts(entries, settings, 'threshold');
    const mask = planMask(entries, this.ctx.settings?.toolResults);
    return mask ? { ...facts, maskBefore: mask.before, maskIds: mask.ids } : facts;
  }

  /**
   * Acts on a threshold decision the runtime made before a model call (on Temporal, recorded with the
   * call): warns, and compacts when it says so. Returns the history to call the model with.
   */
  async actOnThresholdDecision(entries: Entry[], decision: CompactionDecision, settings: ResolvedCompactionSettings): Promise<Entry[]> {
    this.noteThresholdDecision(decision);
    // Masking first, so a summary made next reads placeholders instead of stale output.
    if (decision.mask) entries = this.maskNow(entries, decision.mask);
    if (!decision.compact) return entries;
    return (await this.compactNow(entries, 'threshold', decision, settings))?.entries ?? entries;
  }

  /**
   * Records a threshold decision and what it warns of. All there is to do when the model call was made
   * with it (a decision that masks or compacts comes without a call): synchronous, so that path adds
   * no promise (each one costs a stack capture in Temporal's workflow sandbox).
   */
  noteThresholdDecision(decision: CompactionDecision): void {
    this.noteDecision(decision);
    if (decision.warn) {
      this.emit('context_window_warning', {
        estimatedTokens: decision.estimatedTokens,
        contextWindowSize: decision.contextWindowTokens,
        usagePercent: decision.usagePercent,
      });
    }
    if (decision.ineffectiveSkip) this.emit('warning', { code: 'COMPACTION_INEFFECTIVE', message: decision.why });
  }

  /**
   * The provider said the request does not fit (an error, or reported input over the window). Climbs
   * the overflow ladder (../ladder): the next step not yet tried this prompt is decided
   * (recorded) and carried out, skipping steps that would change nothing, and the history to retry with
   * is handed back. Once every step was tried, or recovery is off: ContextWindowExceededError.
   * Histories recorded before the ladder (no patch marker) take the single emergency compaction.
   */
  async recoverFromOverflow(
    entries: Entry[],
    settings: ResolvedCompactionSettings | undefined,
    providerError: unknown,
    ladder: OverflowLadderState,
    currentPrompt?: UserEntry,
  ): Promise<Entry[]> {
    if (settings && ladder.patched === undefined) ladder.patched = isPatched(this.ports, OVERFLOW_LADDER_PATCH);
    if (!ladder.patched) return this.recoverOnce(entries, settings, providerError, ladder);
    for (let step = ladder.next(); step !== undefined; step = ladder.next()) {
      ladder.mark(step);
      const decision = await this.decideLadderStep(entries, settings!, step);
      if (decision.ladderStop) throw this.exceeded(entries, providerError, settings);
      const tokensBefore = this.estimate(entries).total;
      const next = decision.apply ? await this.applyLadderStep(entries, decision, settings!, currentPrompt) : undefined;
      this.emit('overflow_step', {
        step,
        applied: next !== undefined,
        why: decision.apply && next === undefined ? `${decision.why} (it did not go through: see the events before)` : decision.why,
        tokensBefore,
        tokensAfter: next ? this.estimate(next).total : tokensBefore,
      });
      if (next) return next;
    }
    throw new ContextWindowExceededError({
      contextWindowTokens: settings!.contextWindowTokens,
      estimatedTokens: this.estimate(entries).total,
      detail: `every overflow-ladder step was tried this prompt; the provider said: ${providerError instanceof Error ? providerError.message : String(providerError)}`,
    });
  }

  /** Before the ladder: one emergency compaction keeping OVERFLOW_KEEP_RECENT entries, then give up. */
  private async recoverOnce(
    entries: Entry[],
    settings: ResolvedCompactionSettings | undefined,
    providerError: unknown,
    ladder: OverflowLadderState,
  ): Promise<Entry[]> {
    if (!settings?.enabled || !settings.recoverFromOverflow || ladder.legacyTried) throw this.exceeded(entries, providerError, settings);
    const decision = await this.decide(entries, settings, 'overflow');
    const outcome = decision.compact ? await this.compactNow(entries, 'overflow', decision, settings) : undefined;
    if (!outcome) {
      throw new ContextWindowExceededError({
        contextWindowTokens: settings.contextWindowTokens,
        estimatedTokens: decision.estimatedTokens,
        detail: decision.why,
      });
    }
    ladder.legacyTried = true;
    return outcome.entries;
  }

  private async decideLadderStep(entries: readonly Entry[], settings: ResolvedCompactionSettings, step: LadderStep): Promise<CompactionDecision> {
    const decision = await this.ports.decideCompaction({ ...this.facts(entries, settings, 'overflow'), ...ladderFacts(entries, step) });
    this.noteDecision(decision);
    return decision;
  }

  /** Carries out a recorded ladder decision; undefined when it did not go through (a veto, a failed summary). */
  private async applyLadderStep(
    entries: Entry[],
    decision: CompactionDecision,
    settings: ResolvedCompactionSettings,
    currentPrompt: UserEntry | undefined,
  ): Promise<Entry[] | undefined> {
    switch (decision.ladderStep) {
      case 'emergency-compaction': {
        const outcome = await this.compactNow(entries, 'overflow', decision, settings);
        // Under overflow a failed summary falls back to a model-free one, so no outcome means a
        // beforeCompact veto: the agent asked that history not be rewritten, so no later step does it.
        if (!outcome) {
          throw new ContextWindowExceededError({
            contextWindowTokens: settings.contextWindowTokens,
            estimatedTokens: decision.estimatedTokens,
            detail: `${decision.why}; beforeCompact vetoed it, so the overflow ladder stops`,
          });
        }
        return outcome.entries;
      }
      case 'purge-tool-results': {
        const purged = purgeToolResults(entries, decision.purge?.before ?? 0);
        return purged.masked > 0 ? this.rewritten(purged.entries) : undefined;
      }
      case 'drop-injected': {
        const dropped = dropInjected(entries);
        return dropped.dropped > 0 ? this.rewritten(dropped.entries) : undefined;
      }
      case 'session-reset':
        return this.resetNow(entries, { transferSummary: true, currentPrompt });
      default:
        return undefined;
    }
  }

  /** A manual compaction (session.compact or a client's update). */
  async compactManually(
    entries: Entry[],
    options: { keepRecentEntries?: number; generateSummary?: boolean; reason?: CompactionReason },
  ): Promise<CompactOutcome | undefined> {
    const settings = this.manualSettings();
    // An explicit count is the caller's window; otherwise the settings' windows (the smaller wins).
    const keep =
      options.keepRecentEntries ??
      keepCount(entries, { entries: settings?.keepRecentEntries ?? COMPACTION_DEFAULTS.keepRecentEntries, tokens: settings?.keepRecentTokens })!;
    return this.compactNow(entries, options.reason ?? 'manual', { keptEntries: keep }, settings, options.generateSummary ?? true);
  }

  /** The provider's count of the history up to `entryCount` entries sharpens later estimates. */
  anchorOn(usage: Usage, entryCount: number): void {
    this.anchor = usageAnchor(usage, entryCount);
  }

  anchorMark(): AnchorMark {
    return this.anchor;
  }

  restoreAnchor(mark: AnchorMark): void {
    this.anchor = mark;
  }

  summarizerUsage(): SummarizerUsage {
    return { ...this.summarizer };
  }

  state(entries: readonly Entry[]): CompactionState {
    const settings = this.visibleSettings();
    const estimate = this.estimate(entries);
    const window = this.ctx.contextWindowTokens;
    return {
      sessionId: this.ctx.sessionId,
      enabled: settings?.enabled ?? false,
      settings,
      count: this.compactionCount,
      decisions: this.decisionCount,
      last: this.lastCompaction,
      lastDecision: this.lastDecision,
      estimate: { tokens: estimate.total, method: estimate.method },
      contextWindowTokens: window,
      usagePercent: window ? Math.round((estimate.total / window) * 1000) / 10 : undefined,
      strategy: this.ctx.strategy
        ? { strategy: this.ctx.strategy.strategy, why: this.ctx.strategy.why }
        : { strategy: 'client', why: 'compaction.strategy is not set (client)' },
    };
  }

  budget(entries: readonly Entry[]): ContextBudget | undefined {
    const window = this.ctx.contextWindowTokens;
    if (!window) return undefined;
    return contextBudget({
      system: this.ctx.system,
      tools: this.ctx.tools,
      entries,
      contextWindowTokens: window,
      reserveTokens: this.visibleSettings()?.reserveTokens ?? COMPACTION_DEFAULTS.reserveTokens,
      anchor: this.currentAnchor(entries),
    });
  }
}
