/**
 * A run's stream as the workflow keeps it: durable events at offsets (in workflow state, read with the
 * stream query; never in history), and blocks of offsets reserved for model and tool calls whose
 * activities publish live events (deltas) in their heartbeat details. Offsets only grow, across
 * continue-as-new too (the next run starts where this one stopped). Pure state: no commands.
 */
import type { StreamBlock, StreamEnvelope, StreamEvent, StreamPage, StreamSlot } from '../../wire/stream';

/** Offsets one call may publish live events at (every attempt's events fit: an attempt stops at the end). */
export const STREAM_BLOCK_SIZE = 1 << 20;
/** Durable events kept for readers (older ones drop off; `oldest` says so). */
const KEPT_EVENTS = 2000;
/** Closed blocks kept (a reader that lags finds where each call's live events were). */
const KEPT_BLOCKS = 200;
const PAGE_LIMIT = 500;

export class StreamLog {
  private readonly events: StreamEnvelope[] = [];
  private readonly blocks: StreamBlock[] = [];
  /** The message being answered: events without their own messageId are tagged with it. */
  messageId: string | undefined;
  /** Model calls stream their deltas (off: they are called without streaming; durable events still flow). */
  enabled = true;

  constructor(private nextOffset = 0) {}

  get next(): number {
    return this.nextOffset;
  }

  publish(event: StreamEvent, at?: number): number {
    const offset = this.nextOffset++;
    const tagged: StreamEvent = { ...event };
    if (tagged.messageId === undefined && this.messageId !== undefined) tagged.messageId = this.messageId;
    if (tagged.at === undefined && at !== undefined) tagged.at = at;
    this.events.push({ offset, event: tagged });
    if (this.events.length > KEPT_EVENTS) this.events.splice(0, this.events.length - KEPT_EVENTS);
    return offset;
  }

  /** Reserves a block for a call's live events; `callId` given for tool calls (their tool_use id). */
  open(kind: 'model' | 'tool', callId?: string): StreamSlot {
    const from = this.nextOffset;
    // Named by its first offset: unique across the whole chain of runs.
    const id = callId ?? `m${from}`;
    this.nextOffset += STREAM_BLOCK_SIZE;
    const block: StreamBlock = { callId: id, kind, from, to: this.nextOffset, closed: false, ...(this.messageId !== undefined ? { messageId: this.messageId } : {}) };
    this.blocks.push(block);
    if (this.blocks.length > KEPT_BLOCKS) {
      const i = this.blocks.findIndex((b) => b.closed);
      if (i >= 0) this.blocks.splice(i, 1);
    }
    return { callId: id, from, to: this.nextOffset, ...(block.messageId !== undefined ? { messageId: block.messageId } : {}) };
  }

  close(callId: string): void {
    const block = this.blocks.find((b) => b.callId === callId && !b.closed);
    if (block) block.closed = true;
  }

  read(from: number, limit = PAGE_LIMIT): StreamPage {
    const events: StreamEnvelope[] = [];
    for (const e of this.events) {
      if (e.offset < from) continue;
      events.push(e);
      if (events.length >= Math.min(limit, PAGE_LIMIT)) break;
    }
    const until = events.length > 0 ? events[events.length - 1]!.offset : this.nextOffset;
    const blocks = this.blocks.filter((b) => b.to > from && b.from <= until);
    return { events, blocks, next: this.nextOffset, oldest: this.events[0]?.offset ?? this.nextOffset };
  }
}
