import type Anthropic from '@anthropic-ai/sdk';
import { actsBeforeCall, decideFromFacts } from '../core/compaction/decide';
import type { EventListener } from '../core/events';
import { ModelCallError } from '../core/errors';
import { DEFAULT_MODEL } from '../core/models';
import type { ModelCallRequest, RuntimePorts } from '../core/ports';
import { callMessages, createAnthropicClient, lookupModelFacts, type MessagesCall, type ModelConnection, type ModelFacts } from '../activities/anthropic';
import { chooseStrategy } from '../core/context/strategy';
import { countTokensParams, decideWithExactCount, TokenCountCache, wantsExactCount } from '../activities/count-tokens';
import { runToolImplementation } from '../activities/tool-runner';
import { createLocalTools } from '../activities/local-tools';
import { resolveToolSandbox } from '../activities/tool-env';
import type { ToolSandboxSettings } from '../core/agent';
import { offloadToolResult, readArtifact } from '../activities/artifacts';
import { MemoryTranscriptStore } from '../activities/transcript-store';
import { ToolResultStore } from '../activities/transcripts';
import { isReadArtifact } from '../core/context/artifacts';
import type { ToolRegistry } from '../core/tool-registry';
import { inlineMemoryPort } from './memory';

export interface InlinePortOptions extends ModelConnection {
  model?: string;
  onEvent?: EventListener;
  /** Cancels the run's model calls and tools when aborted (invoke's `signal`). */
  signal?: AbortSignal;
  /** Code for declared tools (invoke's `tools`); a tool's own execute comes first. */
  tools?: ToolRegistry;
  /** The agent run (the default memory key; 'default' for a bare init()). */
  agentName?: string;
  /** Where memory files are kept (default: in this process only). */
  memoryDir?: string;
  /** How bash runs (invoke's `toolSandbox`): resolved once per run, see tool-env.ts. */
  toolSandbox?: ToolSandboxSettings;
  /** Attempts for retryable model errors (429/529/5xx/network); Temporal's retry policy plays this role there. */
  maxAttempts?: number;
}

/**
 * The in-process runtime: the same activity code, called directly. Retryable model errors are retried
 * here with backoff (honouring retry-after), as the Temporal retry policy does on a worker.
 */
export function createInlinePorts(opts: InlinePortOptions): RuntimePorts {
  let client: Anthropic | undefined;
  const anthropic = (): Anthropic => (client ??= createAnthropicClient(opts));
  const modelFacts = new Map<string, ModelFacts>();
  // The same confinement as a worker's bash (bubblewrap by default), settings checked before the run starts.
  const local = createLocalTools(resolveToolSandbox(opts.toolSandbox));
  // invoke's `signal`: aborting it cancels the model call in flight and the tools (bash: its process group).
  const signal = opts.signal ?? new AbortController().signal;
  const maxAttempts = opts.maxAttempts ?? 5;

  const counts = new TokenCountCache();
  // This run's artifacts and full tool outputs (what a worker keeps in its store), for read_artifact.
  // In memory: they live as long as the run, as the conversation that refers to them does.
  const artifacts = new ToolResultStore(new MemoryTranscriptStore());
  const messagesCall = (req: ModelCallRequest): MessagesCall => ({
    model: req.model,
    maxTokens: req.maxTokens,
    system: req.system,
    tools: req.tools,
    entries: req.entries,
    cache: req.cache,
    thinking: req.thinking,
    contextManagement: req.contextManagement,
  });
  const callModel = (req: ModelCallRequest) => withRetries(maxAttempts, () => callMessages(anthropic(), messagesCall(req), signal));

  const textCall = (model: string, req: { system: string; userText: string; maxTokens: number }) =>
    withRetries(maxAttempts, () =>
      callMessages(anthropic(), { model, maxTokens: req.maxTokens, system: req.system, tools: [], entries: [{ type: 'user', text: req.userText }] }, signal),
    );

  return {
    runtime: 'inline',
    callModel,
    memory: inlineMemoryPort({
      agentName: opts.agentName ?? 'default',
      dir: opts.memoryDir,
      call: (model) => async (req) => {
        const res = await textCall(model, req);
        return { text: res.entry.content.map((b) => (b.type === 'text' ? b.text : '')).join('') };
      },
    }),
    async decideThenCallModel(req, facts) {
      const decision = wantsExactCount(facts)
        ? await decideWithExactCount(facts, () => counts.count(anthropic(), countTokensParams(messagesCall(req)), signal))
        : decideFromFacts(facts);
      return actsBeforeCall(decision) ? { decision } : { decision, result: await callModel(req) };
    },
    async summarize(req) {
      const res = await withRetries(maxAttempts, () =>
        callMessages(anthropic(), {
          model: req.model,
          maxTokens: req.maxTokens,
          system: req.system,
          tools: [],
          entries: [{ type: 'user', text: req.userText }],
        }, signal),
      );
      return { text: res.entry.content.map((b) => (b.type === 'text' ? b.text : '')).join(''), usage: res.usage };
    },
    async runTool(call, def) {
      if (isReadArtifact(call.name)) return readArtifact(artifacts, call.input);
      const output = await runToolImplementation(
        def.execute ?? opts.tools?.get(call.name),
        call.name,
        call.input,
        { cwd: call.cwd, signal, heartbeat: () => undefined },
        { where: 'inline', local, timeoutMs: def.timeoutMs },
      );
      const result = await offloadToolResult(artifacts, output, { tool: call.name, input: call.input }, call.offloadBytes);
      if (result.artifact) return result;
      // Kept as a worker keeps it, so a capped result's marker names a ref read_artifact can page back.
      const contentRef = await artifacts.save(result.content);
      return contentRef ? { ...result, contentRef } : result;
    },
    decideCompaction: async (facts) => decideFromFacts(facts),
    async resolveModel(model, options = {}) {
      const name = model ?? opts.model ?? process.env.ANTHROPIC_MODEL ?? DEFAULT_MODEL;
      const setting = options.strategy;
      const wantsStrategy = setting !== undefined && setting !== 'client';
      if (options.contextWindowTokens !== undefined && !wantsStrategy) {
        return { model: name, contextWindowTokens: options.contextWindowTokens, ...(setting ? { strategy: chooseStrategy(setting, name, undefined) } : {}) };
      }
      if (!modelFacts.has(name)) modelFacts.set(name, await lookupModelFacts(anthropic(), name));
      const facts = modelFacts.get(name)!;
      const window = options.contextWindowTokens ?? facts.contextWindowTokens;
      return { model: name, contextWindowTokens: window, ...(setting ? { strategy: chooseStrategy(setting, name, facts.capabilities) } : {}) };
    },
    now: () => Date.now(),
    emit: (event) => opts.onEvent?.(event),
  };
}

async function withRetries<T>(maxAttempts: number, fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof ModelCallError) || !err.retryable || attempt >= maxAttempts) throw err;
      const backoff = err.retryAfterMs ?? Math.min(30_000, 500 * 2 ** (attempt - 1));
      await new Promise((r) => setTimeout(r, backoff));
    }
  }
}
