/** The shapes of an audit: one record per thing the run did or was sent, the run's summary, the transcript. */
import type { CompactionDecision } from '../core/context/compaction/decide';
import type { GateResult } from '../core/context/compaction/gate';
import type { AttachmentRef } from '../core/attachments';
import type { Fact } from '../core/entries';
import type { Usage } from '../core/entries';
import type { AppliedContextEdit } from '../core/context/strategy';
import type { CacheAccount } from './cache';
import type { AgentEvent } from '../core/events';

/** A payload that lives in external storage and was not (or could not be) fetched. */
export interface OffloadedValue {
  $offloaded: { driver: string; key?: string; sizeBytes: number; error?: string };
}

export type ActivityStatus = 'completed' | 'failed' | 'timed_out' | 'canceled' | 'pending';

export interface RecordBase {
  /** Position in the transcript, from 1. */
  n: number;
  /** The event that records it (the scheduled event for activities). */
  eventId: number;
  /** ISO time of that event. */
  at?: string;
}

export interface InputRecord extends RecordBase {
  type: 'input';
  /** The workflow input: what the user asked the agent to do. */
  input: unknown;
  identity?: string;
}

export interface PromptRecord extends RecordBase {
  type: 'prompt';
  /** A user message the session sent to the model (a prompt of the run). */
  text: string;
  /** Files sent with it, by reference (history holds no bytes). */
  attachments?: AttachmentRef[];
}

export interface ModelResolvedRecord extends RecordBase {
  type: 'model_resolved';
  /** The model connection it was looked up on ('anthropic' when the input named none, as before connections). */
  connection: string;
  requested?: string;
  model?: string;
  /** The window the run used: the one the agent set, else the Models API's. */
  contextWindowTokens?: number;
  /** 'agent': set with contextWindowTokens (nothing looked up); 'models_api': looked up; 'unknown': neither said one. */
  contextWindowSource?: 'agent' | 'models_api' | 'unknown';
  /** The compaction strategy the activity decided from the model's capabilities (recorded), and why. */
  strategy?: { strategy: 'client' | 'server'; why: string };
  status: ActivityStatus;
}

export interface ModelCallRecord extends RecordBase {
  type: 'model_call';
  /** The model connection that answered ('anthropic' when the input named none, as before connections). */
  connection: string;
  model: string;
  maxTokens: number;
  /** Transcript length sent: entries already in the store plus entries added since the last call. */
  context: { storedEntries: number; newEntries: number; summaries: number };
  /** System prompt and tool names, on the calls that carried them (the first, and after a store miss). */
  system?: string;
  tools?: string[];
  status: ActivityStatus;
  attempts?: number;
  completedAt?: string;
  completedEventId?: number;
  stopReason?: string | null;
  usage?: Usage;
  /** What the call cost at the built-in table's list prices (USD; null: the table has no price for its model). */
  costUsd?: number | null;
  /** Prompt-cache read / write / uncached input tokens of this call, and its hit rate. */
  cache?: CacheAccount;
  /** The server-side context edits the call sent (types), and what the server applied. */
  contextManagement?: { edits: string[]; applied: AppliedContextEdit[] };
  /** What the model answered: its text and the tools it asked for. */
  response?: { text: string; toolCalls: Array<{ id: string; name: string; input: unknown }> };
  error?: string;
}

export interface ToolCallRecord extends RecordBase {
  type: 'tool_call';
  name: string;
  callId: string;
  arguments: unknown;
  cwd?: string;
  status: ActivityStatus;
  attempts?: number;
  completedAt?: string;
  completedEventId?: number;
  isError?: boolean;
  /** The full result text (the Markdown shows `resultPreview`). */
  result?: string | OffloadedValue;
  resultPreview?: string;
  truncated?: boolean;
  error?: string;
}

export interface CompactionDecisionRecord extends RecordBase, Partial<CompactionDecision> {
  type: 'compaction_decision';
  /** Whether the decision could be read (the marker's result payload); false for a failed decision. */
  recorded: boolean;
  error?: string;
}

/** The compaction gate's recorded check of a summary (local activity fhCheckSummaryGate). */
export interface CompactionGateRecord extends RecordBase, Partial<GateResult> {
  type: 'compaction_gate';
  /** Whether the check could be read; false for a failed one. */
  recorded: boolean;
  /** The facts the summary missed: restated verbatim (or, first check of mode 'reask', named in the re-ask). */
  missing?: Fact[];
  error?: string;
}

/** What a call of the summarisation activity records, whatever it was for (a summary, a session title). */
export interface SummarizeCallRecord extends RecordBase {
  /** The model connection the request went to ('anthropic' when the input named none). */
  connection?: string;
  model?: string;
  status: ActivityStatus;
  completedAt?: string;
  usage?: Usage;
  text?: string | OffloadedValue;
  error?: string;
}

export interface SummaryRecord extends SummarizeCallRecord {
  type: 'summary';
  /** What caused the compaction this summary belongs to; `reset`: the transfer summary of a session reset. */
  trigger: 'threshold' | 'overflow' | 'manual' | 'reset' | 'unknown';
  /** The slice of conversation the summariser was given (full text in the JSON). */
  request?: string | OffloadedValue;
}

/**
 * A session's title request: the same summarisation activity as a compaction summary (told apart by the
 * title prompt), so it is neither a summary nor a compaction.
 */
export interface TitleRecord extends SummarizeCallRecord {
  type: 'title';
  /** The title model's reply (model output: quoted, never rendered); the session sanitises it into its title. */
  text?: string | OffloadedValue;
}

export interface UpdateRecord extends RecordBase {
  type: 'update';
  name: string;
  updateId?: string;
  identity?: string;
  args: unknown[];
  /** A manual compaction requested through `fh.compact`. */
  manualCompaction: boolean;
  /** The prompt text of an `fh.prompt` update (a user talking to the running agent). */
  prompt?: string;
  status: 'accepted' | 'completed' | 'failed';
  completedAt?: string;
  result?: unknown;
  error?: string;
}

export interface SignalRecord extends RecordBase {
  type: 'signal';
  name: string;
  args: unknown[];
  identity?: string;
}

export interface CancelRequestRecord extends RecordBase {
  type: 'cancel_requested';
  identity?: string;
  cause?: string;
}

/**
 * The run is a reset of another (`fh replay --reset`, `temporal workflow reset`): it keeps that run's
 * history up to here, and from here on runs anew; the signals and updates the other run got later follow.
 */
export interface RunResetRecord extends RecordBase {
  type: 'run_reset';
  /** The reason given to the reset. */
  reason?: string;
  /** The run reset (whose history up to here this one keeps). */
  baseRunId?: string;
  identity?: string;
}

export interface ActivityRecord extends RecordBase {
  type: 'activity';
  name: string;
  input: unknown[];
  status: ActivityStatus;
  result?: unknown;
  error?: string;
}

/** A sub-agent run as a child workflow (agentAsTool), with the events it returned to its parent. */
export interface SubAgentRecord extends RecordBase {
  type: 'sub_agent';
  childId: string;
  agent: string;
  input: unknown;
  depth?: number;
  status: ActivityStatus;
  result?: unknown;
  error?: string;
  /** The child's own events (its last ones), nested here. */
  events: AgentEvent[];
}

export interface EndRecord extends RecordBase {
  type: 'end';
  status: RunStatus;
  result?: unknown;
  failure?: string;
  reason?: string;
  identity?: string;
}

export type AuditRecord =
  | RunResetRecord
  | InputRecord
  | PromptRecord
  | ModelResolvedRecord
  | ModelCallRecord
  | ToolCallRecord
  | CompactionDecisionRecord
  | TitleRecord
  | CompactionGateRecord
  | SummaryRecord
  | UpdateRecord
  | SignalRecord
  | CancelRequestRecord
  | ActivityRecord
  | SubAgentRecord
  | EndRecord;

export type RunStatus = 'running' | 'completed' | 'failed' | 'terminated' | 'canceled' | 'timed_out' | 'continued_as_new';

export interface AuditRun {
  workflowId?: string;
  runId?: string;
  /** The agent (memo `fh.agent`, else the workflow type). */
  agent?: string;
  workflowType?: string;
  taskQueue?: string;
  status: RunStatus;
  startedAt?: string;
  closedAt?: string;
  events: number;
  totals: {
    modelCalls: number;
    inputTokens: number;
    outputTokens: number;
    toolCalls: number;
    toolErrors: number;
    compactionDecisions: number;
    compactions: number;
    summaries: number;
    /** Compaction summary requests that came back, and their tokens (not in inputTokens/outputTokens above). */
    summarizer: { inputTokens: number; outputTokens: number; calls: number };
    /** Session title requests that came back, and their tokens (apart from the summariser's and the model calls'). */
    titles: { inputTokens: number; outputTokens: number; calls: number };
    userActions: number;
    /** Prompt-cache totals over the run's model calls, with the run's hit rate. */
    cache: CacheAccount;
    /** What Claude's server-side context management cleared over the run (strategy 'server'). */
    serverContext: { edits: number; clearedToolUses: number; clearedInputTokens: number; compactions: number };
    /** The model calls' cost at the built-in table's list prices, and the calls whose model it has no price for. */
    cost: { pricedUsd: number; unpricedCalls: number; unpricedModels: string[] };
  };
}

export interface AuditTranscript {
  json: { run: AuditRun; records: AuditRecord[] };
  markdown: string;
}
