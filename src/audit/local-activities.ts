/**
 * Local-activity markers into records: the fhDecideCompaction decisions (estimate, threshold, cut,
 * compact or not) and any other local activity.
 */
import type { CompactionDecision } from '../core/context/compaction/decide';
import { failureText } from './history-fields';
import { describeValue } from './markdown';
import { isOffloaded, isPlain } from './payloads';
import type { ActivityRecord, AuditRecord, CompactionDecisionRecord, CompactionGateRecord } from './records';
import type { GateCheck } from '../core/context/compaction/gate';
import type { Attributes, EventRef, Walk } from './walk';

export async function markerRecorded(w: Walk, m: Attributes<'markerRecordedEventAttributes'>, ev: EventRef): Promise<void> {
  if (m.markerName !== 'core_local_activity') return;
  const data = (await w.reader.value(m.details?.data?.payloads?.[0])) as { activity_type?: string; seq?: number } | undefined;
  const result = await w.reader.value(m.details?.result?.payloads?.[0]);
  if (data?.activity_type === 'fhDecideCompaction') compactionDecision(w, m, result, ev);
  else if (data?.activity_type === 'fhCheckSummaryGate') gateChecked(w, m, result, ev);
  else {
    w.push<ActivityRecord>({
      type: 'activity',
      ...ev,
      name: `${data?.activity_type ?? '?'} (local)`,
      input: [],
      status: m.failure ? 'failed' : 'completed',
      result,
      ...(m.failure ? { error: failureText(m.failure) } : {}),
    });
  }
}

function compactionDecision(w: Walk, m: Attributes<'markerRecordedEventAttributes'>, result: unknown, ev: EventRef): void {
  w.run.totals.compactionDecisions += 1;
  if (!isPlain(result)) {
    w.push<CompactionDecisionRecord>({
      type: 'compaction_decision',
      ...ev,
      recorded: false,
      ...(m.failure ? { error: failureText(m.failure) } : isOffloaded(result) ? { error: describeValue(result, w.truncateAt) } : {}),
    });
    return;
  }
  decisionRecorded(w, result as unknown as CompactionDecision, ev);
}

/** The compaction gate's check: facts checked, found and restated, by kind, and the facts the summary missed. */
function gateChecked(w: Walk, m: Attributes<'markerRecordedEventAttributes'>, result: unknown, ev: EventRef): void {
  if (!isPlain(result)) {
    const error = m.failure ? failureText(m.failure) : isOffloaded(result) ? describeValue(result, w.truncateAt) : 'the check was not recorded';
    w.push<CompactionGateRecord>({ type: 'compaction_gate', ...ev, recorded: false, error });
    return;
  }
  w.push<CompactionGateRecord>({ type: 'compaction_gate', ...ev, recorded: true, ...(result as unknown as GateCheck) });
}

/**
 * A recorded compaction decision: from the fhDecideCompaction local activity, or (since decisions ride
 * with the model call) from an fhModel result, where `place` puts it before (or instead of) that call.
 */
export function decisionRecorded(
  w: Walk,
  d: CompactionDecision,
  ev: EventRef,
  place?: { at: AuditRecord; how: 'before' | 'replace' },
): void {
  const record = { type: 'compaction_decision' as const, ...ev, recorded: true, ...d };
  if (place) w.place<CompactionDecisionRecord>(record, place.at, place.how);
  else w.push<CompactionDecisionRecord>(record);
  if (d.compact) {
    w.pendingCompaction = d.reason === 'overflow' ? 'overflow' : 'threshold';
    w.run.totals.compactions += 1;
  }
}
