import { STREAM_PAGE_LIMIT } from '../../wire/stream';
/**
 * A run's stream as the workflow keeps it: durable events at offsets (in workflow state, read with the
 * stream query; never in history), and blocks of offsets reserved for model and tool calls whose
 * activities publish live events (deltas) in their heartbeat details. Offsets only grow, across
 * continue-as-new too (the next run starts where this one stopped). Pure state: no commands.
 */
import type { StreamBlock, StreamEnvelope, StreamEvent, StreamPage, StreamSlot } from '../../wire/stream';

/** Offsets one call may publish live events at (every attempt's events fit: an attempt stops at the end). */
export const STREAM_BLOCK_SIZE = 1 << 20;
/** Offsets a top-level run reserves for one sub-agent's whole stream (2^53 / 2^36: 131,072 sub-agents a chain). */
export const SUBAGENT_BLOCK_SIZE = 2 ** 36;
/** A sub-agent's range is split this many ways: each of its calls and its own sub-agents get 1/256 of it. */
const NESTED_SHARE = 2 ** 8;
/** Offsets stay exact numbers in JSON and JavaScript. */
const TOP_LIMIT = Number.MAX_SAFE_INTEGER;
/** Durable events kept for readers (older ones drop off; `oldest` says so). */
const KEPT_EVENTS = 2000;
/** Closed blocks kept (a reader that lags finds where each call's live events were). */
const KEPT_BLOCKS = 200;

export class StreamLog {
  private readonly events: StreamEnvelope[] = [];
  private readonly blocks: StreamBlock[] = [];
  /** The message being answered: events without their own messageId are tagged with it. */
  messageId: string | undefined;
  /** Model calls stream their deltas (off: they are called without streaming; durable events still flow). */
  enabled = true;

  /** Offsets per model or tool call, and per sub-agent: smaller inside a sub-agent's bounded range. */
  private readonly callBlock: number;
  private readonly subAgentBlock: number;
  /** The oldest offset a reader can still read here (earlier ones: an earlier run, or dropped). */
  private oldest: number;

  /**
   * `limit`: the end of this run's range (a sub-agent's stream lives inside the block its parent
   * reserved); past it nothing more is published and calls stream nothing (their results still are).
   */
  constructor(
    private nextOffset = 0,
    private readonly limit = TOP_LIMIT,
  ) {
    // Everything from the run's first offset is still here until events drop off (a run whose first
    // offsets are a call's block, with no durable event before it, keeps them too).
    this.oldest = nextOffset;
    const range = limit - nextOffset;
    this.callBlock = limit === TOP_LIMIT ? STREAM_BLOCK_SIZE : Math.min(STREAM_BLOCK_SIZE, Math.floor(range / NESTED_SHARE));
    this.subAgentBlock = limit === TOP_LIMIT ? SUBAGENT_BLOCK_SIZE : Math.floor(range / NESTED_SHARE);
  }

  get next(): number {
    return this.nextOffset;
  }

  publish(event: StreamEvent, at?: number): number {
    // A sub-agent's range is full: its events go unseen on the stream (its events and result still reach the parent).
    if (this.nextOffset >= this.limit) return -1;
    const offset = this.nextOffset++;
    const tagged: StreamEvent = { ...event };
    if (tagged.messageId === undefined && this.messageId !== undefined) tagged.messageId = this.messageId;
    if (tagged.at === undefined && at !== undefined) tagged.at = at;
    this.events.push({ offset, event: tagged });
    if (this.events.length > KEPT_EVENTS) {
      this.events.splice(0, this.events.length - KEPT_EVENTS);
      this.oldest = this.events[0]!.offset;
    }
    return offset;
  }

  /** Reserves a block for a call's live events; `callId` given for tool calls (their tool_use id). Undefined: no room left. */
  open(kind: 'model' | 'tool', callId?: string): StreamSlot | undefined {
    return this.reserve(kind, this.callBlock, callId);
  }

  /**
   * Reserves a block for a sub-agent's child workflow, whose own stream runs in it (undefined: no room
   * left, the child's events then reach the stream only as its parent's, after it ends).
   */
  openSubAgent(workflowId: string, agent: string): StreamSlot | undefined {
    return this.reserve('subagent', this.subAgentBlock, workflowId, { workflowId, agent });
  }

  private reserve(kind: StreamBlock['kind'], size: number, callId: string | undefined, extra: Pick<StreamBlock, 'workflowId' | 'agent'> = {}): StreamSlot | undefined {
    const from = this.nextOffset;
    if (size < 1 || from + size > this.limit) return undefined;
    // Named by its first offset: unique across the whole chain of runs.
    const id = callId ?? `m${from}`;
    this.nextOffset += size;
    const block: StreamBlock = { callId: id, kind, from, to: this.nextOffset, closed: false, ...(this.messageId !== undefined ? { messageId: this.messageId } : {}), ...extra };
    this.blocks.push(block);
    if (this.blocks.length > KEPT_BLOCKS) {
      const i = this.blocks.findIndex((b) => b.closed);
      if (i >= 0) this.blocks.splice(i, 1);
    }
    return { callId: id, from, to: this.nextOffset, ...(block.messageId !== undefined ? { messageId: block.messageId } : {}) };
  }

  close(callId: string): void {
    // From the newest: the block closed is nearly always the last one opened (a scan of the kept
    // blocks from the oldest showed in the workflow thread's profile, once per model and tool call).
    for (let i = this.blocks.length - 1; i >= 0; i--) {
      const block = this.blocks[i]!;
      if (block.callId === callId && !block.closed) {
        block.closed = true;
        return;
      }
    }
  }

  read(from: number, limit = STREAM_PAGE_LIMIT): StreamPage {
    const cap = Math.min(limit, STREAM_PAGE_LIMIT);
    const events: StreamEnvelope[] = [];
    for (const e of this.events) {
      if (e.offset < from) continue;
      events.push(e);
      if (events.length >= cap) break;
    }
    // A page cut at its limit reaches to its last event (the next page holds the blocks after it). One
    // that was not holds every block to the end: a call opened in the workflow task that published the
    // page's last events is in it, so a reader learns of the call from this answer, not one more query.
    const cut = events.length > 0 && events.length >= cap;
    const until = cut ? events[events.length - 1]!.offset : this.nextOffset;
    const blocks = this.blocks.filter((b) => b.to > from && b.from <= until);
    return { events, blocks, next: this.nextOffset, oldest: this.oldest, ...(cut ? {} : { toEnd: true as const }) };
  }
}
