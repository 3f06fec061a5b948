import { z } from 'zod';
import { assistantText, type Entry, type ToolResultBlock } from './entries';
import { makeEvent, type AgentEventType, type EventPayloads } from './events';
import { FabricError, InterruptedError, MaxStepsExceededError, ModelCallError, TurnSuspendedError } from './errors';
import type { ModelCallRequest, ModelCallResult, RuntimePorts, ThinkingBudget } from './ports';
import { interpretReply } from './replies';
import { toolSpec, type ToolDefinition } from './tools';
import type { ToolSpec } from './tools-spec';
import { CompactionController, type CompactionState } from './context/compaction/controller';
import { isOverflowError } from './context/compaction/overflow';
import { parsePromptCompactionOverrides, type ResolvedCompactionSettings } from './context/settings';
import type { ContextBudget } from './budget';
import { parseWith } from './validate';
import { toolsByNameWithAliases } from './context/artifacts';
import { OverflowLadderState } from './context/ladder';
import { parseThinkingBudget } from './thinking';
import { ServerContextStrategy } from './context/strategy-state';
import type { ContextManagementParams } from './context/strategy';
import { parseAttachmentRefs, promptTextSchema, resetOptionsSchema } from './conversation-types';
import type { CompactOptions, CompactResult, ConversationConfig, ConversationUsage, PromptOptions, ResetOptions, ResetResult, SuspendedTurn, ToolCall } from './conversation-types';
import { interruptedResults, lastUserEntry, parseFinalReply, runToolCall, toolRound, withHostTools } from './conversation-tools';
import { CostMeter } from './costs';
import { fulfilled, isPromiseLike, rejected, settleAll, started, thenSettle, toPromise, type Pending, type Settled } from './pending';

export type { CompactionRecord, CompactionState, SummarizerUsage } from './context/compaction/controller';
export * from './conversation-types';

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
export class Conversation {
  private chain: Entry[] = [];
  private readonly toolSpecs: ToolSpec[];
  private readonly toolsByName: Map<string, ToolDefinition>;
  private readonly compaction: CompactionController;
  /** What the calls so far cost, and the budget each next call is checked against (./costs). */
  readonly costs = new CostMeter();
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
    private readonly config: ConversationConfig,
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

  /** The conversation's entries as the model will see them next (after any compaction). */
  entries(): readonly Entry[] {
    return this.chain;
  }

  /** The same as entries() (its 0.4.0 name: a message is now what a user sends). */
  messages(): readonly Entry[] {
    return this.chain;
  }

  usage(): ConversationUsage {
    const usage = { ...this.costs.usage(), summarizer: this.compaction.summarizerUsage(), cost: this.costs.cost() };
    return this.server.active ? { ...usage, serverContext: this.server.usage() } : usage;
  }

  /** One turn's final reply: text, or parsed with `output`. `T` comes from `output` (or a type argument), never
   * from where the reply is assigned, so `const n: number = await session.prompt(text)` is a type error. */
  async prompt<T = string>(text: string, options: PromptOptions<T> = {}): Promise<NoInfer<T>> {
    parseWith(z.object({ text: promptTextSchema }), { text }, 'prompt'), parseAttachmentRefs(options.attachments);
    return this.exclusive(() => this.rollingBackOnFailure(() => this.runPrompt(text, options)));
  }

  /** Continues a conversation that was saved elsewhere (a session file, a continued workflow). */
  restore(snapshot: { entries: readonly Entry[] }): void {
    this.chain = [...snapshot.entries];
    this.compaction.restoreAnchor(undefined);
  }

  /** Starts a fresh conversation; settings, tools and counters stay. */
  clear(): void {
    this.chain = [];
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

  /** The working directory tools run in (their sandbox root). */
  get cwd(): string {
    return this.config.cwd;
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
        await toPromise(this.runToolCalls(turn.calls, done, turn.turn, turn.maxTurns));
        return this.turnLoop<string>(settings, turn.maxTurns, undefined, turn.turn);
      }, turn.turnStart),
    );
  }

  async compact(options: CompactOptions = {}): Promise<CompactResult> {
    return this.exclusive(async () => {
      const outcome = await this.compaction.compactManually(this.chain, options);
      if (!outcome) return { summary: '', compactedEntries: 0 };
      this.chain = outcome.entries;
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
      const entriesBefore = this.chain.length;
      this.chain = await this.compaction.resetNow(this.chain, { transferSummary: transferSummary ?? true });
      this.suspended = undefined;
      const first = this.chain[0];
      return { entriesBefore, summary: first?.type === 'summary' ? first.summary : '' };
    });
  }

  compactionState(): CompactionState {
    return this.compaction.state(this.chain);
  }

  contextBudget(): ContextBudget | undefined {
    return this.compaction.budget(this.chain);
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
  private async rollingBackOnFailure<T>(fn: () => Promise<T>, length = this.chain.length): Promise<T> {
    const before = this.chain;
    const anchor = this.compaction.anchorMark();
    try {
      return await fn();
    } catch (err) {
      // Suspended: the next run resumes this turn from the entries as they are.
      if (err instanceof TurnSuspendedError) throw err;
      // Interrupted: what the user sent and what happened stay; every tool call gets its result (a
      // tool_use without its result would make every later request invalid).
      if (err instanceof InterruptedError) {
        const results = interruptedResults(this.chain);
        if (results) this.chain.push(results);
        throw err;
      }
      // In place when nothing rewrote history meanwhile: what the runtime stored up to here stays usable.
      before.length = length;
      this.chain = before;
      this.compaction.restoreAnchor(anchor);
      const code = err instanceof FabricError ? err.code : 'PROMPT_FAILED';
      const message = err instanceof Error ? err.message : String(err);
      this.emit('error', { code, message: `The prompt failed and was rolled back: ${message}`, recoverable: true });
      throw err;
    }
  }

  private async runPrompt<T>(text: string, options: PromptOptions<T>): Promise<T> {
    const { output, maxSteps: stepsOverride, maxTurns: deprecatedStepsOverride, attachments, ...rawOverrides } = options;
    const overrides = parsePromptCompactionOverrides(rawOverrides);
    const settings = this.compaction.settingsFor(overrides);
    const maxTurns = stepsOverride ?? deprecatedStepsOverride ?? this.config.maxSteps;
    this.turnStart = this.chain.length;
    this.turnThinking = this.config.thinking;
    this.costs.startTurn();
    this.chain.push(attachments?.length ? { type: 'user', text, attachments } : { type: 'user', text });
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
    // prompt), or throw ContextWindowExceededError. The running prompt is carried through a reset.
    const ladder = new OverflowLadderState();
    this.serverEdits = this.server.params(settings, this.turnThinking !== undefined);
    const recover = async (providerSaid: unknown) => {
      this.chain = await this.compaction.recoverFromOverflow(this.chain, settings, providerSaid, ladder, lastUserEntry(this.chain));
    };
    for (;;) {
      let result: ModelCallResult;
      try {
        // Under the server strategy Claude manages the context; ours acts only on an overflow.
        const call = started(() => (settings?.enabled && !this.server.active ? this.decideThenCallModel(settings) : this.callModel()));
        // One await of the call's own promise, then its settle (./pending): no promise per layer.
        let outcome: Settled;
        try { outcome = fulfilled(await call.promise); } catch (err) { outcome = rejected(err); } // prettier-ignore
        const settled = call.settle(outcome);
        result = isPromiseLike(settled) ? await settled : settled;
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
      this.chain.push(action.keep);
      this.compaction.anchorOn(result.usage, this.chain.length - 1);
      const replyText = assistantText(result.entry);
      if (replyText) this.emit('text', { text: replyText });
      if (action.kind === 'final') return parseFinalReply<T>(replyText, output);
      turn += 1;
      // A failed prompt is rolled back whole, so the calls this reply leaves unanswered go with it.
      if (turn > maxTurns) throw new MaxStepsExceededError(maxTurns);
      if (action.kind === 'continue') continue;
      if (action.kind === 'answer') {
        this.chain.push({ type: 'tool_results', results: action.results });
        continue;
      }
      const round = this.runToolCalls(action.calls, new Map(), turn, maxTurns);
      let outcome: Settled;
      try { outcome = fulfilled(await round.promise); } catch (err) { outcome = rejected(err); } // prettier-ignore
      const done = round.settle(outcome);
      if (isPromiseLike(done)) await done;
    }
  }

  private request(): ModelCallRequest {
    return this.costs.withinBudget({
      sessionId: this.id,
      model: this.config.model,
      maxTokens: this.config.maxTokens,
      system: this.config.system,
      tools: withHostTools(this.toolSpecs, this.toolsByName, this.config.hostTools).specs,
      entries: this.chain,
      ...(this.config.cache ? { cache: this.config.cache } : {}),
      ...(this.turnThinking ? { thinking: this.turnThinking } : {}),
      ...(this.serverEdits ? { contextManagement: this.serverEdits } : {}),
    }, this.config);
  }

  private callModel(): Pending<ModelCallResult> {
    return thenSettle(this.ports.callModel(this.request()), (result) => this.called(result));
  }

  /**
   * The threshold decision and the model call in one round trip: the runtime decides first (on
   * Temporal, recorded in the model activity's result) and calls the model unless the decision is to
   * compact; then the session compacts and calls again. Pendings, not promises (nor callModel,
   * runToolCalls): Temporal's sandbox captures a stack for each promise made (./pending).
   */
  private decideThenCallModel(settings: ResolvedCompactionSettings): Pending<ModelCallResult> {
    const facts = this.compaction.thresholdFacts(this.chain, settings);
    return thenSettle(this.ports.decideThenCallModel(this.request(), facts), (decided) => {
      if (decided.result) {
        this.compaction.noteThresholdDecision(decided.decision); // a call made: nothing masked or compacted
        return this.called(decided.result);
      }
      return this.compaction.actOnThresholdDecision(this.chain, decided.decision, settings).then((chain) => {
        this.chain = chain;
        return toPromise(this.callModel());
      });
    });
  }

  private called(result: ModelCallResult): ModelCallResult {
    this.emit('model_call', {
      model: result.model,
      stopReason: result.stopReason,
      inputTokens: result.usage.inputTokens,
      outputTokens: result.usage.outputTokens,
      costUsd: this.costs.record(result, this.config),
    });
    const edited = this.server.account(result);
    if (edited) this.emit('context_edited', edited);
    return result;
  }

  /**
   * Runs a reply's tool calls side by side. Every tool_use gets its tool_result even when a call failed
   * outright (cancelled, no implementation on the worker), so the history stays valid for the API.
   */
  private runToolCalls(calls: ToolCall[], done: Map<string, ToolResultBlock>, turn: number, maxTurns: number): Pending<void> {
    const { cwd, authorize, approver } = this.config;
    const maxResultTokens = this.config.compaction?.toolResults?.maxTokens;
    const ctx = { conversationId: this.id, cwd, tools: withHostTools(this.toolSpecs, this.toolsByName, this.config.hostTools).byName, authorize, approver, maxResultTokens, ports: this.ports, emit: this.emit.bind(this) };
    const running = calls.map(({ id, name, input }) => done.get(id) ?? runToolCall(ctx, { id, name, input }));
    return settleAll(running, (settled) => {
      if (settled.some((r) => r.status === 'rejected' && r.reason instanceof TurnSuspendedError)) {
        const results = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
        this.suspended = { turnStart: this.turnStart, calls, results, turn, maxTurns, ...(this.turnThinking ? { thinking: this.turnThinking } : {}) };
        throw new TurnSuspendedError();
      }
      const { results, failure } = toolRound(calls, settled);
      this.chain.push({ type: 'tool_results', results });
      if (failure) throw failure.reason;
    });
  }

  private emit<K extends AgentEventType>(type: K, data: EventPayloads[K]): void {
    this.ports.emit(makeEvent(type, data, this.ports.now()));
  }
}

/**
 * @deprecated since 0.5.0: the conversation inside a run is a `Conversation`; "session" now names what a
 * user talks to (a session workflow, an inline session). Kept through 0.6.x; removed in 0.7.0.
 */
export { Conversation as Session };
export { isOverflowError };
