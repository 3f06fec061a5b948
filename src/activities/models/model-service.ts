/**
 * The model side of the activities, once: the connections' clients (./connections), model lookup, the compaction decision made before
 * a model call (exactly counted when the estimator asks), the call itself, summaries and other text
 * calls, and running a tool with its output offloaded. Two adapters sit on it: the worker's activities
 * (./activities: heartbeats, typed errors as ApplicationFailures, the store by reference) and the
 * in-process ports (../inline/ports: retries with backoff, an in-memory store).
 *
 * Each network call goes through the adapter's `around`, which is where those differences live.
 */
import { actsBeforeCall, decideFromFacts, type CompactionDecision, type DecisionFacts } from '../../core/context/compaction/decide';
import { chooseStrategy, type CompactionStrategySetting } from '../../core/context/strategy';
import { assistantText, type Usage } from '../../core/entries';
import { DEFAULT_MODEL } from '../../core/models';
import type { ModelCallResult } from '../../core/ports';
import type { ToolContext, ToolExecute } from '../../core/tools';
import type { ResolveModelResult } from '../../wire/activity-contract';
import type { ModelConnection } from './anthropic/messages';
import type { MessagesCall, ModelFacts, ModelProvider } from './port';
import { Connections, DEFAULT_CONNECTION, type ModelConnectionSettings } from './connections';
import { offloadToolResult, type OffloadedResult } from '../stores/artifacts';
import { decideWithExactCount, TokenCountCache, wantsExactCount } from './token-counts';
import { assertCapable, CapabilityUnsupportedError } from './capabilities';
import { runToolImplementation, type ToolRunOptions } from '../tools/tool-runner';
import type { ToolResultStore } from '../stores/tool-results';

/** Wraps one network call (retries in-process; heartbeats and failure encoding on a worker). */
export type AroundCall = <T>(fn: () => Promise<T>) => Promise<T>;

/** A text-only model call: what summaries and memory updates send. */
export interface TextCall {
  system: string;
  userText: string;
  maxTokens: number;
}

export interface ModelServiceOptions {
  /** Anthropic's API key and base URL: the 'anthropic' connection (resolved on the worker or the inline process; never sent through workflow history). */
  connection: ModelConnection;
  /** Named connections (providers and their credentials), besides the built-in ones: see ./connections. */
  connections?: Record<string, ModelConnectionSettings>;
  /** The model when none is asked for (then ANTHROPIC_MODEL, then the SDK's default). */
  defaultModel?: string;
  /** Exact token counts kept (estimator 'count-tokens'), by request hash (default COUNT_CACHE_SIZE). */
  tokenCountCacheSize?: number;
}

export class ModelService {
  private readonly connections: Connections;
  private readonly modelFacts = new Map<string, ModelFacts>();
  private readonly counts: TokenCountCache;

  constructor(private readonly options: ModelServiceOptions) {
    this.counts = new TokenCountCache(options.tokenCountCacheSize);
    this.connections = new Connections(options.connections, options.connection);
  }

  /** The provider behind a connection (default: Anthropic direct), its client made on first use. */
  provider(connection?: string): ModelProvider {
    return this.connections.provider(connection);
  }

  modelName(requested: string | undefined): string {
    return requested ?? this.options.defaultModel ?? process.env.ANTHROPIC_MODEL ?? DEFAULT_MODEL;
  }

  /**
   * The model and its window, and (with a strategy setting) the strategy decided from its capabilities.
   * Looked up once per model; not at all when the agent set the window and no strategy needs them.
   */
  async resolveModel(
    input: { model?: string; contextWindowTokens?: number; strategy?: CompactionStrategySetting; verify?: boolean; connection?: string },
    around: AroundCall,
  ): Promise<ResolveModelResult> {
    const model = this.modelName(input.model);
    const connection = input.connection ?? DEFAULT_CONNECTION;
    const provider = this.provider(connection);
    if (input.verify) await around(() => provider.verifyModel(model));
    const setting = input.strategy;
    // Without server-side editing 'auto' is client compaction, and 'server' is refused (never quietly client).
    if (setting !== undefined && setting !== 'client' && !provider.capabilities.serverContextEditing) {
      if (setting === 'server') throw new CapabilityUnsupportedError('serverContextEditing', connection, provider.protocol);
      const why = `auto: connection '${connection}' (${provider.protocol}) has no server-side context editing`;
      const strategy = { strategy: 'client' as const, setting, why };
      if (input.contextWindowTokens !== undefined) return { model, contextWindowTokens: input.contextWindowTokens, strategy };
      return { model, contextWindowTokens: (await this.facts(connection, provider, model, around)).contextWindowTokens, strategy };
    }
    const wantsStrategy = setting !== undefined && setting !== 'client';
    if (input.contextWindowTokens !== undefined && !wantsStrategy) {
      return setting
        ? { model, contextWindowTokens: input.contextWindowTokens, strategy: chooseStrategy(setting, model, undefined) }
        : { model, contextWindowTokens: input.contextWindowTokens };
    }
    const facts = await this.facts(connection, provider, model, around);
    const window = input.contextWindowTokens ?? facts.contextWindowTokens;
    // Decided here, so on Temporal the choice is the activity's recorded result: a replay follows it.
    return setting ? { model, contextWindowTokens: window, strategy: chooseStrategy(setting, model, facts.capabilities) } : { model, contextWindowTokens: window };
  }

  /** What the provider says of `model` on `connection`: asked once per connection and model. */
  private async facts(connection: string, provider: ModelProvider, model: string, around: AroundCall): Promise<ModelFacts> {
    const key = `${connection}\u0000${model}`;
    if (!this.modelFacts.has(key)) this.modelFacts.set(key, await around(() => provider.modelFacts(model)));
    return this.modelFacts.get(key)!;
  }

  /** The provider behind `connection`, refusing what `call` asks of it that it cannot do (CAPABILITY_UNSUPPORTED). */
  capable(call: MessagesCall, connection: string | undefined): ModelProvider {
    const provider = this.provider(connection);
    assertCapable(call, provider, connection ?? DEFAULT_CONNECTION);
    return provider;
  }

  /**
   * The compaction decision, then the model call unless the decision rewrites history first. Decided
   * from the facts before the request is even loaded (cheap), except under estimator 'count-tokens',
   * which counts the request exactly. `request` loads it (on a worker: from the store); `signal` is
   * asked for only once it is (on a worker it comes from the activity context).
   */
  async decideThenCall<R extends MessagesCall>(
    facts: DecisionFacts | undefined,
    request: () => Promise<R>,
    signal: () => AbortSignal,
    around: AroundCall,
    /** Makes the model call instead of callModel (a streaming call publishes its deltas as they come). */
    invoke?: (call: R) => Promise<ModelCallResult>,
    connection?: string,
  ): Promise<{ decision?: CompactionDecision; call?: R; result?: ModelCallResult }> {
    const exact = wantsExactCount(facts);
    let decision = facts && !exact ? decideFromFacts(facts) : undefined;
    if (decision && actsBeforeCall(decision)) return { decision };
    const call = await request();
    const provider = this.capable(call, connection);
    if (exact) {
      if (!provider.countTokens) throw new CapabilityUnsupportedError('tokenCounting', connection ?? DEFAULT_CONNECTION, provider.protocol);
      decision = await around(() => decideWithExactCount(facts, () => this.counts.count(provider, call, signal())));
      if (actsBeforeCall(decision)) return { decision, call };
    }
    const result = invoke ? await invoke(call) : await this.callModel(call, signal(), around, connection);
    return { decision, call, result };
  }

  async callModel(call: MessagesCall, signal: AbortSignal, around: AroundCall, connection?: string): Promise<ModelCallResult> {
    const provider = this.capable(call, connection);
    return around(() => provider.call(call, { signal }));
  }

  /** A text-only call (summaries, memory updates): the reply's text and usage. */
  async text(model: string, req: TextCall, signal: AbortSignal, around: AroundCall, connection?: string): Promise<{ text: string; usage: Usage }> {
    const call = { model, maxTokens: req.maxTokens, system: req.system, tools: [], entries: [{ type: 'user' as const, text: req.userText }] };
    const result = await this.callModel(call, signal, around, connection);
    return { text: assistantText(result.entry), usage: result.usage };
  }
}

/**
 * Runs one tool call's code and offloads an output over `offloadBytes` to `store` (the model then
 * reads a reference, and pages the output back with read_artifact).
 */
export async function runToolWithOffload(
  store: ToolResultStore,
  code: ToolExecute | undefined,
  call: { name: string; input: unknown; offloadBytes?: number },
  ctx: ToolContext,
  options: ToolRunOptions,
  around: AroundCall,
): Promise<OffloadedResult> {
  const output = await around(() => runToolImplementation(code, call.name, call.input, ctx, options));
  // Decided where the tool ran, with the threshold the conversation sent; on Temporal recorded in the result.
  return around(() => offloadToolResult(store, output, { tool: call.name, input: call.input }, call.offloadBytes));
}
