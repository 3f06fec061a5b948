/**
 * Typed agent events. Inline, they go straight to `init({ onEvent })`; on Temporal they are produced in
 * workflow code, kept in workflow state for queries, and forwarded to the worker process's `onEvent`
 * by a sink that does not fire on replay.
 */

import type { GateResult } from './context/compaction/gate';

export type CompactionReason = 'threshold' | 'overflow' | 'manual';

export interface EventPayloads {
  /** A compaction replaced older entries with a summary. */
  compaction: {
    reason: CompactionReason;
    messagesBefore: number;
    messagesAfter: number;
    tokensBefore: number;
    tokensAfter: number;
    /** The compaction gate's result (absent: the gate was off, or the run was recorded before it). */
    gate?: GateResult;
  };
  /** Stale tool results (in entries before `before`) were replaced by one-line placeholders. */
  masking: {
    before: number;
    masked: number;
    savedTokens: number;
    tokensBefore: number;
    tokensAfter: number;
  };
  /** Claude's server-side context management changed what a model call read (strategy 'server'). */
  context_edited: {
    edits: Array<{ type: string; clearedInputTokens: number; clearedToolUses?: number; clearedThinkingTurns?: number }>;
    clearedToolUses: number;
    clearedInputTokens: number;
    compacted: boolean;
  };
  /** An overflow-ladder step was decided: carried out (`applied`), or skipped and why. */
  overflow_step: {
    step: 'emergency-compaction' | 'purge-tool-results' | 'drop-injected' | 'session-reset';
    applied: boolean;
    why: string;
    tokensBefore: number;
    tokensAfter: number;
  };
  /** The estimate passed 80% of the context window. */
  context_window_warning: {
    estimatedTokens: number;
    contextWindowSize: number;
    usagePercent: number;
  };
  compaction_started: {
    reason: CompactionReason;
    estimatedTokens: number;
    contextWindowSize: number;
  };
  compaction_completed: {
    originalTurnCount: number;
    preservedTurnCount: number;
    summaryTokenEstimate: number;
    trackedFileCount: number;
  };
  /** Something worth knowing that is not an error (e.g. a compaction that freed too little). */
  warning: { code: string; message: string };
  /** A failure; `recoverable` when the run goes on (e.g. a failed summarisation). */
  error: { code: string; message: string; recoverable: boolean };
  /** The model produced text. */
  text: { text: string };
  /** A model call finished. */
  model_call: {
    model: string;
    stopReason: string | null;
    inputTokens: number;
    outputTokens: number;
    /** The call's cost in USD from the model table (null: the model has no price; absent before 0.7). */
    costUsd?: number | null;
  };
  /** The model asked for a tool. */
  tool_call: { id: string; name: string; input: unknown };
  /** A tool answered (content truncated to 2,000 characters for the event). */
  tool_result: { id: string; name: string; isError: boolean; content: string };
  /** A tool call waits for a person's approval (permission mode `ask`). */
  approval_requested: { id: string; name: string; input: unknown };
  /** Someone approved or denied a waiting tool call. */
  approval_decided: { id: string; name: string; approved: boolean; note?: string };
  /** A sub-agent (agentAsTool) started: on Temporal `childId` is its child workflow's id. */
  subagent_started: { childId: string; agent: string; callId: string; depth: number; branch?: string };
  /** One of a sub-agent's own events, nested under its id. */
  subagent_event: { childId: string; agent: string; event: AgentEvent };
  /** A sub-agent ended: its result went back to the model (`ok` false: as an error result). */
  subagent_finished: { childId: string; agent: string; callId: string; ok: boolean; branch?: string; commit?: string };
  /** The running turn was interrupted; the conversation keeps what happened up to there. */
  interrupted: { during: 'model' | 'tool' | 'approval' };
  /**
   * Inline runs: a model call's live stream event (attempt_started, block_started, text_delta,
   * thinking_delta, tool_input_delta, block_stopped, message_end), as a Temporal client reads it
   * (`StreamEvent` of `@fabric-harness/sdk/client`); offsets count this run's stream events.
   */
  stream: { offset: number; event: { type: string; callId?: string; attempt?: number; [key: string]: unknown } };
}

export type AgentEventType = keyof EventPayloads;

export type AgentEvent = {
  [K in AgentEventType]: {
    type: K;
    data: EventPayloads[K];
    /** Epoch milliseconds (workflow time on Temporal, so it replays identically). */
    at: number;
  };
}[AgentEventType];

export type EventOf<K extends AgentEventType> = Extract<AgentEvent, { type: K }>;

export function isEvent<K extends AgentEventType>(event: AgentEvent, type: K): event is EventOf<K> {
  return event.type === type;
}

export function makeEvent<K extends AgentEventType>(type: K, data: EventPayloads[K], at: number): EventOf<K> {
  return { type, data, at } as EventOf<K>;
}

export type EventListener = (event: AgentEvent) => void;
