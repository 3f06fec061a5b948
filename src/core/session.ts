import type { z } from 'zod';
import { assistantText, toolUses, type Entry, type ToolResultBlock, type Usage } from './entries';
import { makeEvent, type AgentEventType, type CompactionReason, type EventPayloads } from './events';
import { ModelCallError, MaxTurnsExceededError, OutputParseError, UnknownContextWindowError } from './errors';
import type { RuntimePorts } from './ports';
import { checkToolInput, type ToolDefinition } from './tools';
import { toolSpec } from './tools';
import type { ToolSpec } from './tools-spec';
import { compactHistory, type CompactOutcome } from './compaction/compact';
import { decisionFacts, isIneffective, type CompactionDecision } from './compaction/decide';
import { ContextWindowExceededError } from './compaction/errors';
import { isContextOverflowMessage } from './compaction/overflow';
import {
  COMPACTION_DEFAULTS,
  promptCompactionOverridesSchema,
  resolveCompactionSettings,
  type CompactionSettings,
  type PromptCompactionOverrides,
  type ResolvedCompactionSettings,
} from './settings';
import { anchoredEstimate, estimateContextTokens, estimateTextTokens, usageAnchor, type UsageAnchor } from './tokens';
import { contextBudget, type ContextBudget } from './budget';
import { parseWith } from './validate';

export interface SessionConfig {
  id: string;
  model: string;
  maxTokens: number;
  system?: string;
  tools: ToolDefinition[];
  cwd: string;
  maxTurns: number;
  /** undefined: not injected (strict entry); compaction is then off. */
  compaction: CompactionSettings | undefined;
  /** Whether compaction is on when `compaction.enabled` is not said (default entry: true). */
  compactionDefaultEnabled: boolean;
  contextWindowTokens: number | undefined;
}

export interface PromptOptions<T = unknown> extends PromptCompactionOverrides {
  /** Parse the final reply as JSON and validate it with this schema. */
  output?: z.ZodType<T>;
  maxTurns?: number;
}

export interface CompactOptions {
  keepRecentEntries?: number;
  generateSummary?: boolean;
  reason?: CompactionReason;
}

/** Tokens and requests of compaction summaries (not in the conversation's own totals). */
export interface SummarizerUsage {
  inputTokens: number;
  outputTokens: number;
  calls: number;
}

export interface CompactResult {
  summary: string;
  compactedEntries: number;
}

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
  settings: ResolvedCompactionSettings | undefined;
  count: number;
  decisions: number;
  last: CompactionRecord | undefined;
  lastDecision: CompactionDecision | undefined;
  estimate: { tokens: number; method: 'heuristic' | 'usage-anchored' };
  contextWindowTokens: number | undefined;
  usagePercent: number | undefined;
}

const EVENT_TEXT_LIMIT = 2000;
const SUMMARY_MAX_TOKENS = 4096;
const USER_MESSAGE_BUDGET_TOKENS = 2000;
const USER_MESSAGE_WINDOW_SHARE = 0.1;

/**
 * One conversation. `prompt` runs a turn: model → tools → model … until the model ends its turn,
 * compacting before a model call when the estimate passes the threshold, and once more (then retrying)
 * when the provider reports an overflow anyway. Everything here is deterministic given the ports.
 */
export class Session {
  private entries: Entry[] = [];
  private readonly toolSpecs: ToolSpec[];
  private readonly toolsByName: Map<string, ToolDefinition>;
  private anchor: UsageAnchor | undefined;
  private usageTotals: Usage = { inputTokens: 0, outputTokens: 0 };
  private modelCalls = 0;
  /** Summary requests of compactions: counted apart from the conversation's model calls. */
  private summarizerUsage: SummarizerUsage = { inputTokens: 0, outputTokens: 0, calls: 0 };
  private compactionCount = 0;
  private decisionCount = 0;
  private lastCompaction: CompactionRecord | undefined;
  private lastDecision: CompactionDecision | undefined;
  private historyVersion = 0;
  /** A prompt or compaction in progress; a manual compaction from a client waits for it. */
  private busy: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly ports: RuntimePorts,
    private readonly config: SessionConfig,
  ) {
    this.toolSpecs = config.tools.map(toolSpec);
    this.toolsByName = new Map(config.tools.map((t) => [t.name, t]));
  }

  get id(): string {
    return this.config.id;
  }

  /** The conversation as the model will see it next (after any compaction). */
  messages(): readonly Entry[] {
    return this.entries;
  }

  usage(): Usage & { modelCalls: number; summarizer: SummarizerUsage } {
    return { ...this.usageTotals, modelCalls: this.modelCalls, summarizer: { ...this.summarizerUsage } };
  }

  async prompt<T = string>(text: string, options: PromptOptions<T> = {}): Promise<T> {
    return this.exclusive(() => this.runPrompt(text, options));
  }

  async compact(options: CompactOptions = {}): Promise<CompactResult> {
    return this.exclusive(async () => {
      const settings = this.resolveSettings(undefined, { allowDisabled: true });
      const outcome = await this.compactNow(
        options.reason ?? 'manual',
        { keptEntries: options.keepRecentEntries ?? settings?.keepRecentEntries ?? COMPACTION_DEFAULTS.keepRecentEntries },
        settings,
        options.generateSummary ?? true,
      );
      if (!outcome) return { summary: '', compactedEntries: 0 };
      return { summary: outcome.summaryEntry.summary, compactedEntries: outcome.cut };
    });
  }

  compactionState(): CompactionState {
    const settings = this.safeSettings();
    const estimate = this.estimate();
    const window = this.config.contextWindowTokens;
    return {
      sessionId: this.id,
      enabled: settings?.enabled ?? false,
      settings,
      count: this.compactionCount,
      decisions: this.decisionCount,
      last: this.lastCompaction,
      lastDecision: this.lastDecision,
      estimate: { tokens: estimate.total, method: estimate.method },
      contextWindowTokens: window,
      usagePercent: window ? round1((estimate.total / window) * 100) : undefined,
    };
  }

  contextBudget(): ContextBudget | undefined {
    const window = this.config.contextWindowTokens;
    if (!window) return undefined;
    return contextBudget({
      system: this.config.system,
      tools: this.toolSpecs,
      entries: this.entries,
      contextWindowTokens: window,
      reserveTokens: this.safeSettings()?.reserveTokens ?? COMPACTION_DEFAULTS.reserveTokens,
      anchor: this.currentAnchor(),
    });
  }

  private async exclusive<R>(fn: () => Promise<R>): Promise<R> {
    const run = this.busy.then(fn, fn);
    this.busy = run.catch(() => undefined);
    return run;
  }

  private async runPrompt<T>(text: string, options: PromptOptions<T>): Promise<T> {
    const { output, maxTurns: turnsOverride, ...rawOverrides } = options;
    const overrides = parseWith(promptCompactionOverridesSchema, rawOverrides, 'prompt options');
    const settings = this.resolveSettings(overrides);
    const maxTurns = turnsOverride ?? this.config.maxTurns;
    this.entries.push({ type: 'user', text });

    let overflowRecovered = false;
    for (let turn = 0; ; ) {
      if (settings?.enabled) await this.maybeCompactBeforeCall(settings);
      let result;
      try {
        result = await this.ports.callModel({
          sessionId: this.id,
          model: this.config.model,
          maxTokens: this.config.maxTokens,
          system: this.config.system,
          tools: this.toolSpecs,
          entries: this.entries,
          historyVersion: this.historyVersion,
        });
      } catch (err) {
        if (!isOverflowError(err)) throw err;
        if (settings?.enabled && settings.recoverFromOverflow && !overflowRecovered) {
          overflowRecovered = true;
          await this.recoverFromOverflow(settings);
          continue;
        }
        throw this.exceeded(err, settings);
      }
      this.recordUsage(result.usage);
      this.emit('model_call', {
        model: result.model,
        stopReason: result.stopReason,
        inputTokens: result.usage.inputTokens,
        outputTokens: result.usage.outputTokens,
      });
      const window = this.config.contextWindowTokens;
      // Overflow the provider did not report as an error: with compaction on, treat it like one, once.
      if (settings?.enabled && window && result.usage.inputTokens > window) {
        const err = new ModelCallError(
          'context_overflow',
          `reported input tokens ${result.usage.inputTokens} exceed the context window ${window}`,
        );
        if (settings?.enabled && settings.recoverFromOverflow && !overflowRecovered) {
          overflowRecovered = true;
          await this.recoverFromOverflow(settings);
          continue;
        }
        throw this.exceeded(err, settings);
      }
      this.entries.push(result.entry);
      this.anchor = usageAnchor(result.usage, this.entries.length - 1);
      const replyText = assistantText(result.entry);
      if (replyText) this.emit('text', { text: replyText });

      const calls = toolUses(result.entry);
      if (calls.length === 0 || result.stopReason !== 'tool_use') {
        return this.finish<T>(replyText, output);
      }
      turn += 1;
      if (turn > maxTurns) throw new MaxTurnsExceededError(maxTurns);
      const settled = await Promise.allSettled(calls.map((call) => this.runToolCall(call.id, call.name, call.input)));
      // Every tool_use gets its tool_result even when a call failed outright (cancelled, a tool not
      // registered on the worker): the history stays valid for the API if the session is used again.
      const results = settled.map((r, i): ToolResultBlock =>
        r.status === 'fulfilled'
          ? r.value
          : { type: 'tool_result', tool_use_id: calls[i]!.id, content: `Tool call failed: ${errorMessage(r.reason)}`, is_error: true },
      );
      this.entries.push({ type: 'tool_results', results });
      const failure = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failure) throw failure.reason;
    }
  }

  private finish<T>(text: string, output: z.ZodType<T> | undefined): T {
    if (!output) return text as T;
    let parsed: unknown;
    try {
      parsed = JSON.parse(extractJson(text));
    } catch {
      throw new OutputParseError(`The model's reply is not JSON: ${text.slice(0, 200)}`);
    }
    return parseWith(output, parsed, 'model output');
  }

  private async runToolCall(id: string, name: string, input: unknown): Promise<ToolResultBlock> {
    this.emit('tool_call', { id, name, input });
    const def = this.toolsByName.get(name);
    let content: string;
    let isError: boolean;
    if (!def) {
      // The model invented a tool: tell it, so it can correct itself; the run goes on.
      content = `Unknown tool '${name}'. Available tools: ${[...this.toolsByName.keys()].join(', ') || '(none)'}.`;
      isError = true;
    } else {
      const check = checkToolInput(def, input);
      if (!check.ok) {
        content = check.error;
        isError = true;
      } else {
        const res = await this.ports.runTool(
          { sessionId: this.id, id, name, input: check.input, cwd: this.config.cwd, timeoutMs: def.timeoutMs },
          def,
        );
        content = res.content;
        isError = res.isError;
      }
    }
    this.emit('tool_result', { id, name, isError, content: content.slice(0, EVENT_TEXT_LIMIT) });
    return isError ? { type: 'tool_result', tool_use_id: id, content, is_error: true } : { type: 'tool_result', tool_use_id: id, content };
  }

  private async maybeCompactBeforeCall(settings: ResolvedCompactionSettings): Promise<void> {
    const decision = await this.decide(settings, 'threshold');
    if (decision.warn) {
      this.emit('context_window_warning', {
        estimatedTokens: decision.estimatedTokens,
        contextWindowSize: decision.contextWindowTokens,
        usagePercent: decision.usagePercent,
      });
    }
    if (decision.ineffectiveSkip) {
      this.emit('warning', { code: 'COMPACTION_INEFFECTIVE', message: decision.why });
    }
    if (!decision.compact) return;
    await this.compactNow('threshold', decision, settings);
  }

  private async recoverFromOverflow(settings: ResolvedCompactionSettings): Promise<void> {
    const decision = await this.decide(settings, 'overflow');
    const outcome = decision.compact ? await this.compactNow('overflow', decision, settings) : undefined;
    if (!outcome) {
      throw new ContextWindowExceededError({
        contextWindowTokens: settings.contextWindowTokens,
        estimatedTokens: decision.estimatedTokens,
        detail: decision.why,
      });
    }
  }

  /**
   * Asks the runtime for the decision (on Temporal a local activity, so it is in history before it is
   * acted on) and acts only on what it returns: a replay under other settings rebuilds the same history.
   */
  private async decide(settings: ResolvedCompactionSettings, trigger: 'threshold' | 'overflow'): Promise<CompactionDecision> {
    const last = this.lastCompaction;
    const decision = await this.ports.decideCompaction(decisionFacts({
      entries: this.entries,
      system: this.config.system,
      tools: this.toolSpecs,
      settings,
      anchor: this.currentAnchor(),
      lastCompaction: last
        ? { entryCountAfter: last.messagesAfter, tokensAfter: last.tokensAfter, ineffective: last.ineffective }
        : undefined,
      trigger,
    }));
    this.decisionCount += 1;
    this.lastDecision = decision;
    return decision;
  }

  private async compactNow(
    reason: CompactionReason,
    plan: { keptEntries: number; estimatedTokens?: number },
    settings: ResolvedCompactionSettings | undefined,
    generateSummary = true,
  ): Promise<CompactOutcome | undefined> {
    const window = this.config.contextWindowTokens ?? settings?.contextWindowTokens;
    const fixedTokens = this.fixedTokens();
    this.emit('compaction_started', {
      reason,
      estimatedTokens: plan.estimatedTokens ?? this.estimate().total,
      contextWindowSize: window ?? 0,
    });
    const attempt = await compactHistory(this.ports, this.entries, {
      sessionId: this.id,
      reason,
      keepRecentEntries: plan.keptEntries,
      generateSummary,
      model: this.config.model,
      summarizerBudgetTokens: window ?? 100_000,
      summaryMaxTokens: Math.min(SUMMARY_MAX_TOKENS, Math.floor((window ?? 100_000) / 4)),
      fixedTokens,
      // Verbatim user messages are what users miss most, but they must not undo the compaction.
      userMessageBudgetTokens: Math.min(USER_MESSAGE_BUDGET_TOKENS, Math.floor((window ?? 20_000) * USER_MESSAGE_WINDOW_SHARE)),
      onSummaryUsage: (u) => {
        const s = this.summarizerUsage;
        this.summarizerUsage = { inputTokens: s.inputTokens + u.inputTokens, outputTokens: s.outputTokens + u.outputTokens, calls: s.calls + 1 };
      },
    });
    if (!attempt.ok) return undefined;
    const outcome = attempt.outcome;
    this.entries = outcome.entries;
    this.historyVersion += 1;
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

  private exceeded(err: unknown, settings: ResolvedCompactionSettings | undefined): Error {
    const window = this.config.contextWindowTokens ?? settings?.contextWindowTokens;
    if (!window) return err instanceof Error ? err : new Error(String(err));
    return new ContextWindowExceededError({
      contextWindowTokens: window,
      estimatedTokens: this.estimate().total,
      detail: `the provider said: ${errorMessage(err)}`,
    });
  }

  private resolveSettings(
    overrides: PromptCompactionOverrides | undefined,
    opts: { allowDisabled?: boolean } = {},
  ): ResolvedCompactionSettings | undefined {
    const session = this.config.compaction;
    const enabledByDefault = this.config.compactionDefaultEnabled;
    // Strict entry: nothing is injected; without session settings compaction stays off.
    if (session === undefined && !enabledByDefault && !opts.allowDisabled) return undefined;
    const window = this.config.contextWindowTokens;
    if (window === undefined) {
      if (opts.allowDisabled) return undefined;
      const wantsCompaction = session?.enabled ?? enabledByDefault;
      if (!wantsCompaction) return undefined;
      throw new UnknownContextWindowError(this.config.model);
    }
    return resolveCompactionSettings(session, overrides, window, { enabled: enabledByDefault });
  }

  private safeSettings(): ResolvedCompactionSettings | undefined {
    try {
      return this.resolveSettings(undefined, { allowDisabled: true });
    } catch {
      return undefined;
    }
  }

  private currentAnchor(): UsageAnchor | undefined {
    const a = this.anchor;
    return a && a.entryCount < this.entries.length ? a : undefined;
  }

  private estimate(): { total: number; method: 'heuristic' | 'usage-anchored' } {
    return anchoredEstimate({
      anchor: this.currentAnchor(),
      entries: this.entries,
      system: this.config.system,
      tools: this.toolSpecs,
    });
  }

  private fixedTokens(): number {
    const c = estimateContextTokens({ system: this.config.system, tools: this.toolSpecs, entries: [] });
    return c.system + c.tools;
  }

  private recordUsage(usage: Usage): void {
    this.modelCalls += 1;
    this.usageTotals = {
      inputTokens: this.usageTotals.inputTokens + usage.inputTokens,
      outputTokens: this.usageTotals.outputTokens + usage.outputTokens,
      cacheReadInputTokens: (this.usageTotals.cacheReadInputTokens ?? 0) + (usage.cacheReadInputTokens ?? 0),
      cacheCreationInputTokens: (this.usageTotals.cacheCreationInputTokens ?? 0) + (usage.cacheCreationInputTokens ?? 0),
    };
  }

  private emit<K extends AgentEventType>(type: K, data: EventPayloads[K]): void {
    this.ports.emit(makeEvent(type, data, this.ports.now()));
  }
}

export function isOverflowError(err: unknown): boolean {
  if (err instanceof ModelCallError) {
    return err.kind === 'context_overflow' || (err.kind === 'invalid_request' && isContextOverflowMessage(err.message));
  }
  return false;
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function round1(n: number): number {
  return Math.round(n * 10) / 10;
}

/** Accepts a bare JSON reply or one fenced in ```json … ```. */
function extractJson(text: string): string {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(text);
  return (fenced ? fenced[1] : text).trim();
}
