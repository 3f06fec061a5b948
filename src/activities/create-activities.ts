import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { encodeFailure } from '../wire/failures';
import { decideFromFacts, isQuiet } from '../core/context/compaction/decide';
import { checkSummary } from '../core/context/compaction/gate';
import { ToolRegistry, type ToolSource } from '../core/tool-registry';
import { isReadArtifact } from '../core/context/artifacts';
import { offloadToolResult, readArtifact } from './stores/artifacts';
import type { ToolSpec } from '../core/tools-spec';
import type { Entry } from '../core/entries';
import type { ModelConnection } from './models/anthropic/messages';
import type { ModelConnectionSettings } from './models/connections';
import type { MessagesCall, ModelProvider, SerialisedBody } from './models/port';
import { RequestBodies, type EncodedBody } from './models/anthropic/request-body';
import { LivePublisher, ToolOutputLines } from './stream/stream-publisher';
import type { RedisLivePublisher } from './stream/redis-broker';
import type { LiveBrokerEntry } from '../wire/live-broker';
import type { StreamSlot } from '../wire/stream';
import type { ModelCallResult } from '../core/ports';
import {
  TRANSCRIPT_STORE_MISS,
  type FabricActivities,
  type ModelActivityInput,
  type ModelActivityResult,
  type TranscriptRef,
} from '../wire/activity-contract';
import { createLocalTools } from './tools/local-tools';
import { McpConnections } from './mcp/connections';
import { activityOwner, createWorktree, finishWorktree } from './git/worktrees';
import { enhancePrompt } from './enhance/enhance';
import { recordDecisionSpan, recordModelCallSpan, toolCallSpan } from './telemetry/telemetry';
import { resolveToolSandbox, type ToolSandboxOptions } from './tools/tool-env';
import { canonicalJson, hashString } from '../core/hash';
import { StoreBlobMissingError, StoreIntegrityError } from './stores/store-errors';
import { ModelService, runToolWithOffload, type AroundCall, type TextCall } from './models/model-service';
import type { TranscriptStore } from './stores/transcript-store';
import { loadJson, saveJson, Transcripts } from './stores/transcripts';
import { ToolResultStore } from './stores/tool-results';
import { AttachmentStore } from './stores/attachments';
import { MemoryFiles } from './stores/memory-files';
import { ReplyArchiveStore } from './stores/reply-archive-store';
import { updateMemory } from '../core/context/memory-extract';
import { Lru } from '../core/lru';
import { HEARTBEAT_MS, heartbeating } from './heartbeat';

export interface ActivityDeps {
  /** API key and base URL, resolved on the worker; never sent through workflow history. */
  connection: ModelConnection;
  /** Named model connections (providers and credentials), resolved on the worker: see models/connections. */
  connections?: Record<string, ModelConnectionSettings>;
  defaultModel?: string;
  store: TranscriptStore;
  /** Code of the custom tools (implementations, tools with execute, or modules of them); built-ins are always available. */
  tools: ToolSource[] | ToolRegistry;
  /** How bash runs on this worker (environment, wrapper); default a minimal environment, no wrapper. */
  toolSandbox?: ToolSandboxOptions;
  /** MCP connections of this worker (the servers it registered, its pool). */
  mcp?: McpConnections;
  /**
   * This worker's own task queue for pinned MCP calls, started on first use, for an activity that came
   * on `servedQueue` (undefined: none; a run's calls then go where they always went).
   */
  mcpPinQueue?: (servedQueue: string) => Promise<string | undefined>;
  /** In-memory cache sizes on this worker (see WorkerCacheSizes). */
  caches?: WorkerCacheSizes;
  /** The live path on a broker: live events also go to Redis Streams at once (see docs/streaming.md). */
  liveBroker?: RedisLivePublisher;
}

/**
 * The harness's in-memory caches on a worker, in entries (0 turns one off). Temporal's own workflow
 * cache (`maxCachedWorkflows`, a Worker option) is the one that holds whole conversations: each
 * cached run keeps its conversation in workflow state. docs/benchmarks.md has the measurements.
 */
export interface WorkerCacheSizes {
  /** Transcripts by head (default 64): a hit saves loading the chain from the store on the next call. */
  transcripts?: number;
  /** Exact input-token counts by request hash, for estimator 'count-tokens' (default 64). */
  tokenCounts?: number;
  /**
   * Serialised request prefixes, one per conversation (default 64): a hit serialises only the entries
   * added since the conversation's last call on this worker. Each holds the conversation's request
   * bytes (about its transcript's size).
   */
  requestPrefixes?: number;
  /** Preludes (system prompt and tool specs) by hash, verified when read (default 16): a hit saves a store read per call. */
  preludes?: number;
  /**
   * Tool results this worker stored or read, by hash (default 32; results over 64K characters are not
   * kept): the next model call sends them, and a hit saves reading back what the tool call just wrote.
   */
  toolResults?: number;
}

/**
 * The worker's activities. Model errors become ApplicationFailures whose `type` is the error code:
 * overflow and other 4xx are non-retryable; 429/529/5xx/network are retryable, with `retry-after`
 * as the next retry delay.
 */
export function createActivities(deps: ActivityDeps): FabricActivities {
  const transcripts = new Transcripts(deps.store, { cacheSize: deps.caches?.transcripts });
  const toolResults = new ToolResultStore(deps.store, deps.caches?.toolResults);
  const attachments = new AttachmentStore(deps.store);
  const memoryFiles = new MemoryFiles(deps.store);
  const replyArchive = new ReplyArchiveStore(deps.store);
  const tools = deps.tools instanceof ToolRegistry ? deps.tools : ToolRegistry.from(deps.tools);
  const sandbox = resolveToolSandbox(deps.toolSandbox);
  const localTools = createLocalTools(sandbox);
  const mcp = deps.mcp ?? new McpConnections({ sandbox });
  const models = new ModelService({ connection: deps.connection, connections: deps.connections, defaultModel: deps.defaultModel, tokenCountCacheSize: deps.caches?.tokenCounts });
  const bodies = new RequestBodies({ cacheSize: deps.caches?.requestPrefixes });
  const preludes = new PreludeCache(deps.store, deps.caches?.preludes);
  // Model calls heartbeat (a dead worker is noticed in seconds) and leave as typed ApplicationFailures.
  const reporting: AroundCall = (fn) => asFailure(() => heartbeating(fn));

  /**
   * A stored transcript and the entries added since (tool results by reference resolved). Something
   * missing from this worker's store is a TRANSCRIPT_STORE_MISS, and the workflow resends it in full.
   */
  const stored = async (
    input: { base: TranscriptRef | null; delta: Entry[] },
    missing: string | { base: string; delta: string },
  ): Promise<{ base: Entry[]; delta: Entry[] }> => {
    const said = (part: 'base' | 'delta') => (typeof missing === 'string' ? `${missing} is not in this worker's store; the workflow resends it in full` : missing[part]);
    const base = input.base ? await asFailure(() => transcripts.load(input.base!)) : [];
    if (!base) throw ApplicationFailure.create({ type: TRANSCRIPT_STORE_MISS, message: said('base'), nonRetryable: true });
    const delta = await asFailure(() => toolResults.resolve(input.delta));
    if (!delta) throw ApplicationFailure.create({ type: TRANSCRIPT_STORE_MISS, message: said('delta'), nonRetryable: true });
    return { base, delta };
  };

  return {
    async fhModel(input: ModelActivityInput): Promise<ModelActivityResult> {
      // Decided here, first, so compaction costs no round trip of its own; the result records it.
      // Under estimator 'count-tokens' the decision needs the request itself (the service loads it first).
      let loaded: { base: Entry[]; delta: Entry[] } | undefined;
      const request = async () => {
        const prelude = await asFailure(() => preludes.resolve(input.prelude));
        loaded = await stored(input, {
          base: `transcript ${input.base?.head} is not in this worker's store; the workflow resends it in full`,
          delta: "a tool result the workflow refers to is not in this worker's store; the workflow resends it in full",
        });
        const entries = loaded.base.concat(loaded.delta);
        // The attachments' bytes, read by hash just before the call (never in history; see stores/attachments).
        const files = await asFailure(() => attachments.resolve(entries));
        return { model: input.model, maxTokens: input.maxTokens, system: prelude.system, tools: prelude.tools, entries, cache: input.cache, thinking: input.thinking, contextManagement: input.contextManagement, ...(files ? { attachments: files } : {}) };
      };
      const startedAt = Date.now();
      // With a stream slot the call streams, its deltas published in the heartbeat details (not history).
      const slot = input.stream;
      // The body is serialised from this conversation's kept prefix (./request-body), then kept for its next call.
      let body: EncodedBody | undefined;
      const invoke = (msgCall: MessagesCall) => {
        const provider = models.provider(input.connection);
        // Only a provider that sends Anthropic's body as it is takes it pre-serialised.
        body = provider.serialisedBodies ? bodies.encode(msgCall, slot !== undefined, input.base ? { head: input.base.head, count: loaded!.base.length } : undefined) : undefined;
        const sent = body;
        return slot
          ? asFailure(() => streamedModelCall(provider, msgCall, slot, sent, deps.liveBroker))
          : reporting(() => provider.call(msgCall, { signal: Context.current().cancellationSignal, body: sent }));
      };
      // Typed failures too for what is refused before any call (an unknown connection, a capability it lacks).
      const { decision, call, result } = await asFailure(() => models.decideThenCall(input.decide, request, () => Context.current().cancellationSignal, reporting, invoke, input.connection));
      recordDecisionSpan(decision);
      if (!result) return { decision: decision! };
      recordModelCallSpan(call!, result, startedAt);
      const transcript = await transcripts.append(input.base, loaded!.base, [...loaded!.delta, result.entry]);
      body?.remember(transcript.head, result.entry);
      const streamed = slot ? { streamed: { attempt: Context.current().info.attempt } } : {};
      if (!decision) return { ...result, stored: transcript, ...streamed };
      return input.briefDecision && isQuiet(decision)
        ? { ...result, stored: transcript, quietDecision: true, ...streamed }
        : { ...result, stored: transcript, decision, ...streamed };
    },

    async fhSummarize(input) {
      return asFailure(() => models.text(input.model, input, Context.current().cancellationSignal, reporting, input.connection));
    },

    async fhTool(input) {
      // Reads this worker's store (where every tool activity stored its full output): not sandbox code.
      // read_tool_result is its 0.3.0 name: running workflows and recorded histories still call it.
      if (isReadArtifact(input.name)) return asFailure(() => readArtifact(toolResults, input.input));
      const ctx = Context.current();
      // Heartbeat while the tool runs, so a dead worker is noticed within the heartbeat timeout
      // (not the much longer start-to-close timeout) even for tools that never heartbeat themselves.
      // With a stream slot its output lines go out in the heartbeat details (which the tool then leaves alone).
      const lines = input.stream ? new ToolOutputLines(new LivePublisher({ slot: input.stream, attempt: ctx.info.attempt, prior: ctx.info.heartbeatDetails, heartbeat: (d) => ctx.heartbeat(d), kind: 'tool', ...mirrorOf(deps.liveBroker, ctx) })) : undefined;
      const beat = setInterval(() => (lines ? lines.publisher.flush() : ctx.heartbeat()), HEARTBEAT_MS);
      try {
        const context = lines
          ? { cwd: input.cwd, signal: ctx.cancellationSignal, heartbeat: () => lines.publisher.flush(), output: (stream: 'stdout' | 'stderr', text: string) => lines.add(stream, text) }
          : { cwd: input.cwd, signal: ctx.cancellationSignal, heartbeat: (details?: unknown) => ctx.heartbeat(details) };
        // An MCP server's tool: on this run's connection (its workflow id), so a stateful server keeps its state.
        const served = input.mcp;
        const result = await toolCallSpan({ name: input.name, callId: input.callId, mcp: served !== undefined }, () =>
          served
            ? asFailure(async () =>
                offloadToolResult(
                  toolResults,
                  await mcp.call(served.server, runScope(ctx), input.cwd, served.tool, input.input, { signal: ctx.cancellationSignal, timeoutMs: input.timeoutMs }),
                  { tool: input.name, input: input.input },
                  input.offloadBytes,
                ),
              )
            : runToolWithOffload(toolResults, tools.get(input.name), input, context, { local: localTools, timeoutMs: input.timeoutMs }, asFailure),
        );
        // Stored here, so the next model call can refer to it instead of carrying it through history again.
        const contentRef = await toolResults.save(result.content);
        return contentRef ? { ...result, contentRef } : result;
      } finally {
        clearInterval(beat);
        lines?.close();
      }
    },

    async fhResolveModel(input) {
      return asFailure(() => models.resolveModel(input, reporting));
    },

    async fhDecideCompaction(facts) {
      return decideFromFacts(facts);
    },

    async fhCheckSummaryGate(input) {
      return checkSummary(input);
    },

    // The store calls a workflow makes with a heartbeat timeout heartbeat while they run (see heartbeating).
    fhStoreTranscript: (input) =>
      heartbeating(async () => {
        const { base, delta } = await stored(input, 'part of the transcript');
        return transcripts.append(input.base, base, delta);
      }),

    async fhFlushMemory(input) {
      const { base, delta } = await stored(input, 'part of the dropped history');
      const usage = { inputTokens: 0, outputTokens: 0 };
      const call = async (req: TextCall) => {
        const result = await models.text(input.model, req, Context.current().cancellationSignal, heartbeating, input.connection);
        usage.inputTokens += result.usage.inputTokens;
        usage.outputTokens += result.usage.outputTokens;
        return { text: result.text };
      };
      return asFailure(async () => {
        const existing = await memoryFiles.load(input.key);
        const dropped = base.concat(delta).slice(0, input.dropped);
        const update = await updateMemory(call, { existing: existing?.text, dropped, maxTokens: input.maxTokens });
        const file = await memoryFiles.save(input.key, update.text);
        return { ...file, compacted: update.compacted, usage };
      });
    },

    async fhLoadMemory(input) {
      return (await asFailure(() => heartbeating(() => memoryFiles.load(input.key)))) ?? null;
    },

    async fhStorePrelude(value) {
      await asFailure(() => heartbeating(() => saveJson(deps.store, preludeKey(hashString(canonicalJson(value))), value)));
    },

    async fhArchiveReplies(chunk) {
      return asFailure(() => heartbeating(() => replyArchive.append(chunk)));
    },

    async fhFindReply(input) {
      return asFailure(() => heartbeating(() => replyArchive.find(input.head, input.messageId)));
    },

    async fhMcpPin(input) {
      const ctx = Context.current();
      let stateful = true;
      try {
        stateful = mcp.resolve(input.server).stateful !== false;
      } catch {
        // An unknown registered server: pinned like any other; its list fails with MCP_SERVER_UNKNOWN there.
      }
      const taskQueue = stateful ? await asFailure(async () => (await deps.mcpPinQueue?.(ctx.info.taskQueue)) ?? null) : null;
      return { taskQueue, stateful };
    },

    async fhMcpList(input) {
      const ctx = Context.current();
      return asFailure(() => heartbeating(() => mcp.list(input.server, runScope(ctx), input.cwd, ctx.cancellationSignal)));
    },

    fhEnhancePrompt: (input) =>
      asFailure(() => enhancePrompt(input.draft, { cwd: input.cwd, apiKey: deps.connection.apiKey, baseURL: deps.connection.baseURL, ...(input.model ? { model: input.model } : {}), signal: Context.current().cancellationSignal })),

    fhWorktreeCreate: (input) => asFailure(() => heartbeating(() => createWorktree(input.cwd, input.name, activityOwner(Context.current().info)))),
    fhWorktreeFinish: (input) => asFailure(() => heartbeating(() => finishWorktree(input))),

    async fhLoadTranscript(ref) {
      const entries = await asFailure(() => heartbeating(() => transcripts.load(ref)));
      if (!entries) throw encodeFailure(new StoreBlobMissingError(`transcript ${ref.head}`, deps.store.location ?? "(store)", "a continued or forked session's conversation"));
      return entries;
    },
  };
}

/** Preludes by hash, each verified against its hash once, when it is read or sent; most recently used kept. */
class PreludeCache {
  private readonly kept: Lru<string, Prelude>;

  constructor(
    private readonly store: TranscriptStore,
    size = 16,
  ) {
    this.kept = new Lru(size, 'preludes cache size');
  }

  async resolve(prelude: ModelActivityInput['prelude']): Promise<Prelude> {
    const value = (prelude.value ? undefined : this.kept.get(prelude.hash)) ?? (await resolvePrelude(this.store, prelude));
    this.kept.set(prelude.hash, value);
    return value;
  }
}

type Prelude = { system?: string; tools: ToolSpec[] };

/** Whose MCP connection an activity uses: its workflow's (a session keeps it across continue-as-new). */
function runScope(ctx: Context): string {
  return ctx.info.workflowExecution?.workflowId ?? ctx.info.activityId;
}

async function resolvePrelude(
  store: TranscriptStore,
  prelude: ModelActivityInput['prelude'],
): Promise<{ system?: string; tools: ToolSpec[] }> {
  const key = preludeKey(prelude.hash);
  if (prelude.value) {
    // Stored under its hash: a value that does not hash to it would poison every later call by hash.
    const actual = hashString(canonicalJson(prelude.value));
    if (actual !== prelude.hash) throw new StoreIntegrityError(key, `the prelude sent hashes to ${actual}`);
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
  // The workflow hashes the prelude as canonical JSON; a stored one that differs was altered.
  const actual = hashString(canonicalJson(stored));
  if (actual !== prelude.hash) throw new StoreIntegrityError(key, `its canonical JSON hashes to ${actual}`);
  return stored;
}

export function preludeKey(hash: string): string {
  return `preludes/${hash}.json`;
}

/** The broker mirror of an activity's live events, under its workflow's stream (none without a broker). */
function mirrorOf(broker: RedisLivePublisher | undefined, ctx: Context): { mirror?: (entry: LiveBrokerEntry) => void } {
  const workflowId = ctx.info.workflowExecution?.workflowId;
  return broker && workflowId ? { mirror: (entry) => broker.add(workflowId, entry) } : {};
}

/** Runs `fn`, turning our typed errors into ApplicationFailures (the one codec: wire/failures). */
async function asFailure<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw encodeFailure(err);
  }
}

/**
 * A model call with streaming on: its deltas go out in the heartbeat details as they arrive (the
 * periodic heartbeat resends the same details, so it never blanks them).
 */
async function streamedModelCall(provider: ModelProvider, call: MessagesCall, slot: StreamSlot, body: SerialisedBody | undefined, broker: RedisLivePublisher | undefined): Promise<ModelCallResult> {
  const ctx = Context.current();
  const publisher = new LivePublisher({
    slot,
    attempt: ctx.info.attempt,
    prior: ctx.info.heartbeatDetails,
    heartbeat: (details) => ctx.heartbeat(details),
    kind: 'model',
    model: call.model,
    ...mirrorOf(broker, ctx),
  });
  const beat = setInterval(() => publisher.flush(), HEARTBEAT_MS);
  try {
    return await provider.call(call, { signal: ctx.cancellationSignal, onEvent: (ev) => publisher.pushRaw(ev), body });
  } finally {
    clearInterval(beat);
    publisher.close();
  }
}
