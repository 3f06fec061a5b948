import type { Entry, Usage } from '../../entries';
import { makeEvent, type AgentEventType, type CompactionReason, type EventPayloads } from '../../events';
import { InterruptedError, UnknownContextWindowError } from '../../errors';
import type { RuntimePorts } from '../../ports';
import {
  COMPACTION_DEFAULTS,
  resolveCompactionSettings,
  type CompactionSettings,
  type PromptCompactionOverrides,
  type ResolvedCompactionSettings,
} from '../settings';
import { anchoredEstimate, estimateContextTokens, estimateTextTokens, usageAnchor, type UsageAnchor } from '../../tokens';
import type { ToolSpec } from '../../tools-spec';
import { contextBudget, type ContextBudget } from '../../budget';
import { keepCount } from '../keep-window';
import { maskStaleToolResults } from '../mask';
import { planMask } from '../mask-plan';
import { preservePredicate } from '../evidence';
import { compactHistory, historyTokens, type CompactOutcome } from './compact';
import { decisionFacts, isIneffective, type CompactionDecision, type DecisionFacts } from './decide';
import { ContextWindowExceededError } from './errors';
import { runAfterCompact, runBeforeCompact, type CompactionHooks } from './hooks';
import type { ContextMemory } from '../memory';
import { memoryBlock } from '../memory-extract';
import type { StrategyDecision } from '../strategy';
import { isPatched } from '../../ports';
import { dropInjected, ladderFacts, OVERFLOW_LADDER_PATCH, purgeToolResults, type LadderStep, type OverflowLadderState } from '../ladder';
import { resetConversation, transferSummary, TRANSFER_SUMMARY_MAX_TOKENS } from '../reset';

export interface CompactionRecord {
  reason: CompactionReason;
  at: number;
  cut: number;
  messagesBefore: number;
  messagesAfter: number;
  tokensBefore: number;
  tokensAfter: number;
  summary: string;
  fallback: boolean;
  ineffective: boolean;
}

export interface CompactionState {
  sessionId: string;
  enabled: boolean;
  /** undefined on the strict entry until the agent sets compaction settings (nothing is injected). */
  settings: ResolvedCompactionSettings | undefined;
  count: number;
  decisions: number;
  last: CompactionRecord | undefined;
  lastDecision: CompactionDecision | undefined;
  estimate: { tokens: number; method: 'heuristic' | 'usage-anchored' };
  contextWindowTokens: number | undefined;
  usagePercent: number | undefined;
  /** Where context management runs ('server': Claude's edits and compaction), and why (recorded). */
  strategy: { strategy: 'client' | 'server'; why: string };
}

export interface CompactionContext {
  sessionId: string;
  model: string;
  system?: string;
  tools: ToolSpec[];
  /** undefined: not injected (strict entry); compaction is then off. */
  settings: CompactionSettings | undefined;
  /** Whether compaction is on when `settings.enabled` is not said (default entry: true). */
  enabledByDefault: boolean;
  contextWindowTokens: number | undefined;
  /** The agent's beforeCompact / afterCompact hooks. */
  hooks?: CompactionHooks;
  /** The agent's memory file: flushed before a compaction, re-injected after it (absent: no memory). */
  memory?: ContextMemory;
  /** The recorded strategy decision (absent: client by settings). */
  strategy?: StrategyDecision;
}

/** Where the usage anchor stood, so a rolled-back prompt can put it back. */
export type AnchorMark = UsageAnchor | undefined;

export interface SummarizerUsage {
  inputTokens: number;
  outputTokens: number;
  calls: number;
}

const SUMMARY_MAX_TOKENS = 4096;
const USER_MESSAGE_BUDGET_TOKENS = 2000;
const USER_MESSAGE_WINDOW_SHARE = 0.1;

/**
 * Owns everything about keeping one session's history inside the window: settings resolution, the
 * usage anchor that sharpens estimates, the recorded decisions, carrying out compactions (threshold,
 * overflow, manual), their counters and the summariser's usage. The session's turn loop asks it
 * before each model call and on an overflow; it hands back the rewritten history.
 */
export class CompactionController {
  private anchor: UsageAnchor | undefined;
  private compactionCount = 0;
  private decisionCount = 0;
  private lastCompaction: CompactionRecord | undefined;
  private lastDecision: CompactionDecision | undefined;
  private readonly summarizer: SummarizerUsage = { inputTokens: 0, outputTokens: 0, calls: 0 };
  /** The runtime with summaries counted, for compactHistory. */
  private readonly countingPorts: RuntimePorts;

  constructor(
    private readonly ports: RuntimePorts,
    private readonly ctx: CompactionContext,
  ) {
    this.countingPorts = {
      ...ports,
      summarize: async (req) => {
        const res = await ports.summarize(req);
        this.summarizer.inputTokens += res.usage.inputTokens;
        this.summarizer.outputTokens += res.usage.outputTokens;
        this.summarizer.calls += 1;
        return res;
      },
    };
  }

  /** The session switched models: decisions and summaries use the new one and its window. */
  retarget(model: string, contextWindowTokens: number | undefined): void {
    this.ctx.model = model;
    this.ctx.contextWindowTokens = contextWindowTokens;
    this.anchor = undefined; // usage reported by another model says nothing about this one's tokens
  }

  /**
   * Settings for a prompt: session settings, per-prompt overrides and defaults; undefined when
   * compaction is off and nothing needs the numbers.
   */
  settingsFor(overrides: PromptCompactionOverrides | undefined): ResolvedCompactionSettings | undefined {
    const { settings, enabledByDefault, contextWindowTokens } = this.ctx;
    // Strict entry: nothing is injected; without session settings compaction stays off.
    if (settings === undefined && !enabledByDefault) return undefined;
    if (contextWindowTokens === undefined) {
      if (!(settings?.enabled ?? enabledByDefault)) return undefined;
      throw new UnknownContextWindowError(this.ctx.model);
    }
    return resolveCompactionSettings(settings, overrides, contextWindowTokens, { enabled: enabledByDefault });
  }

  /** Settings a manual compaction uses: it runs even where automatic compaction is off. */
  private manualSettings(): ResolvedCompactionSettings | undefined {
    const window = this.ctx.contextWindowTokens;
    return window === undefined ? undefined : resolveCompactionSettings(this.ctx.settings, undefined, window, { enabled: this.ctx.enabledByDefault });
  }

  /** Settings for the state query: never throws (a query must answer). */
  private visibleSettings(): ResolvedCompactionSettings | undefined {
    if (this.ctx.settings === undefined && !this.ctx.enabledByDefault) return undefined;
    try {
      return this.manualSettings();
    } catch {
      return undefined;
    }
  }

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
    this.noteDecision(decision);
    if (decision.warn) {
      this.emit('context_window_warning', {
        estimatedTokens: decision.estimatedTokens,
        contextWindowSize: decision.contextWindowTokens,
        usagePercent: decision.usagePercent,
      });
    }
    if (decision.ineffectiveSkip) this.emit('warning', { code: 'COMPACTION_INEFFECTIVE', message: decision.why });
    // Masking first, so a summary made next reads placeholders instead of stale output.
    if (decision.mask) entries = this.maskNow(entries, decision.mask);
    if (!decision.compact) return entries;
    return (await this.compactNow(entries, 'threshold', decision, settings))?.entries ?? entries;
  }

  /**
   * The provider said the request does not fit (an error, or reported input over the window). Climbs
   * the overflow ladder (../context/ladder): the next step not yet tried this prompt is decided
   * (recorded) and carried out, skipping steps that would change nothing, and the history to retry with
   * is handed back. Once every step was tried, or recovery is off: ContextWindowExceededError.
   * Histories recorded before the ladder (no patch marker) take the single emergency compaction.
   */
  async recoverFromOverflow(
    entries: Entry[],
    settings: ResolvedCompactionSettings | undefined,
    providerError: unknown,
    ladder: OverflowLadderState,
    currentPrompt?: string,
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
    currentPrompt: string | undefined,
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

  /**
   * Replaces the conversation with a transfer summary (one summarize call; none when `transferSummary`
   * is false), the memory's current text and the running turn's prompt (when one is running).
   */
  async resetNow(entries: readonly Entry[], options: { transferSummary: boolean; currentPrompt?: string }): Promise<Entry[]> {
    const window = this.ctx.contextWindowTokens ?? 100_000;
    // The running prompt is carried verbatim after the summary: summarising it too would say it twice.
    const history = options.currentPrompt !== undefined ? withoutRunningTurn(entries) : entries;
    const summary =
      history.length === 0 || !options.transferSummary
        ? undefined
        : await transferSummary(this.countingPorts, history, {
            sessionId: this.ctx.sessionId,
            model: this.ctx.model,
            budgetTokens: Math.max(1000, Math.floor(window / 2) - TRANSFER_SUMMARY_MAX_TOKENS),
            generateSummary: options.transferSummary,
          });
    const memory = this.ctx.memory?.current();
    // Nothing to carry (no summary asked for, no memory, no running prompt): an empty conversation.
    if (!summary && !memory?.trim() && options.currentPrompt === undefined) return this.rewritten([]);
    const next = resetConversation({
      summary: summary?.text ?? 'The conversation was reset; nothing came before.',
      fallback: summary?.fallback ?? true,
      memory,
      prompt: options.currentPrompt,
      compactedEntries: history.reduce((n, e) => n + (e.type === 'summary' ? e.compactedEntries : 1), 0),
    });
    return this.rewritten(next);
  }

  /** History was rewritten: the provider's count described the old one. */
  private rewritten(entries: Entry[]): Entry[] {
    this.anchor = undefined;
    return entries;
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

  /** The overflow error users see, with the window and estimate (when a window is known). */
  exceeded(entries: readonly Entry[], providerError: unknown, settings: ResolvedCompactionSettings | undefined): Error {
    const window = this.ctx.contextWindowTokens ?? settings?.contextWindowTokens;
    if (!window) return providerError instanceof Error ? providerError : new Error(String(providerError));
    return new ContextWindowExceededError({
      contextWindowTokens: window,
      estimatedTokens: this.estimate(entries).total,
      detail: `the provider said: ${providerError instanceof Error ? providerError.message : String(providerError)}`,
    });
  }

  /**
   * Asks the runtime for the decision (on Temporal a local activity, so it is in history before it is
   * acted on) and acts only on what it returns: a replay under other settings rebuilds the same history.
   */
  private async decide(
    entries: readonly Entry[],
    settings: ResolvedCompactionSettings,
    trigger: 'threshold' | 'overflow',
  ): Promise<CompactionDecision> {
    const decision = await this.ports.decideCompaction(this.facts(entries, settings, trigger));
    this.noteDecision(decision);
    return decision;
  }

  private facts(entries: readonly Entry[], settings: ResolvedCompactionSettings, trigger: 'threshold' | 'overflow'): DecisionFacts {
    const last = this.lastCompaction;
    return decisionFacts({
      entries,
      system: this.ctx.system,
      tools: this.ctx.tools,
      settings,
      anchor: this.currentAnchor(entries),
      lastCompaction: last ? { entryCountAfter: last.messagesAfter, tokensAfter: last.tokensAfter, ineffective: last.ineffective } : undefined,
      trigger,
    });
  }

  /**
   * Masks the stale tool results the recorded decision named (decisions recorded before it named
   * them: those before its boundary that the settings' evidence rules do not keep). A new array, so
   * runtimes see history was rewritten.
   */
  private maskNow(entries: Entry[], mask: NonNullable<CompactionDecision['mask']>): Entry[] {
    const tokensBefore = this.estimate(entries).total;
    const preserve = preservePredicate(this.ctx.settings?.toolResults?.preserve);
    const result = maskStaleToolResults(entries, { before: mask.before, preserve, ids: mask.ids });
    if (result.masked === 0) return entries;
    this.anchor = undefined; // the provider's count described the unmasked history
    this.emit('masking', {
      before: result.before,
      masked: result.masked,
      savedTokens: result.savedTokens,
      tokensBefore,
      tokensAfter: this.estimate(result.entries).total,
    });
    return result.entries;
  }

  private noteDecision(decision: CompactionDecision): void {
    this.decisionCount += 1;
    this.lastDecision = decision;
  }

  private async compactNow(
    entries: Entry[],
    reason: CompactionReason,
    plan: { keptEntries: number; estimatedTokens?: number; summaryPlan?: CompactionDecision['summaryPlan'] },
    settings: ResolvedCompactionSettings | undefined,
    generateSummary = true,
  ): Promise<CompactOutcome | undefined> {
    const window = this.ctx.contextWindowTokens ?? settings?.contextWindowTokens;
    const estimatedTokens = plan.estimatedTokens ?? this.estimate(entries).total;
    // A veto skips this compaction: a threshold one leaves the history as it is, an overflow one ends
    // in ContextWindowExceededError (the caller's), a manual one compacts nothing.
    const before = await runBeforeCompact(this.ctx.hooks, { reason, entries, tokens: estimatedTokens, contextWindowTokens: window });
    if (!before.ok) this.emit('error', { code: 'COMPACTION_HOOK_FAILED', message: before.message, recoverable: true });
    const said = before.ok ? before.value : undefined;
    if (said && 'veto' in said) {
      this.emit('warning', { code: 'COMPACTION_VETOED', message: `beforeCompact vetoed the ${reason} compaction${said.reason ? `: ${said.reason}` : ''}` });
      return undefined;
    }
    this.emit('compaction_started', { reason, estimatedTokens, contextWindowSize: window ?? 0 });
    const attempt = await compactHistory(this.countingPorts, entries, {
      sessionId: this.ctx.sessionId,
      reason,
      keepRecentEntries: plan.keptEntries,
      generateSummary,
      model: this.ctx.model,
      summarizerBudgetTokens: window ?? 100_000,
      summaryMaxTokens: Math.min(SUMMARY_MAX_TOKENS, Math.floor((window ?? 100_000) / 4)),
      summaryPlan: plan.summaryPlan,
      fixedTokens: this.fixedTokens(),
      // Verbatim user messages are what users miss most, but they must not undo the compaction.
      userMessageBudgetTokens: Math.min(USER_MESSAGE_BUDGET_TOKENS, Math.floor((window ?? 20_000) * USER_MESSAGE_WINDOW_SHARE)),
      instructions: said && 'instructions' in said ? said.instructions : undefined,
    });
    if (!attempt.ok) return undefined;
    await this.flushMemory(entries, attempt.outcome.cut, reason);
    const outcome = await this.withInjection(reason, attempt.outcome);
    this.anchor = undefined; // the provider's count described a history that no longer exists
    this.compactionCount += 1;
    const threshold = settings?.compactAtTokens;
    this.lastCompaction = {
      reason,
      at: this.ports.now(),
      cut: outcome.cut,
      messagesBefore: outcome.messagesBefore,
      messagesAfter: outcome.messagesAfter,
      tokensBefore: outcome.tokensBefore,
      tokensAfter: outcome.tokensAfter,
      summary: outcome.summaryEntry.summary,
      fallback: outcome.summaryEntry.fallback,
      ineffective: threshold !== undefined && isIneffective(outcome.tokensAfter, threshold),
    };
    this.emit('compaction', {
      reason,
      messagesBefore: outcome.messagesBefore,
      messagesAfter: outcome.messagesAfter,
      tokensBefore: outcome.tokensBefore,
      tokensAfter: outcome.tokensAfter,
    });
    this.emit('compaction_completed', {
      originalTurnCount: outcome.messagesBefore,
      preservedTurnCount: outcome.messagesAfter - 1,
      summaryTokenEstimate: estimateTextTokens(outcome.summaryEntry.summary),
      trackedFileCount: outcome.trackedFileCount,
    });
    return outcome;
  }

  /** Asks afterCompact for text to inject; it goes into the summary entry, so the history stays valid. */
  private async withInjection(reason: CompactionReason, outcome: CompactOutcome): Promise<CompactOutcome> {
    const after = await runAfterCompact(this.ctx.hooks, {
      reason,
      summary: outcome.summaryEntry.summary,
      entriesBefore: outcome.messagesBefore,
      entriesAfter: outcome.messagesAfter,
      entries: outcome.entries,
    });
    if (!after.ok) this.emit('error', { code: 'COMPACTION_HOOK_FAILED', message: after.message, recoverable: true });
    const memory = this.ctx.memory?.current();
    const hooked = after.ok ? after.value?.inject?.trim() : undefined;
    // Memory first: it is the durable part; the hook's text is about this compaction.
    const inject = [memory ? memoryBlock(memory) : undefined, hooked].filter(Boolean).join('\n\n');
    if (!inject) return outcome;
    const summaryEntry = { ...outcome.summaryEntry, injected: inject };
    const entries = [summaryEntry, ...outcome.entries.slice(1)];
    return { ...outcome, summaryEntry, entries, tokensAfter: this.fixedTokens() + historyTokens(entries) };
  }

  /**
   * Flushes what the compaction drops into the memory file (when the agent keeps one). A failed flush
   * is reported and the compaction goes on: the memory misses one slice, history loses nothing.
   */
  private async flushMemory(entries: readonly Entry[], cut: number, reason: CompactionReason): Promise<void> {
    if (!this.ctx.memory || cut <= 0) return;
    try {
      await this.ctx.memory.flush(entries, cut, reason);
    } catch (err) {
      if (err instanceof InterruptedError) throw err;
      this.emit('error', { code: 'MEMORY_FLUSH_FAILED', message: `the memory flush failed: ${err instanceof Error ? err.message : String(err)}`, recoverable: true });
    }
  }

  private currentAnchor(entries: readonly Entry[]): UsageAnchor | undefined {
    const a = this.anchor;
    return a && a.entryCount < entries.length ? a : undefined;
  }

  estimate(entries: readonly Entry[]): { total: number; method: 'heuristic' | 'usage-anchored' } {
    return anchoredEstimate({ anchor: this.currentAnchor(entries), entries, system: this.ctx.system, tools: this.ctx.tools });
  }

  private fixedTokens(): number {
    const c = estimateContextTokens({ system: this.ctx.system, tools: this.ctx.tools, entries: [] });
    return c.system + c.tools;
  }

  private emit<K extends AgentEventType>(type: K, data: EventPayloads[K]): void {
    this.ports.emit(makeEvent(type, data, this.ports.now()));
  }
}

/** The conversation before the running turn (its last user entry and what followed it). */
function withoutRunningTurn(entries: readonly Entry[]): Entry[] {
  for (let i = entries.length - 1; i >= 0; i--) if (entries[i]!.type === 'user') return entries.slice(0, i);
  return [...entries];
}
