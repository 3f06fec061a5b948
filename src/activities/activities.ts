import type Anthropic from '@anthropic-ai/sdk';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { decideFromFacts } from '../core/compaction/decide';
import { FabricError, ModelCallError } from '../core/errors';
import { DEFAULT_MODEL } from '../core/models';
import type { ToolDefinition } from '../core/tools';
import type { ToolSpec } from '../core/tools-spec';
import { callMessages, createAnthropicClient, lookupContextWindow, type ModelConnection } from './anthropic';
import {
  TRANSCRIPT_STORE_MISS,
  type FabricActivities,
  type ModelActivityInput,
  type ModelActivityResult,
} from './contract';
import { runToolImplementation } from './tool-runner';
import type { TranscriptStore } from './transcript-store';
import { loadJson, saveJson, ToolResultStore, Transcripts } from './transcripts';

const TOOL_HEARTBEAT_MS = 2_000;

export interface ActivityDeps {
  /** API key and base URL, resolved on the worker; never sent through workflow history. */
  connection: ModelConnection;
  defaultModel?: string;
  store: TranscriptStore;
  /** Custom tools by name; built-ins are always available. */
  tools: ToolDefinition[];
}

/**
 * The worker's activities. Model errors become ApplicationFailures whose `type` is the error code:
 * overflow and other 4xx are non-retryable; 429/529/5xx/network are retryable, with `retry-after`
 * as the next retry delay.
 */
export function createActivities(deps: ActivityDeps): FabricActivities {
  const transcripts = new Transcripts(deps.store);
  const toolResults = new ToolResultStore(deps.store);
  const tools = new Map(deps.tools.map((t) => [t.name, t]));
  const windows = new Map<string, number | undefined>();
  let client: Anthropic | undefined;
  const anthropic = (): Anthropic => (client ??= createAnthropicClient(deps.connection));

  return {
    async fhModel(input: ModelActivityInput): Promise<ModelActivityResult> {
      const prelude = await resolvePrelude(deps.store, input.prelude);
      const base = input.base ? await transcripts.load(input.base) : [];
      if (!base) {
        throw ApplicationFailure.create({
          type: TRANSCRIPT_STORE_MISS,
          message: `transcript ${input.base!.head} is not in this worker's store; the workflow resends it in full`,
          nonRetryable: true,
        });
      }
      const delta = await toolResults.resolve(input.delta);
      if (!delta) {
        throw ApplicationFailure.create({
          type: TRANSCRIPT_STORE_MISS,
          message: "a tool result the workflow refers to is not in this worker's store; the workflow resends it in full",
          nonRetryable: true,
        });
      }
      const entries = base.concat(delta);
      const result = await asFailure(() =>
        callMessages(
          anthropic(),
          { model: input.model, maxTokens: input.maxTokens, system: prelude.system, tools: prelude.tools, entries },
          Context.current().cancellationSignal,
        ),
      );
      const stored = await transcripts.append(input.base, base, [...delta, result.entry]);
      return { ...result, stored };
    },

    async fhSummarize(input) {
      const result = await asFailure(() =>
        callMessages(anthropic(), {
          model: input.model,
          maxTokens: input.maxTokens,
          system: input.system,
          tools: [],
          entries: [{ type: 'user', text: input.userText }],
        }),
      );
      const text = result.entry.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
      return { text, usage: result.usage };
    },

    async fhTool(input) {
      const ctx = Context.current();
      // Heartbeat while the tool runs, so a dead worker is noticed within the heartbeat timeout
      // (not the much longer start-to-close timeout) even for tools that never heartbeat themselves.
      const beat = setInterval(() => ctx.heartbeat(), TOOL_HEARTBEAT_MS);
      try {
        const result = await asFailure(() =>
          runToolImplementation(tools.get(input.name), input.name, input.input, {
            cwd: input.cwd,
            signal: ctx.cancellationSignal,
            heartbeat: (details) => ctx.heartbeat(details),
          }),
        );
        // Stored here, so the next model call can refer to it instead of carrying it through history again.
        const contentRef = await toolResults.save(result.content);
        return contentRef ? { ...result, contentRef } : result;
      } finally {
        clearInterval(beat);
      }
    },

    async fhResolveModel(input) {
      const model = input.model ?? deps.defaultModel ?? process.env.ANTHROPIC_MODEL ?? DEFAULT_MODEL;
      // The agent set the window: nothing to look up (and no API key needed for it).
      if (input.contextWindowTokens !== undefined) return { model, contextWindowTokens: input.contextWindowTokens };
      if (!windows.has(model)) windows.set(model, await asFailure(() => lookupContextWindow(anthropic(), model)));
      return { model, contextWindowTokens: windows.get(model) };
    },

    async fhDecideCompaction(facts) {
      return decideFromFacts(facts);
    },
  };
}

async function resolvePrelude(
  store: TranscriptStore,
  prelude: ModelActivityInput['prelude'],
): Promise<{ system?: string; tools: ToolSpec[] }> {
  const key = `preludes/${prelude.hash}.json`;
  if (prelude.value) {
    await saveJson(store, key, prelude.value);
    return prelude.value;
  }
  const stored = await loadJson<{ system?: string; tools: ToolSpec[] }>(store, key);
  if (!stored) {
    throw ApplicationFailure.create({
      type: TRANSCRIPT_STORE_MISS,
      message: `prelude ${prelude.hash} is not in this worker's store; the workflow resends it`,
      nonRetryable: true,
    });
  }
  return stored;
}

/** Runs `fn`, turning our typed errors into ApplicationFailures with the error code as `type`. */
async function asFailure<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ModelCallError) {
      throw ApplicationFailure.create({
        type: err.code,
        message: err.message,
        nonRetryable: !err.retryable,
        nextRetryDelay: err.retryable && err.retryAfterMs !== undefined ? err.retryAfterMs : undefined,
        details: [{ kind: err.kind, status: err.status ?? null }],
      });
    }
    if (err instanceof FabricError) {
      throw ApplicationFailure.create({ type: err.code, message: err.message, nonRetryable: true });
    }
    throw err;
  }
}
