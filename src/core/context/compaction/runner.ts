import type { Entry, UserEntry } from '../../entries';
import { makeEvent, type AgentEventType, type CompactionReason, type EventPayloads } from '../../events';
import { InterruptedError, UnknownContextWindowError } from '../../errors';
import { resolveCompactionSettings, type CompactionSettings, type PromptCompactionOverrides, type ResolvedCompactionSettings } from '../settings';
import { anchoredEstimate, estimateContextTokens, estimateTextTokens, type UsageAnchor } from '../../tokens';
import type { ToolSpec } from '../../tools-spec';
import { maskStaleToolResults } from '../mask';
import { preservePredicate } from '../evidence';
import { compactHistory, historyTokens, type CompactOutcome } from './compact';
import { decisionFacts, isIneffective, type CompactionDecision, type DecisionFacts } from './decide';
import { ContextWindowExceededError } from './errors';
import { runAfterCompact, runBeforeCompact, type CompactionHooks } from './hooks';
import type { ContextMemory } from '../memory';
import { memoryBlock } from '../memory-extract';
import type { StrategyDecision } from '../strategy';
import { COMPACTION_GATE_PATCH, gateCompaction, resolveGate, type GateStepResult } from './gate-step';
import { RESTATE_MAX_CHARS, type GateResult } from './gate';
import { isPatched, type RuntimePorts } from '../../ports';
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
  /** The compaction gate's result (absent: gate off, or recorded before it). */
  gate?: GateResult;
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
 * The compaction machinery under CompactionController (./controller): settings resolution, the usage
 * anchor that sharpens estimates, the recorded decisions, and carrying out compactions, masks and
 * resets with their hooks, memory flushes, counters and the summariser's usage. The controller decides
 * when (before a model call, on an overflow, on request); this class does it and hands back the history.
 */
export class CompactionRunner {
  protected anchor: UsageAnchor | undefined;
  protected compactionCount = 0;
  protected decisionCount = 0;
  protected lastCompaction: CompactionRecord | undefined;
  protected lastDecision: CompactionDecision | undefined;
  protected readonly summarizer: SummarizerUsage = { inputTokens: 0, outputTokens: 0, calls: 0 };
  /** The runtime with summaries counted, for compactHistory. */
  protected readonly countingPorts: RuntimePorts;

  constructor(
    protected readonly ports: RuntimePorts,
    protected readonly ctx: CompactionContext,
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
  protected manualSettings(): ResolvedCompactionSettings | undefined {
    const window = this.ctx.contextWindowTokens;
    return window === undefined ? undefined : resolveCompactionSettings(this.ctx.settings, undefined, window, { enabled: this.ctx.enabledByDefault });
  }

  /** Settings for the state query: never throws (a query must answer). */
  protected visibleSettings(): ResolvedCompactionSettings | undefined {
    if (this.ctx.settings === undefined && !this.ctx.enabledByDefault) return undefined;
    try {
      return this.manualSettings();
    } catch {
      return undefined;
    }
  }

  /**
   * Replaces the conversation with a transfer summary (one summarize call; none when `transferSummary`
   * is false), the memory's current text and the running turn's prompt (when one is running).
   */
  async resetNow(entries: readonly Entry[], options: { transferSummary: boolean; currentPrompt?: UserEntry }): Promise<Entry[]> {
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
  protected rewritten(entries: Entry[]): Entry[] {
    this.anchor = undefined;
    return entries;
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
  protected async decide(
    entries: readonly Entry[],
    settings: ResolvedCompactionSettings,
    trigger: 'threshold' | 'overflow',
  ): Promise<CompactionDecision> {
    const decision = await this.ports.decideCompaction(this.facts(entries, settings, trigger));
    this.noteDecision(decision);
    return decision;
  }

  protected facts(entries: readonly Entry[], settings: ResolvedCompactionSettings, trigger: 'threshold' | 'overflow'): DecisionFacts {
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
  protected maskNow(entries: Entry[], mask: NonNullable<CompactionDecision['mask']>): Entry[] {
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

  protected noteDecision(decision: CompactionDecision): void {
    this.decisionCount += 1;
    this.lastDecision = decision;
  }

  protected async compactNow(
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
    const gated = await this.gateNow(entries, attempt.outcome, window);
    await this.flushMemory(entries, gated.outcome.cut, reason);
    const outcome = await this.withInjection(reason, gated.outcome);
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
      ...(gated.gate ? { gate: gated.gate } : {}),
    };
    this.emit('compaction', {
      reason,
      messagesBefore: outcome.messagesBefore,
      messagesAfter: outcome.messagesAfter,
      tokensBefore: outcome.tokensBefore,
      tokensAfter: outcome.tokensAfter,
      ...(gated.gate ? { gate: gated.gate } : {}),
    });
    this.emit('compaction_completed', {
      originalTurnCount: outcome.messagesBefore,
      preservedTurnCount: outcome.messagesAfter - 1,
      summaryTokenEstimate: estimateTextTokens(outcome.summaryEntry.summary),
      trackedFileCount: outcome.trackedFileCount,
    });
    return outcome;
  }

  /**
   * The compaction gate, pinned text and resume block (./gate-step), behind their patch: a history
   * recorded before it replays exactly as it ran (no check, no re-ask, nothing restated).
   */
  protected async gateNow(entries: readonly Entry[], outcome: CompactOutcome, window: number | undefined): Promise<GateStepResult> {
    const gate = resolveGate(this.ctx.settings, this.ctx.enabledByDefault);
    const pinned = this.ctx.settings?.pinned;
    if ((!gate && !pinned?.length) || !isPatched(this.ports, COMPACTION_GATE_PATCH)) return { outcome };
    const summaryMaxTokens = Math.min(SUMMARY_MAX_TOKENS, Math.floor((window ?? 100_000) / 4));
    // Like the user's words: what is restated must not undo the compaction in a small window.
    const restateMaxChars = Math.min(RESTATE_MAX_CHARS, Math.floor((window ?? 100_000) * USER_MESSAGE_WINDOW_SHARE) * 4);
    return gateCompaction(this.countingPorts, { entries, outcome, gate, pinned, sessionId: this.ctx.sessionId, model: this.ctx.model, summaryMaxTokens, fixedTokens: this.fixedTokens(), restateMaxChars });
  }

  /** Asks afterCompact for text to inject; it goes into the summary entry, so the history stays valid. */
  protected async withInjection(reason: CompactionReason, outcome: CompactOutcome): Promise<CompactOutcome> {
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
  protected async flushMemory(entries: readonly Entry[], cut: number, reason: CompactionReason): Promise<void> {
    if (!this.ctx.memory || cut <= 0) return;
    try {
      await this.ctx.memory.flush(entries, cut, reason);
    } catch (err) {
      if (err instanceof InterruptedError) throw err;
      this.emit('error', { code: 'MEMORY_FLUSH_FAILED', message: `the memory flush failed: ${err instanceof Error ? err.message : String(err)}`, recoverable: true });
    }
  }

  protected currentAnchor(entries: readonly Entry[]): UsageAnchor | undefined {
    const a = this.anchor;
    return a && a.entryCount < entries.length ? a : undefined;
  }

  estimate(entries: readonly Entry[]): { total: number; method: 'heuristic' | 'usage-anchored' } {
    return anchoredEstimate({ anchor: this.currentAnchor(entries), entries, system: this.ctx.system, tools: this.ctx.tools });
  }

  protected fixedTokens(): number {
    const c = estimateContextTokens({ system: this.ctx.system, tools: this.ctx.tools, entries: [] });
    return c.system + c.tools;
  }

  protected emit<K extends AgentEventType>(type: K, data: EventPayloads[K]): void {
    this.ports.emit(makeEvent(type, data, this.ports.now()));
  }
}

/** The conversation before the running turn (its last user entry and what followed it). */
function withoutRunningTurn(entries: readonly Entry[]): Entry[] {
  for (let i = entries.length - 1; i >= 0; i--) if (entries[i]!.type === 'user') return entries.slice(0, i);
  return [...entries];
}
