/** Plain values out of history event fields: numbers that may be Longs, protobuf timestamps, failure chains. */
import type { temporal } from '@temporalio/proto';

type Failure = temporal.api.failure.v1.IFailure;

/** A number from a field that may hold a Long, a number or a string (depending on the decoder). */
export function toNumber(v: unknown): number | undefined {
  if (v === null || v === undefined) return undefined;
  const n = typeof v === 'object' && 'toNumber' in (v as object) ? (v as { toNumber(): number }).toNumber() : Number(v);
  return Number.isFinite(n) ? n : undefined;
}

/** A protobuf Timestamp as ISO text (seconds may be a Long, a number or a string, depending on the decoder). */
export function isoTime(ts: { seconds?: unknown; nanos?: number | null } | null | undefined): string | undefined {
  if (!ts) return undefined;
  const seconds = toNumber(ts.seconds) ?? 0;
  const ms = seconds * 1000 + Math.floor((ts.nanos ?? 0) / 1e6);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : undefined;
}

/** A failure and its causes (five deep at most) on one line: "message [type]: cause …". */
export function failureText(f: Failure): string {
  const parts: string[] = [];
  let cur: Failure | null | undefined = f;
  for (let depth = 0; cur && depth < 5; depth++) {
    const type = cur.applicationFailureInfo?.type;
    if (cur.message) parts.push(type ? `${cur.message} [${type}]` : cur.message);
    cur = cur.cause;
  }
  return parts.join(': ') || 'failed';
}
