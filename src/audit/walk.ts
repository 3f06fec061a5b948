/** The state of a walk over a history: the records so far, and what one event tells the handling of a later one. */
import type { temporal } from '@temporalio/proto';
import type { PayloadReader } from './payloads';
import type { AuditRecord, AuditRun, UpdateRecord } from './records';

export type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
/** The attributes of one kind of history event. */
export type Attributes<K extends keyof HistoryEvent> = NonNullable<HistoryEvent[K]>;

/** The event a record comes from. */
export interface EventRef {
  eventId: number;
  /** ISO time of the event. */
  at: string | undefined;
}

/** What the walk carries from one event to the next. */
export class Walk {
  readonly records: AuditRecord[] = [];
  /** Activity records by their scheduled event id (what the started / completed / failed events name). */
  readonly byScheduled = new Map<number, AuditRecord>();
  readonly updatesByAccepted = new Map<number, UpdateRecord>();
  // Compaction context for summaries: what asked for the compaction they belong to.
  pendingCompaction: 'threshold' | 'overflow' | undefined;
  overflowSeen = false;
  /** fh.compact updates not completed yet. */
  readonly openManual = new Set<UpdateRecord>();
  /** Prompt texts users sent through fh.prompt, not yet seen in a model call (so they are listed once). */
  readonly promptsFromUpdates: string[] = [];
  lastPrompt: { text: string; completed: boolean } | undefined;

  constructor(
    readonly reader: PayloadReader,
    readonly truncateAt: number,
    readonly run: AuditRun,
  ) {}

  push<R extends AuditRecord>(r: Omit<R, 'n'>): R {
    const rec = { n: this.records.length + 1, ...r } as R;
    this.records.push(rec);
    return rec;
  }

  /** Puts `r` where `at` stands (replace) or just before it, keeping `n` the 1-based position. */
  place<R extends AuditRecord>(r: Omit<R, 'n'>, at: AuditRecord, how: 'before' | 'replace'): R {
    const i = this.records.indexOf(at);
    const rec = { n: 0, ...r } as R;
    if (i < 0) this.records.push(rec);
    else this.records.splice(i, how === 'replace' ? 1 : 0, rec);
    this.records.forEach((x, k) => (x.n = k + 1));
    return rec;
  }
}
