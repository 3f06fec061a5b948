/**
 * The activity contract between workflow code and the worker: names and payload shapes. Workflow code
 * imports only types from here (erased at build), so nothing Node-only reaches the workflow bundle.
 */
import type { Entry, Usage, AssistantEntry } from '../core/entries';
import type { CompactionDecision, DecisionFacts } from '../core/compaction/decide';
import type { ToolSpec } from '../core/tools-spec';

export interface TranscriptRefPayload {
  head: string;
  count: number;
}

export interface ModelActivityInput {
  model: string;
  maxTokens: number;
  /** System prompt and tool specs, by content hash; `value` only when the store may not have them. */
  prelude: { hash: string; value?: { system?: string; tools: ToolSpec[] } };
  /**
   * The transcript stored so far (null: none), and the entries added since. In the delta, a tool result
   * the tool activity already stored may come as `{ content: '', contentRef }`: it is in history once.
   */
  base: TranscriptRefPayload | null;
  delta: Entry[];
  /**
   * Decide about compaction first, from these facts: the decision is recorded in this activity's
   * result, and the model is called only when it is not to compact (one round trip for both).
   */
  decide?: DecisionFacts;
  /** Prompt caching breakpoints (absent: none). */
  cache?: { ttl: '5m' | '1h' };
  /** Extended thinking (absent: off; absent in inputs recorded before thinking existed, so they replay). */
  thinking?: { budgetTokens: number };
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
  stored: TranscriptRefPayload;
  /** The compaction decision, when the input asked for one (it did not ask to rewrite history first). */
  decision?: CompactionDecision;
}

/** The decision rewrites history first (compact, mask): no model call was made; the workflow does it and calls again. */
export interface ModelActivityCompactFirst {
  decision: CompactionDecision;
  entry?: undefined;
}

export type ModelActivityResult = ModelActivityReply | ModelActivityCompactFirst;

export interface SummarizeActivityInput {
  model: string;
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
}

export interface ToolActivityResult {
  content: string;
  isError: boolean;
  /** The content's key in the transcript store (set for results worth referring to). */
  contentRef?: string;
  /** The output was offloaded (`content` is its reference): its ref in the store and its UTF-8 size. */
  artifact?: { ref: string; bytes: number };
}

export interface ResolveModelResult {
  model: string;
  contextWindowTokens?: number;
}

export interface FabricActivities {
  fhModel(input: ModelActivityInput): Promise<ModelActivityResult>;
  fhSummarize(input: SummarizeActivityInput): Promise<{ text: string; usage: Usage }>;
  fhTool(input: ToolActivityInput): Promise<ToolActivityResult>;
  /** With `contextWindowTokens` (the window the agent set) it only resolves the model name. */
  fhResolveModel(input: { model?: string; contextWindowTokens?: number; verify?: boolean }): Promise<ResolveModelResult>;
  fhDecideCompaction(facts: DecisionFacts): Promise<CompactionDecision>;
  /** Stores a conversation's entries not stored yet (before a session continues as new). */
  fhStoreTranscript(input: { base: TranscriptRefPayload | null; delta: Entry[] }): Promise<TranscriptRefPayload>;
  /** A stored conversation's entries (a continued or forked session restores from it). */
  fhLoadTranscript(ref: TranscriptRefPayload): Promise<Entry[]>;
}

/** ApplicationFailure types the workflow reacts to. */
export const TRANSCRIPT_STORE_MISS = 'TRANSCRIPT_STORE_MISS';
