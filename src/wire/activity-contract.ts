/**
 * The activity contract between workflow code and the worker: names and payload shapes. Workflow code
 * imports only types from here (erased at build), so nothing Node-only reaches the workflow bundle.
 */
import type { Entry, Usage, AssistantEntry } from '../core/entries';
import type { CompactionDecision, DecisionFacts } from '../core/context/compaction/decide';
import type { GateCheck, GateCheckInput } from '../core/context/compaction/gate';
import type { ToolSpec } from '../core/tools-spec';
import type { ReplyArchiveChunk, StoredReply } from '../core/sessions/reply-archive';
import type { StreamSlot } from './stream';
import type { McpServerRef, McpToolInfo } from '../core/mcp';
import type { McpPinInput, McpPinResult } from './mcp-pin';
import type { EnhanceResult } from '../core/enhance/types';
import type { AppliedContextEdit, CompactionStrategySetting, ContextManagementParams, StrategyDecision } from '../core/context/strategy';

/** A stored transcript: the hash of its last segment and how many entries it holds. */
export interface TranscriptRef {
  head: string;
  count: number;
}
/** @deprecated since 0.5.0: TranscriptRef (the same shape). */
export type TranscriptRefPayload = TranscriptRef;

export interface ModelActivityInput {
  model: string;
  maxTokens: number;
  /** System prompt and tool specs, by content hash; `value` only when the store may not have them. */
  prelude: { hash: string; value?: { system?: string; tools: ToolSpec[] } };
  /**
   * The transcript stored so far (null: none), and the entries added since. In the delta, a tool result
   * the tool activity already stored may come as `{ content: '', contentRef }`: it is in history once.
   */
  base: TranscriptRef | null;
  delta: Entry[];
  /**
   * Decide about compaction first, from these facts: the decision is recorded in this activity's
   * result, and the model is called only when it is not to compact (one round trip for both).
   */
  decide?: DecisionFacts;
  /**
   * With `decide`: a quiet decision (see isQuiet in core/context/compaction/decide) may be recorded as
   * `quietDecision: true` instead of in full (absent in inputs from releases that expect it in full).
   */
  briefDecision?: true;
  /** Prompt caching breakpoints (absent: none). */
  cache?: { ttl: '5m' | '1h' };
  /** Extended thinking (absent: off; absent in inputs recorded before thinking existed, so they replay). */
  thinking?: { budgetTokens: number };
  /** Server-side context management (absent: none; absent in inputs recorded before strategies). */
  contextManagement?: ContextManagementParams;
  /** Stream the reply (messages.stream) and publish its deltas at these offsets (absent: no streaming). */
  stream?: StreamSlot;
  /**
   * The model connection the call goes to, by name (absent: 'anthropic', and absent in every input
   * recorded before connections existed, so they replay). Only the input changes: no patch.
   */
  connection?: string;
}

/** A prelude to store: kept under the hash of its canonical JSON, which the workflow computes too. */
export interface StorePreludeInput {
  system?: string;
  tools: ToolSpec[];
}

/** A tool result in a model call's delta, by reference to what the tool activity stored. */
export interface ToolResultRef {
  contentRef: string;
}

export interface ModelActivityReply {
  entry: AssistantEntry;
  usage: Usage;
  stopReason: string | null;
  model: string;
  /** The stored transcript now ending with `entry`: the next call's base. */
  stored: TranscriptRef;
  /** The compaction decision, when the input asked for one (it did not ask to rewrite history first). */
  decision?: CompactionDecision;
  /** The decision was quiet (asked with `briefDecision`): the workflow rebuilds it from the facts it sent. */
  quietDecision?: true;
  /** What the server cleared or compacted (only when the input sent context management). */
  contextManagement?: { applied: AppliedContextEdit[] };
  /** The attempt whose streamed deltas are the reply (only when the input asked to stream). */
  streamed?: { attempt: number };
}

/** The decision rewrites history first (compact, mask): no model call was made; the workflow does it and calls again. */
export interface ModelActivityCompactFirst {
  decision: CompactionDecision;
  entry?: undefined;
}

export type ModelActivityResult = ModelActivityReply | ModelActivityCompactFirst;

export interface SummarizeActivityInput {
  model: string;
  /** The model connection (absent: 'anthropic'). */
  connection?: string;
  system: string;
  userText: string;
  maxTokens: number;
}

export interface ToolActivityInput {
  name: string;
  callId: string;
  input: unknown;
  cwd: string;
  /** The tool's timeoutMs: the runner aborts the call and answers an error result past it. */
  timeoutMs?: number;
  /**
   * Offload an output over this many UTF-8 bytes as an artifact (absent: never; absent in inputs
   * recorded before artifacts existed). Only the input changes, not which commands run: no patch.
   */
  offloadBytes?: number;
  /** Publish the tool's output lines at these offsets as it runs (absent: no streaming). */
  stream?: StreamSlot;
  /** A tool an MCP server serves: call `tool` on `server` (absent for every other tool). */
  mcp?: { server: McpServerRef; tool: string };
}

export interface ToolActivityResult {
  content: string;
  isError: boolean;
  /** The content's key in the transcript store (set for results worth referring to). */
  contentRef?: string;
  /** The output was offloaded (`content` is its reference): its ref in the store and its UTF-8 size. */
  artifact?: { ref: string; bytes: number };
}

/** A model lookup: the model (absent: the worker's default) on `connection` (absent: 'anthropic'). */
export interface ResolveModelActivityInput {
  model?: string;
  contextWindowTokens?: number;
  verify?: boolean;
  strategy?: CompactionStrategySetting;
  /** An unknown one is refused here (UNKNOWN_CONNECTION naming the worker's), before any model call. */
  connection?: string;
}

export interface ResolveModelResult {
  model: string;
  contextWindowTokens?: number;
  /** The strategy decided from the model's capabilities (only when the input gave a strategy setting). */
  strategy?: StrategyDecision;
}

/** A memory flush: the dropped slice by reference (the stored transcript and what is not stored yet). */
export interface FlushMemoryActivityInput {
  key: string;
  maxTokens: number;
  model: string;
  /** The model connection (absent: 'anthropic'). */
  connection?: string;
  base: TranscriptRef | null;
  /** Entries after `base`, tool results by reference where stored (as in a model call's delta). */
  delta: Entry[];
  /** How many entries of base + delta, from the start, the compaction drops. */
  dropped: number;
}

export interface MemoryFilePayload {
  text: string;
  hash: string;
  tokens: number;
}

export interface FlushMemoryActivityResult extends MemoryFilePayload {
  /** How the file was kept in budget: 'no' (it fit), 'model' (a second call), 'trimmed' (oldest bullets dropped). */
  compacted: 'no' | 'model' | 'trimmed';
  usage: Usage;
}

export interface FabricActivities {
  fhModel(input: ModelActivityInput): Promise<ModelActivityResult>;
  fhSummarize(input: SummarizeActivityInput): Promise<{ text: string; usage: Usage }>;
  fhTool(input: ToolActivityInput): Promise<ToolActivityResult>;
  /** With `contextWindowTokens` (the window the agent set) it only resolves the model name. */
  fhResolveModel(input: ResolveModelActivityInput): Promise<ResolveModelResult>;
  fhDecideCompaction(facts: DecisionFacts): Promise<CompactionDecision>;
  /** The compaction gate's check of a summary (a local activity, so its answer is in history: patch fh-compaction-gate). */
  fhCheckSummaryGate(input: GateCheckInput): Promise<GateCheck>;
  /**
   * Stores a prelude (system prompt and tool specs) by its hash before the first model call that uses
   * it, so no model call's input carries it (since the 'fh-prelude-first' patch).
   */
  fhStorePrelude(input: StorePreludeInput): Promise<void>;
  /** Stores a conversation's entries not stored yet (before a session continues as new). */
  fhStoreTranscript(input: { base: TranscriptRef | null; delta: Entry[] }): Promise<TranscriptRef>;
  /** A stored conversation's entries (a continued or forked session restores from it). */
  fhLoadTranscript(ref: TranscriptRef): Promise<Entry[]>;
  /** Merges what is worth remembering of a compaction's dropped slice into the memory file `key`. */
  fhFlushMemory(input: FlushMemoryActivityInput): Promise<FlushMemoryActivityResult>;
  /** Stores a chunk of a session's older replies (chained to `prev`); returns its key's hash. */
  fhArchiveReplies(input: ReplyArchiveChunk): Promise<string>;
  /** The archived reply to `messageId` in the chain ending at `head` (null: none). */
  fhFindReply(input: { head: string; messageId: string }): Promise<StoredReply | null>;
  /** The memory file `key` (null: none yet), for a new session's system prompt. */
  fhLoadMemory(input: { key: string }): Promise<MemoryFilePayload | null>;
  /** An MCP server's tool list: recorded here, so a replay never asks the server again. */
  fhMcpList(input: { server: McpServerRef; cwd: string }): Promise<McpToolInfo[]>;
  /** The worker that will own this run's connection to a stateful MCP server: its own task queue (wire/mcp-pin.ts). */
  fhMcpPin(input: McpPinInput): Promise<McpPinResult>;
  /** A git worktree for a sub-agent or a child session, on a branch of its own (idempotent). */
  fhWorktreeCreate(input: { cwd: string; name: string }): Promise<WorktreePayload>;
  /** Commits the changes made there on its branch and removes the worktree; `deleteBranch`: the branch too (idempotent). */
  fhWorktreeFinish(input: WorktreePayload & { cwd: string; deleteBranch?: boolean }): Promise<{ branch: string; commit?: string; branchDeleted?: boolean }>;
  /** The prompt enhancer on the worker (its API key, its copy of the working directory), with a small model. */
  fhEnhancePrompt(input: { draft: string; cwd: string; model?: string }): Promise<EnhanceResult>;
}

export interface WorktreePayload {
  path: string;
  root: string;
  branch: string;
  base: string;
}

/** ApplicationFailure types the workflow reacts to. */
export const TRANSCRIPT_STORE_MISS = 'TRANSCRIPT_STORE_MISS';
