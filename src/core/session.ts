import { z } from 'zod';
import { assistantText, type Entry, type ToolResultBlock, type Usage } from './entries';
import { makeEvent, type AgentEventType, type CompactionReason, type EventPayloads } from './events';
import { FabricError, InterruptedError, MaxTurnsExceededError, ModelCallError, OutputParseError, TurnSuspendedError } from './errors';
import type { ModelCallRequest, ModelCallResult, PromptCache, RuntimePorts, ThinkingBudget } from './ports';
import { interpretReply } from './replies';
import { approvalNeeded, checkToolInput, toolSpec, type ToolDefinition } from './tools';
import type { ToolSpec } from './tools-spec';
import { CompactionController, type SummarizerUsage } from './compaction/controller';
import type { CompactionHooks } from './compaction/hooks';
import type { ContextMemory } from './context/memory';
import { isContextOverflowMessage } from './compaction/overflow';
import { parsePromptCompactionOverrides, type CompactionSettings, type PromptCompactionOverrides, type ResolvedCompactionSettings } from './settings';
import type { ContextBudget } from './budget';
import { parseWith } from './validate';
import { capToolResult } from './context/cap';
import { toolsByNameWithAliases } from './context/artifacts';
import { OverflowLadderState } from './context/ladder';
import { parseThinkingBudget } from './thinking';
import { ServerContextStrategy } from './context/strategy-state';
import type { ContextManagementParams, ServerContextUsage, StrategyDecision } from './context/strategy';

export type { CompactionRecord, CompactionState, SummarizerUsage } from './compaction/controller';
import type { CompactionState } from './compaction/controller';

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
  /**
   * Asked before each tool call whose input is valid (permission modes, approvals). A refusal goes to
   * the model as the call's error result. May throw TurnSuspendedError (the host continues as new).
   */
  authorize?: ToolAuthorizer;
  /**
   * Asked for a call of a tool that needs approval (`needsApproval`) when no `authorize` is set (a plain
   * run; a session's authorize handles it). Without one such a call is denied: nobody can approve it.
   */
  approver?: ToolAuthorizer;
  /** Prompt caching for the model calls (undefined: off). */
  cache?: PromptCache;
  /** Extended thinking for the model calls (undefined: off). */
  thinking?: ThinkingBudget;
  /** The agent's compaction hooks (init({ hooks })). */
  hooks?: CompactionHooks;
  /** The agent's memory file (compaction.memory): flushed before compactions, re-injected after them. */
  memory?: ContextMemory;
  /** The recorded compaction strategy decision (absent: client). */
  strategy?: StrategyDecision;
}

export type ToolVerdict = { allow: true } | { allow: false; content: string };

/** What the model reads when a call needs approval and the run has no way to ask anyone. */
export function noApproverText(tool: string): string {
  return `The call to ${tool} needs a person's approval, and this run has no approver, so it did not run. Do not retry it; say what you wanted to do instead.`;
}

/** What the model reads when a person denied a call (with their note, if any). */
export function deniedCallText(tool: string, note?: string): string {
  return `The user denied the call to ${tool}${note ? `: ${note}` : '.'} It did not run.`;
}
export type ToolAuthorizer = (call: ToolCall, def: ToolDefinition) => Promise<ToolVerdict>;

export interface ToolCall {
  id: string;
  name: string;
  input: unknown;
}

/**
 * A turn paused at its tool calls (some wait for approval) so that it can be resumed by another run:
 * everything needed besides the conversation, which ends with the assistant's tool_use entry.
 */
export interface SuspendedTurn {
  /** Index of the turn's user entry: where a failed resumption rolls back to. */
  turnStart: number;
  calls: ToolCall[];
  /** Results of the calls that finished before the turn paused. */
  results: ToolResultBlock[];
  /** Tool rounds used so far, and the limit. */
  turn: number;
  maxTurns: number;
  /** The turn's thinking: a resumed tool loop must think as it started (absent: off). */
  thinking?: ThinkingBudget;
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

const resetOptionsSchema = z.object({ transferSummary: z.boolean().optional() }).strict();

export type ResetOptions = z.infer<typeof resetOptionsSchema>;

export interface ResetResult {
  /** Entries the old conversation had (it stays in the runtime's transcript store, where there is one). */
  entriesBefore: number;
  /** The transfer summary the new conversation starts with ('' when there was nothing to summarise). */
  summary: string;
}

export interface CompactResult {
  summary: string;
  compactedEntries: number;
}

export interface SessionUsage extends Usage {
  modelCalls: number;
  /** The summariser's calls (compaction), counted apart from the conversation's model calls. */
  summarizer: SummarizerUsage;
  /** What Claude's server-side context management cleared and compacted (strategy 'server' only). */
  serverContext?: ServerContextUsage;
}

const EVENT_TEXT_LIMIT = 2000;

/** A user prompt: the API refuses text blocks that are empty or only whitespace, so we refuse them first. */
export const promptTextSchema = z.string().refine((t) => t.trim().length > 0, 'must contain non-whitespace text');

/**
 * One conversation. `prompt` runs a turn: model → tools → model … until the model ends its turn. The
 * compaction controller keeps the history inside the window (before each model call, and once when the
 * provider reports an overflow). A prompt that fails leaves the conversation as it was before it, so
 * one bad prompt cannot break the session. Deterministic given what the ports return.
 *
 * The conversation is an array of entries (user, assistant, tool_results, summary). It is appended to
 * in place during a turn and replaced by a new array whenever history is rewritten (compaction,
 * rollback): runtimes rely on that to send only what was added since their last call.
 */
export class Session {
  private entries: Entry[] = [];
  private readonly toolSpecs: ToolSpec[];
  private readonly toolsByName: Map<string, ToolDefinition>;
  private readonly compaction: CompactionController;
  private usageTotals: Usage = { inputTokens: 0, outputTokens: 0 };
  private modelCalls = 0;
  /** A prompt or compaction in progress; the next one waits for it. */
  private busy: Promise<unknown> = Promise.resolve();
  /** Set when a turn paused for a new run (TurnSuspendedError); resumeTurn continues it. */
  private suspended: SuspendedTurn | undefined;
  /** Index of the running turn's user entry, and its tool-round count (for suspension). */
  private turnStart = 0;
  /**
   * The running turn's thinking, fixed when it starts: the API refuses thinking switched on in the
   * middle of a tool loop (the turn answered must start with thinking), so a change waits for the next turn.
   */
  private turnThinking: ThinkingBudget | undefined;
  private readonly server: ServerContextStrategy;
  /** The server-side edits the running turn's calls send (strategy 'server'). */
  private serverEdits: ContextManagementParams | undefined;

  constructor(
    private readonly ports: RuntimePorts,
    private readonly config: SessionConfig,
  ) {
    this.toolSpecs = config.tools.map(toolSpec);
    this.toolsByName = toolsByNameWithAliases(config.tools);
    this.compaction = new CompactionController(ports, {
      sessionId: config.id,
      model: config.model,
      system: config.system,
      tools: this.toolSpecs,
      settings: config.compaction,
      enabledByDefault: config.compactionDefaultEnabled,
      contextWindowTokens: config.contextWindowTokens,
      hooks: config.hooks,
      memory: config.memory,
      strategy: config.strategy,
    });
    this.server = new ServerContextStrategy(config.strategy);
  }

  get id(): string {
    return this.config.id;
  }

  /** The conversation as the model will see it next (after any compaction). */
  messages(): readonly Entry[] {
    return this.entries;
  }

  usage(): SessionUsage {
    const usage = { ...this.usageTotals, modelCalls: this.modelCalls, summarizer: this.compaction.summarizerUsage() };
    return this.server.active ? { ...usage, serverContext: this.server.usage() } : usage;
  }

  async prompt<T = string>(text: string, options: PromptOptions<T> = {}): Promise<T> {
    parseWith(z.object({ text: promptTextSchema }), { text }, 'prompt');
    return this.exclusive(() => this.rollingBackOnFailure(() => this.runPrompt(text, options)));
  }

  /** Continues a conversation that was saved elsewhere (a session file, a continued workflow). */
  restore(snapshot: { entries: readonly Entry[] }): void {
    this.entries = [...snapshot.entries];
    this.compaction.restoreAnchor(undefined);
  }

  /** Starts a fresh conversation; settings, tools and counters stay. */
  clear(): void {
    this.entries = [];
    this.suspended = undefined;
    this.compaction.restoreAnchor(undefined); // the usage anchor pointed into the old conversation
  }

  get model(): string {
    return this.config.model;
  }

  /** Switches the model from the next call on (its window for compaction, when known). */
  changeModel(model: string, contextWindowTokens: number | undefined): void {
    this.config.model = model;
    this.config.contextWindowTokens = contextWindowTokens;
    this.compaction.retarget(model, contextWindowTokens);
  }

  /** Extended thinking with this budget (undefined: off), from the next prompt on. */
  changeThinking(thinking: ThinkingBudget | undefined): void {
    this.config.thinking = thinking === undefined ? undefined : parseThinkingBudget(thinking, 'thinking');
  }

  get thinking(): ThinkingBudget | undefined {
    return this.config.thinking;
  }

  /** Tool paths resolve here from the next call on. */
  changeWorkingDirectory(cwd: string): void {
    this.config.cwd = cwd;
  }

  /** The turn that paused for a new run, if any: carried to it and given to resumeTurn. */
  suspendedTurn(): SuspendedTurn | undefined {
    return this.suspended;
  }

  /** Resumes a turn another run suspended: runs its remaining tool calls, then the turn goes on. */
  async resumeTurn(turn: SuspendedTurn): Promise<string> {
    return this.exclusive(() =>
      this.rollingBackOnFailure(async () => {
        this.suspended = undefined;
        this.turnStart = turn.turnStart;
        this.turnThinking = turn.thinking;
        const settings = this.compaction.settingsFor(undefined);
        const done = new Map(turn.results.map((r) => [r.tool_use_id, r]));
        await this.runToolCalls(turn.calls, done, turn.turn, turn.maxTurns);
        return this.turnLoop<string>(settings, turn.maxTurns, undefined, turn.turn);
      }, turn.turnStart),
    );
  }

  async compact(options: CompactOptions = {}): Promise<CompactResult> {
    return this.exclusive(async () => {
      const outcome = await this.compaction.compactManually(this.entries, options);
      if (!outcome) return { summary: '', compactedEntries: 0 };
      this.entries = outcome.entries;
      return { summary: outcome.summaryEntry.summary, compactedEntries: outcome.cut };
    });
  }

  /**
   * Starts a fresh conversation that begins with a transfer summary of this one (`transferSummary`,
   * default true: one summarize call) and the agent's memory. Settings, tools and counters stay; a
   * runtime that keeps transcripts keeps the old one.
   */
  async reset(options: ResetOptions = {}): Promise<ResetResult> {
    const { transferSummary } = parseWith(resetOptionsSchema, options, 'reset');
    return this.exclusive(async () => {
      const entriesBefore = this.entries.length;
      this.entries = await this.compaction.resetNow(this.entries, { transferSummary: transferSummary ?? true });
      this.suspended = undefined;
      const first = this.entries[0];
      return { entriesBefore, summary: first?.type === 'summary' ? first.summary : '' };
    });
  }

  compactionState(): CompactionState {
    return this.compaction.state(this.entries);
  }

  contextBudget(): ContextBudget | undefined {
    return this.compaction.budget(this.entries);
  }

  private async exclusive<R>(fn: () => Promise<R>): Promise<R> {
    const run = this.busy.then(fn, fn);
    this.busy = run.catch(() => undefined);
    return run;
  }

  /**
   * A failed prompt (the API refused it, it overflowed with compaction off, a tool broke the run…)
   * must not stay in the conversation, or every later prompt fails the same way. The failure itself
   * stays visible where it happened (an error event here; the failed activity in Temporal history).
   */
  private async rollingBackOnFailure<T>(fn: () => Promise<T>, length = this.entries.length): Promise<T> {
    const before = this.entries;
    const anchor = this.compaction.anchorMark();
    try {
      return await fn();
    } catch (err) {
      // Suspended: the next run resumes this turn from the entries as they are.
      if (err instanceof TurnSuspendedError) throw err;
      // Interrupted: what the user sent and what happened stay; every tool call gets its result.
      if (err instanceof InterruptedError) {
        this.closeDanglingToolCalls();
        throw err;
      }
      // In place when nothing rewrote history meanwhile: what the runtime stored up to here stays usable.
      before.length = length;
      this.entries = before;
      this.compaction.restoreAnchor(anchor);
      const code = err instanceof FabricError ? err.code : 'PROMPT_FAILED';
      const message = err instanceof Error ? err.message : String(err);
      this.emit('error', { code, message: `The prompt failed and was rolled back: ${message}`, recoverable: true });
      throw err;
    }
  }

  private async runPrompt<T>(text: string, options: PromptOptions<T>): Promise<T> {
    const { output, maxTurns: turnsOverride, ...rawOverrides } = options;
    const overrides = parsePromptCompactionOverrides(rawOverrides);
    const settings = this.compaction.settingsFor(overrides);
    const maxTurns = turnsOverride ?? this.config.maxTurns;
    this.turnStart = this.entries.length;
    this.turnThinking = this.config.thinking;
    this.entries.push({ type: 'user', text });
    return this.turnLoop(settings, maxTurns, output, 0);
  }

  /** The model → tools loop of one turn, from tool round `turn` on. */
  private async turnLoop<T>(
    settings: ResolvedCompactionSettings | undefined,
    maxTurns: number,
    output: z.ZodType<T> | undefined,
    turn: number,
  ): Promise<T> {
    // The provider said the request does not fit (an error, its own stop reason, or input it reported
    // above the window): climb the overflow ladder one step and retry (each step at most once this
    // prompt), or throw ContextWindowExceededError.
    const ladder = new OverflowLadderState();
    this.serverEdits = this.server.params(settings, this.turnThinking !== undefined);
    const recover = async (providerSaid: unknown) => {
      this.entries = await this.compaction.recoverFromOverflow(this.entries, settings, providerSaid, ladder, this.runningPrompt());
    };
    for (;;) {
      let result: ModelCallResult;
      try {
        // Under the server strategy Claude manages the context; ours acts only on an overflow.
        result = settings?.enabled && !this.server.active ? await this.decideThenCallModel(settings) : await this.callModel();
      } catch (err) {
        if (!isOverflowError(err)) throw err;
        await recover(err);
        continue;
      }
      // What a stop reason means, and what of the reply is kept, is decided in ./replies.
      const action = interpretReply(result.entry, result.stopReason);
      const window = this.config.contextWindowTokens;
      if (action.kind === 'overflow') {
        await recover(new ModelCallError('context_overflow', action.message));
        continue;
      }
      // Overflow the provider did not report as one: with compaction on, treat it like one.
      const reportedInput = result.usage.inputTokens + (result.usage.cacheReadInputTokens ?? 0) + (result.usage.cacheCreationInputTokens ?? 0);
      if (settings?.enabled && window && reportedInput > window) {
        await recover(new ModelCallError('context_overflow', `reported input tokens ${reportedInput} exceed the context window ${window}`));
        continue;
      }
      if (action.kind === 'refusal') throw action.error;
      this.entries.push(action.keep);
      this.compaction.anchorOn(result.usage, this.entries.length - 1);
      const replyText = assistantText(result.entry);
      if (replyText) this.emit('text', { text: replyText });
      if (action.kind === 'final') return this.finish<T>(replyText, output);
      turn += 1;
      // A failed prompt is rolled back whole, so the calls this reply leaves unanswered go with it.
      if (turn > maxTurns) throw new MaxTurnsExceededError(maxTurns);
      if (action.kind === 'continue') continue;
      if (action.kind === 'answer') {
        this.entries.push({ type: 'tool_results', results: action.results });
        continue;
      }
      await this.runToolCalls(action.calls, new Map(), turn, maxTurns);
    }
  }

  /** The running turn's prompt (its last user entry), carried through a session reset so it is still answered. */
  private runningPrompt(): string | undefined {
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const e = this.entries[i]!;
      if (e.type === 'user') return e.text;
    }
    return undefined;
  }

  /** After an interruption: a tool_use without its result would make every later request invalid. */
  private closeDanglingToolCalls(): void {
    const last = this.entries[this.entries.length - 1];
    if (last?.type !== 'assistant') return;
    const uses = last.content.filter((b): b is Extract<typeof b, { type: 'tool_use' }> => b.type === 'tool_use');
    if (uses.length === 0) return;
    this.entries.push({
      type: 'tool_results',
      results: uses.map((u) => ({ type: 'tool_result', tool_use_id: u.id, content: 'Not run: the user interrupted the turn.', is_error: true })),
    });
  }

  private request(): ModelCallRequest {
    return {
      sessionId: this.id,
      model: this.config.model,
      maxTokens: this.config.maxTokens,
      system: this.config.system,
      tools: this.toolSpecs,
      entries: this.entries,
      ...(this.config.cache ? { cache: this.config.cache } : {}),
      ...(this.turnThinking ? { thinking: this.turnThinking } : {}),
      ...(this.serverEdits ? { contextManagement: this.serverEdits } : {}),
    };
  }

  private async callModel(): Promise<ModelCallResult> {
    return this.called(await this.ports.callModel(this.request()));
  }

  /**
   * The threshold decision and the model call in one round trip: the runtime decides first (on
   * Temporal, recorded in the model activity's result) and calls the model unless the decision is to
   * compact; then the session compacts and calls again.
   */
  private async decideThenCallModel(settings: ResolvedCompactionSettings): Promise<ModelCallResult> {
    const facts = this.compaction.thresholdFacts(this.entries, settings);
    const decided = await this.ports.decideThenCallModel(this.request(), facts);
    const entries = await this.compaction.actOnThresholdDecision(this.entries, decided.decision, settings);
    if (decided.result) return this.called(decided.result);
    this.entries = entries;
    return this.callModel();
  }

  private called(result: ModelCallResult): ModelCallResult {
    this.recordUsage(result.usage);
    this.emit('model_call', {
      model: result.model,
      stopReason: result.stopReason,
      inputTokens: result.usage.inputTokens,
      outputTokens: result.usage.outputTokens,
    });
    const edited = this.server.account(result);
    if (edited) this.emit('context_edited', edited);
    return result;
  }

  /**
   * Runs a reply's tool calls side by side. Every tool_use gets its tool_result even when a call failed
   * outright (cancelled, no implementation on the worker), so the history stays valid for the API.
   */
  private async runToolCalls(calls: ToolCall[], done: Map<string, ToolResultBlock>, turn: number, maxTurns: number): Promise<void> {
    const settled = await Promise.allSettled(
      calls.map((call) => done.get(call.id) ?? this.runToolCall(call.id, call.name, call.input)),
    );
    if (settled.some((r) => r.status === 'rejected' && r.reason instanceof TurnSuspendedError)) {
      const results = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      this.suspended = { turnStart: this.turnStart, calls, results, turn, maxTurns, ...(this.turnThinking ? { thinking: this.turnThinking } : {}) };
      throw new TurnSuspendedError();
    }
    const results = settled.map((r, i): ToolResultBlock =>
      r.status === 'fulfilled'
        ? r.value
        : { type: 'tool_result', tool_use_id: calls[i]!.id, content: `Tool call failed: ${errorMessage(r.reason)}`, is_error: true },
    );
    this.entries.push({ type: 'tool_results', results });
    const failure = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failure) throw failure.reason;
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
      let verdict = check.ok && this.config.authorize ? await this.config.authorize({ id, name, input: check.input }, def) : undefined;
      if (check.ok && !this.config.authorize && approvalNeeded(def, check.input)) {
        verdict = this.config.approver ? await this.config.approver({ id, name, input: check.input }, def) : { allow: false, content: noApproverText(name) };
      }
      if (!check.ok) {
        content = check.error;
        isError = true;
      } else if (verdict && !verdict.allow) {
        content = verdict.content;
        isError = true;
      } else {
        const res = await this.ports.runTool(
          { sessionId: this.id, id, name, input: check.input, cwd: this.config.cwd, timeoutMs: def.timeoutMs },
          def,
        );
        content = this.capped(res.content, res.contentRef);
        isError = res.isError;
      }
    }
    this.emit('tool_result', { id, name, isError, content: content.slice(0, EVENT_TEXT_LIMIT) });
    return isError ? { type: 'tool_result', tool_use_id: id, content, is_error: true } : { type: 'tool_result', tool_use_id: id, content };
  }

  /**
   * Oversized output is capped (compaction.toolResults.maxTokens): only the entry's content changes,
   * never which commands run, so it is safe in workflow code. The marker names the stored copy when
   * the runtime kept one (on Temporal the tool activity stores results by content hash).
   */
  private capped(content: string, ref: string | undefined): string {
    const maxTokens = this.config.compaction?.toolResults?.maxTokens;
    return maxTokens === undefined ? content : capToolResult(content, ref !== undefined ? { maxTokens, ref } : { maxTokens }).content;
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

/** Accepts a bare JSON reply or one fenced in ```json … ```. */
function extractJson(text: string): string {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(text);
  return (fenced ? fenced[1] : text).trim();
}
