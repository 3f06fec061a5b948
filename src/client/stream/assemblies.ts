/**
 * The calls a stream reader has assembled (see CallAssembly), bounded: a `fh chat` or board stream
 * reads for hours, and kept every call's assembled text before. A call in flight is kept whatever the
 * bound; a call whose block ended is needed only while the reader may walk that block again (its
 * position still inside it), so only the most recent ended calls are kept (the shared LRU).
 */
import { Lru } from '../../core/lru';
import { CallAssembly } from './assembler';

/** How many ended calls a reader keeps (the calls in flight come on top: one per reader, as it reads in order). */
export const ENDED_CALLS_KEPT = 64;

export class CallAssemblies {
  private readonly inFlight = new Map<string, CallAssembly>();
  private readonly ended: Lru<string, CallAssembly>;

  constructor(capacity = ENDED_CALLS_KEPT) {
    this.ended = new Lru(capacity, 'ended calls kept by a stream reader');
  }

  /** The call's assembly, made when the reader first reaches it. */
  of(callId: string): CallAssembly {
    const kept = this.inFlight.get(callId) ?? this.ended.get(callId);
    if (kept) return kept;
    // A reader reaches calls in offset order and passes a call's block only once it closed: a call it
    // reaches now means those it followed before have ended.
    for (const id of [...this.inFlight.keys()]) this.end(id);
    const a = new CallAssembly();
    this.inFlight.set(callId, a);
    return a;
  }

  has(callId: string): boolean {
    return this.inFlight.has(callId) || this.ended.get(callId) !== undefined;
  }

  /** The call's block closed (and was caught up): from now on it may be dropped, the oldest first. */
  end(callId: string): void {
    const a = this.inFlight.get(callId);
    if (!a) return;
    this.inFlight.delete(callId);
    this.ended.set(callId, a);
  }

  /** How many calls are kept (at most the bound, plus the calls in flight). */
  get size(): number {
    return this.inFlight.size + this.ended.size;
  }
}
