/**
 * The live path on a broker (Redis Streams): what the model and tool activities add and readers read,
 * the same offsets as the heartbeat details. The durable events and the history stay the source of
 * truth: the broker only carries a call's live events sooner and to many readers at once, and a reader
 * without it (or with it down) reads the heartbeat details as before.
 */
import type { StreamEvent } from './stream';

/** One stream per workflow: its calls' live events, oldest first, trimmed by length and age. */
export function liveBrokerKey(workflowId: string): string {
  return `fh:live:${workflowId}`;
}

/** A call's live event at its offset, or the end of the call's attempt (readers then read the durable page). */
export type LiveBrokerEntry = { callId: string; attempt: number; offset: number; event: StreamEvent } | { callId: string; attempt: number; end: true };

/** Redis stream fields: flat strings. */
export function encodeLiveEntry(e: LiveBrokerEntry): string[] {
  return 'end' in e
    ? ['c', e.callId, 'a', String(e.attempt), 'end', '1']
    : ['c', e.callId, 'a', String(e.attempt), 'o', String(e.offset), 'e', JSON.stringify(e.event)];
}

/** The entry of a stream record's fields (undefined: not one of ours). */
export function decodeLiveEntry(fields: Record<string, string>): LiveBrokerEntry | undefined {
  const callId = fields.c;
  const attempt = Number(fields.a);
  if (!callId || !Number.isInteger(attempt)) return undefined;
  if (fields.end === '1') return { callId, attempt, end: true };
  const offset = Number(fields.o);
  if (!Number.isInteger(offset) || typeof fields.e !== 'string') return undefined;
  try {
    return { callId, attempt, offset, event: JSON.parse(fields.e) as StreamEvent };
  } catch {
    return undefined;
  }
}

/** Where the broker is and how long it keeps entries (length per workflow stream, and age). */
export interface LiveBrokerSettings {
  /** `redis://host:port` (TLS: `rediss://`). */
  url: string;
  /** Entries kept per workflow's stream, about (Redis trims whole nodes). Default 10,000. */
  maxLen?: number;
  /** How long entries are kept, in ms (older ones trimmed as new ones come). Default 10 minutes. */
  maxAgeMs?: number;
}
