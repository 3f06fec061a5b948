/**
 * The stream contract: what a client sees of a session (or a served agent run) while it works. One
 * ordered stream of typed events per run chain, each at an offset that only grows (across
 * continue-as-new too), so a client that reconnects asks for `from: lastOffset + 1` and continues.
 *
 * Two kinds of events share the offsets:
 * - durable ones (turn, tool, approval, decision, status, title, message_end, error) are kept in the
 *   workflow's state and read with the stream query: they cost no history;
 * - live ones (text, thinking and tool-input deltas, tool output lines) are published by the activity
 *   that produces them, in its heartbeat details (never in history), at offsets inside a block the
 *   workflow reserved for that model or tool call (see docs/streaming.md).
 *
 * Every event says which message (user prompt) it answers, which model or tool call it belongs to
 * (`callId`), and which activity attempt produced it. An `attempt_started` for a call with a higher
 * attempt means the earlier attempt failed: a client drops what that attempt streamed.
 * `message_end` carries the reply as history holds it: the source of truth.
 */
import { defineQuery } from '@temporalio/workflow';
import { z } from 'zod';
import { lazySchema } from '../core/lazy-schema';

/** Fields every event carries (absent where they do not apply: a title change belongs to no call). */
const common = lazySchema(() => ({
  /** The user message (prompt) being answered. */
  messageId: z.string().optional(),
  /** The model call or tool call (tool_use id) this event belongs to. */
  callId: z.string().optional(),
  /** The activity attempt that produced it (1 on the first try). */
  attempt: z.number().int().min(1).optional(),
  /** Epoch ms when it was produced (workflow time for durable events, worker time for live ones). */
  at: z.number().optional(),
}));

const usageSchema = lazySchema(() => z.object({
  inputTokens: z.number(),
  outputTokens: z.number(),
  cacheReadInputTokens: z.number().optional(),
  cacheCreationInputTokens: z.number().optional(),
}));

/** A content block of a reply, as message_end reports it. */
const replyBlockSchema = lazySchema(() => z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({ type: z.literal('thinking'), thinking: z.string() }),
  z.object({ type: z.literal('redacted_thinking') }),
  z.object({ type: z.literal('tool_use'), id: z.string(), name: z.string(), input: z.unknown() }),
  z.object({ type: z.literal('compaction') }),
]));

const blockStartSchema = lazySchema(() => z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }),
  z.object({ type: z.literal('thinking') }),
  z.object({ type: z.literal('redacted_thinking') }),
  z.object({ type: z.literal('tool_use'), id: z.string(), name: z.string() }),
  z.object({ type: z.literal('other'), blockType: z.string() }),
]));

const decisionKinds = [
  'compaction',
  'compaction_started',
  'compaction_completed',
  'masking',
  'context_edited',
  'overflow_step',
  'context_window_warning',
] as const;

export const streamEventSchema = lazySchema(() => z.discriminatedUnion('type', [
  // A turn (one user message answered) begins and ends.
  z.object({ ...common, type: z.literal('turn_started'), text: z.string().optional() }),
  z.object({
    ...common,
    type: z.literal('turn_ended'),
    /** The reply text, or the error the turn ended with. */
    reply: z.union([z.object({ text: z.string() }), z.object({ error: z.object({ code: z.string(), message: z.string() }) })]),
  }),
  // A model or tool call's attempt begins: a higher attempt voids what earlier ones streamed.
  z.object({ ...common, type: z.literal('attempt_started'), kind: z.enum(['model', 'tool']), model: z.string().optional() }),
  // Live model output, as the provider streams it (index: the content block's position in the reply).
  z.object({ ...common, type: z.literal('block_started'), index: z.number().int(), block: blockStartSchema }),
  z.object({ ...common, type: z.literal('text_delta'), index: z.number().int(), text: z.string() }),
  z.object({ ...common, type: z.literal('thinking_delta'), index: z.number().int(), thinking: z.string() }),
  z.object({ ...common, type: z.literal('tool_input_delta'), index: z.number().int(), partialJson: z.string() }),
  z.object({ ...common, type: z.literal('block_stopped'), index: z.number().int() }),
  // The reply is complete: what history holds (durable).
  z.object({
    ...common,
    type: z.literal('message_end'),
    model: z.string(),
    stopReason: z.string().nullable(),
    usage: usageSchema,
    content: z.array(replyBlockSchema),
  }),
  // Tools: start, output lines as they come (live), end.
  z.object({ ...common, type: z.literal('tool_started'), name: z.string(), input: z.unknown() }),
  z.object({ ...common, type: z.literal('tool_output'), stream: z.enum(['stdout', 'stderr']), line: z.string() }),
  z.object({
    ...common,
    type: z.literal('tool_ended'),
    name: z.string(),
    isError: z.boolean(),
    /** The result, cut to 2,000 characters (the full result is in the conversation). */
    content: z.string(),
  }),
  z.object({ ...common, type: z.literal('approval_requested'), name: z.string(), input: z.unknown() }),
  z.object({ ...common, type: z.literal('approval_decided'), name: z.string(), approved: z.boolean(), note: z.string().optional() }),
  // Context management decisions (the AgentEvent of the same name, its data unchanged).
  z.object({ ...common, type: z.literal('decision'), kind: z.enum(decisionKinds), data: z.record(z.string(), z.unknown()) }),
  z.object({ ...common, type: z.literal('status'), status: z.string() }),
  z.object({ ...common, type: z.literal('title'), title: z.string() }),
  z.object({ ...common, type: z.literal('interrupted'), during: z.enum(['model', 'tool', 'approval']) }),
  z.object({ ...common, type: z.literal('warning'), code: z.string(), message: z.string() }),
  z.object({ ...common, type: z.literal('error'), code: z.string(), message: z.string(), recoverable: z.boolean() }),
  // Published by other producers (staged runs, sub-agents) through publishStreamEvent.
  z.object({ ...common, type: z.literal('custom'), name: z.string(), data: z.unknown() }),
]));

export type StreamEvent = z.infer<typeof streamEventSchema>;
export type StreamEventType = StreamEvent['type'];
export type StreamEventOf<K extends StreamEventType> = Extract<StreamEvent, { type: K }>;
export type DecisionKind = (typeof decisionKinds)[number];
export const DECISION_KINDS: readonly DecisionKind[] = decisionKinds;

/** Where a nested event comes from: the sub-agents from this run down (agent names), and the run that produced it. */
export const subAgentOriginSchema = lazySchema(() => z.object({ path: z.array(z.string()).min(1), workflowId: z.string() }));
export type SubAgentOrigin = z.infer<typeof subAgentOriginSchema>;

export const streamEnvelopeSchema = lazySchema(() => z.object({ offset: z.number().int().min(0), event: streamEventSchema, subAgent: subAgentOriginSchema.optional() }));
export interface StreamEnvelope {
  offset: number;
  event: StreamEvent;
  /**
   * Set on a sub-agent's events (agentAsTool), read live from its child workflow's own stream: `path`
   * names the sub-agents from this run down (`['researcher', 'fetcher']`), `workflowId` the run that
   * produced the event. Absent: this run's own event.
   */
  subAgent?: SubAgentOrigin;
}

/** Event types published live by activities (never kept by the workflow, never in history). */
export const LIVE_EVENT_TYPES: ReadonlySet<StreamEventType> = new Set([
  'attempt_started',
  'block_started',
  'text_delta',
  'thinking_delta',
  'tool_input_delta',
  'block_stopped',
  'tool_output',
]);

/**
 * A block of offsets the workflow reserved for one model or tool call's live events: the call's
 * activity publishes at offsets in [from, to); `closed` once the call ended (its live events are gone
 * then: message_end / tool_ended, after the block, say what history holds).
 *
 * A `subagent` block is a sub-agent's child workflow (`workflowId`, agent `agent`): the child's own
 * stream starts at `from` and stays below `to`, so a reader reads it there, in place, from the child.
 */
export interface StreamBlock {
  callId: string;
  messageId?: string;
  kind: 'model' | 'tool' | 'subagent';
  from: number;
  to: number;
  closed: boolean;
  /** A subagent block's child workflow and agent. */
  workflowId?: string;
  agent?: string;
}

/** The most events one stream query returns (a page that holds this many may stop before the end). */
export const STREAM_PAGE_LIMIT = 500;

/**
 * What the stream query answers: durable events at offsets >= from (at most STREAM_PAGE_LIMIT), and the
 * blocks that overlap them: those that end after `from` and open at or before the page's last event
 * (a page without events: every such block).
 */
export interface StreamPage {
  events: StreamEnvelope[];
  blocks: StreamBlock[];
  /** The next offset the workflow will assign. */
  next: number;
  /** The oldest offset still kept (older durable events dropped off the buffer). */
  oldest: number;
  /**
   * The page was not cut at its limit: it holds every block to the end, those opened after its last
   * event too. Absent: the blocks reach only to the last event (a cut page, or an older worker's answer).
   */
  toEnd?: true;
}

/**
 * What the stream query would answer from `from`, worked out from its answer from `readFrom` for the same
 * workflow state, or undefined when that answer does not hold it: `from` before `readFrom`, a page that
 * may have stopped before the end, or one without `toEnd` whose events all lie before `from` (the blocks
 * after its last event were left out of it: an older worker's answer). Exactly what the workflow answers
 * otherwise (a unit test compares them), so a reader polling for live deltas need not ask the workflow
 * again while nothing durable changed.
 */
export function pageFrom(page: StreamPage, readFrom: number, from: number): StreamPage | undefined {
  if (from < readFrom || page.events.length >= STREAM_PAGE_LIMIT) return undefined;
  const events = page.events.filter((e) => e.offset >= from);
  if (!page.toEnd && events.length === 0 && page.events.length > 0) return undefined;
  const until = !page.toEnd && events.length > 0 ? events[events.length - 1]!.offset : page.next;
  const blocks = page.blocks.filter((b) => b.to > from && b.from <= until);
  return { events, blocks, next: page.next, oldest: page.oldest, ...(page.toEnd ? { toEnd: true as const } : {}) };
}

/**
 * What a streaming activity puts in its heartbeat details: its attempt's live events from offset
 * `from` on, all of them (a client that polls late still gets the whole attempt so far).
 */
export interface LiveStreamDetails {
  fhStream: 1;
  callId: string;
  attempt: number;
  from: number;
  events: StreamEvent[];
}

export function isLiveStreamDetails(v: unknown): v is LiveStreamDetails {
  return typeof v === 'object' && v !== null && (v as { fhStream?: unknown }).fhStream === 1 && Array.isArray((v as LiveStreamDetails).events);
}

/** Where a model or tool activity publishes its live events (absent: streaming off for that call). */
export interface StreamSlot {
  callId: string;
  messageId?: string;
  /** The block's first offset. */
  from: number;
  /** The block's end (exclusive): the activity never publishes at or past it. */
  to: number;
}

export const streamReadQuery = defineQuery<StreamPage, [{ from: number; limit?: number }]>('fh.stream.read');

/** Memo key of an agent run started with `streaming: false` (startAgent): its model calls do not stream. */
export const STREAMING_MEMO_KEY = 'fh.streaming';
