/**
 * Publishes a call's live events (text, thinking and tool-input deltas) in the activity's heartbeat
 * details: Temporal keeps the latest details on the pending activity (describe shows them) and never
 * writes them to history. The details hold every event of this attempt so far, so a client that looks
 * late still gets the whole attempt. A retried attempt starts after the offsets the previous attempt
 * published (Temporal hands it the last recorded details) and says so with `attempt_started`.
 *
 * Nothing is sent before the first flush is due: FIRST_DELTA_MS after the attempt's first event that is
 * not its start (a retry's start: FLUSH_MS after it, when sooner), then at most every FLUSH_MS. A call
 * that ends sooner sends no heartbeat at all, and its reader gets the whole reply from message_end, as
 * it does when a last heartbeat never left; each heartbeat is a round trip to Temporal (most of
 * streaming's cost per call when replies are quick).
 */
import type { RawStreamEvent } from '../models/anthropic/messages';
import { isLiveStreamDetails, type LiveStreamDetails, type StreamEvent, type StreamSlot } from '../../wire/stream';
import type { LiveBrokerEntry } from '../../wire/live-broker';

/** How often details are handed to the SDK at most (the worker's heartbeat throttle decides when they leave). */
const FLUSH_MS = 100;
/**
 * The first delta goes out this soon after it came: a reader's first sight of the reply. On the
 * attempt's FLUSH_MS timer it waited up to 100 ms (part of the 118-145 ms from the model's first delta
 * to a reader's, measured by the watchers bench); a call that ends within this much of its first delta,
 * as a quick reply does, still sends no heartbeat.
 */
const FIRST_DELTA_MS = 20;
/**
 * Past this many bytes of events (UTF-8, as the payload is encoded) an attempt stops publishing
 * (message_end still says what the reply is): the details stay under the 128 KiB external-storage
 * threshold, so they are never offloaded to the store. Bytes, not characters: CJK text is 3 bytes a
 * character, so 96,000 characters of it were 288 KB. Events go whole, so none is cut mid-character.
 */
export const MAX_DETAILS_BYTES = 96_000;

export interface LivePublisherInit {
  slot: StreamSlot;
  attempt: number;
  /** The previous attempt's last recorded heartbeat details (Temporal's `info.heartbeatDetails`). */
  prior: unknown;
  heartbeat(details: LiveStreamDetails): void;
  kind: 'model' | 'tool';
  model?: string;
  /** Each event also goes here at once (the live broker), and the attempt's end when it closes. */
  mirror?: (entry: LiveBrokerEntry) => void;
}

export class LivePublisher {
  readonly from: number;
  private readonly events: StreamEvent[] = [];
  private bytes = 0;
  private full = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** When the armed timer fires (epoch ms). */
  private due = 0;
  /** Whether the attempt had an event other than its start yet (the first goes out soon). */
  private hurried = false;
  private dirty = false;
  /** Whether any details were handed to Temporal yet (the last events then follow them at close). */
  private published = false;

  constructor(private readonly init: LivePublisherInit) {
    const prior = init.prior;
    this.from = isLiveStreamDetails(prior) && prior.callId === init.slot.callId ? prior.from + prior.events.length : init.slot.from;
    this.push({ type: 'attempt_started', kind: init.kind, ...(init.model ? { model: init.model } : {}) });
  }

  /** The details as they stand (the heartbeat loop resends them, so a plain heartbeat never blanks them). */
  details(): LiveStreamDetails {
    return { fhStream: 1, callId: this.init.slot.callId, attempt: this.init.attempt, from: this.from, events: this.events };
  }

  push(event: StreamEvent): void {
    if (this.full) return;
    // Events go bare: the details' callId and attempt are theirs (the reader adds them back).
    const size = Buffer.byteLength(JSON.stringify(event), 'utf8') + 1;
    if (this.from + this.events.length + 1 >= this.init.slot.to || this.bytes + size > MAX_DETAILS_BYTES) {
      this.full = true; // the client catches up from message_end
      return;
    }
    this.bytes += size;
    this.events.push(event);
    this.init.mirror?.({ callId: this.init.slot.callId, attempt: this.init.attempt, offset: this.from + this.events.length - 1, event });
    this.dirty = true;
    if (event.type === 'attempt_started') {
      // A first attempt's start alone tells a reader nothing the call's block does not (it waits for the
      // reply), so it waits for the first delta. A retry's goes out on the timer: readers then drop what
      // the failed attempt streamed.
      if (this.init.attempt > 1) this.arm(FLUSH_MS);
      return;
    }
    if (!this.hurried) {
      this.hurried = true;
      if (!this.timer || this.due - Date.now() > FIRST_DELTA_MS) this.arm(FIRST_DELTA_MS);
      return;
    }
    if (!this.timer) this.arm(FLUSH_MS);
  }

  private arm(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.due = Date.now() + ms;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, ms);
  }

  /** A raw Anthropic server-sent event, as the stream events a client reads. */
  pushRaw(ev: RawStreamEvent): void {
    const e = liveEventOf(ev);
    if (e) this.push(e);
  }

  flush(): void {
    this.dirty = false;
    this.published = true;
    this.init.heartbeat(this.details());
  }

  /** Stops the flush timer and hands over the last events, when earlier ones went out. */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.dirty && this.published) this.flush();
    this.init.mirror?.({ callId: this.init.slot.callId, attempt: this.init.attempt, end: true });
  }
}

export function liveEventOf(ev: RawStreamEvent): StreamEvent | undefined {
  switch (ev.type) {
    case 'content_block_start': {
      const b = ev.content_block as { type: string; id?: string; name?: string };
      const block =
        b.type === 'text' || b.type === 'thinking' || b.type === 'redacted_thinking'
          ? { type: b.type }
          : b.type === 'tool_use'
            ? { type: 'tool_use' as const, id: b.id ?? '', name: b.name ?? '' }
            : { type: 'other' as const, blockType: b.type };
      return { type: 'block_started', index: ev.index, block } as StreamEvent;
    }
    case 'content_block_delta': {
      const d = ev.delta as { type: string; text?: string; thinking?: string; partial_json?: string };
      if (d.type === 'text_delta') return { type: 'text_delta', index: ev.index, text: d.text ?? '' };
      if (d.type === 'thinking_delta') return { type: 'thinking_delta', index: ev.index, thinking: d.thinking ?? '' };
      if (d.type === 'input_json_delta') return { type: 'tool_input_delta', index: ev.index, partialJson: d.partial_json ?? '' };
      return undefined; // signature_delta, citations: nothing a reader shows
    }
    case 'content_block_stop':
      return { type: 'block_stopped', index: ev.index };
    default:
      return undefined; // message_start / message_delta / message_stop / ping: message_end says it all
  }
}

/** A tool's output as whole lines (`tool_output`), per stream; a last line without its newline at the end. */
export class ToolOutputLines {
  private readonly partial = { stdout: '', stderr: '' };

  constructor(readonly publisher: LivePublisher) {}

  add(stream: 'stdout' | 'stderr', text: string): void {
    const parts = (this.partial[stream] + text).split('\n');
    this.partial[stream] = parts.pop() ?? '';
    for (const line of parts) this.publisher.push({ type: 'tool_output', stream, line });
  }

  close(): void {
    for (const stream of ['stdout', 'stderr'] as const) {
      if (this.partial[stream]) this.publisher.push({ type: 'tool_output', stream, line: this.partial[stream] });
      this.partial[stream] = '';
    }
    this.publisher.close();
  }
}
