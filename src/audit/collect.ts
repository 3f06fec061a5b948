/**
 * Walking a history into audit records: one handler per event family (workflow start and end,
 * activities by type, local-activity markers, updates, signals, cancellation). Nothing is run. The
 * activity handlers are in ./activities, the marker handlers in ./local-activities.
 */
import { temporal } from '@temporalio/proto';
import { failureText, isoTime, toNumber } from './history-fields';
import { AGENT_MEMO_KEY } from '../client/start';
import { activityCompleted, activityFailed, activityScheduled, activityStarted } from './activities';
import { markerRecorded } from './local-activities';
import { childEnded, childStarted } from './children';
import { DEFAULT_TRUNCATE, renderAuditMarkdown } from './markdown';
import { isPlain, PayloadReader, type PayloadSources } from './payloads';
import type { AuditRun, AuditTranscript, CancelRequestRecord, EndRecord, InputRecord, RunResetRecord, SignalRecord, UpdateRecord } from './records';
import { Walk, type Attributes, type EventRef, type HistoryEvent } from './walk';

type History = temporal.api.history.v1.IHistory;

export interface AuditOptions extends PayloadSources {
  /** Characters of a tool result or text shown in the Markdown (the JSON keeps everything). Default 400. */
  truncateAt?: number;
  /** Known ids (histories do not always record them). */
  workflowId?: string;
  runId?: string;
}

/** Renders a run from its history: `{ json: { run, records }, markdown }`. Runs nothing. */
export async function auditTranscript(history: History, opts: AuditOptions = {}): Promise<AuditTranscript> {
  const truncateAt = opts.truncateAt ?? DEFAULT_TRUNCATE;
  const events = history.events ?? [];
  const walk = new Walk(new PayloadReader(opts), truncateAt, newRun(opts, events.length));
  for (const e of events) await collectEvent(walk, e);
  walk.records.forEach((r, i) => (r.n = i + 1));
  const json = { run: walk.run, records: walk.records };
  return { json, markdown: renderAuditMarkdown(json, { truncateAt }) };
}

import { emptyCacheAccount } from './cache';

function newRun(opts: AuditOptions, events: number): AuditRun {
  return {
    workflowId: opts.workflowId,
    runId: opts.runId,
    status: 'running',
    events,
    totals: {
      modelCalls: 0,
      inputTokens: 0,
      outputTokens: 0,
      toolCalls: 0,
      toolErrors: 0,
      compactionDecisions: 0,
      compactions: 0,
      summaries: 0,
      summarizer: { inputTokens: 0, outputTokens: 0, calls: 0 },
      titles: { inputTokens: 0, outputTokens: 0, calls: 0 },
      userActions: 0,
      cache: emptyCacheAccount(),
      serverContext: { edits: 0, clearedToolUses: 0, clearedInputTokens: 0, compactions: 0 },
      cost: { pricedUsd: 0, unpricedCalls: 0, unpricedModels: [] },
    },
  };
}

async function collectEvent(w: Walk, e: HistoryEvent): Promise<void> {
  const ev: EventRef = { eventId: toNumber(e.eventId) ?? 0, at: isoTime(e.eventTime) };
  if (e.workflowExecutionStartedEventAttributes) return workflowStarted(w, e.workflowExecutionStartedEventAttributes, ev);
  if (e.activityTaskScheduledEventAttributes) return activityScheduled(w, e.activityTaskScheduledEventAttributes, ev);
  if (e.activityTaskStartedEventAttributes) return activityStarted(w, e.activityTaskStartedEventAttributes);
  if (e.activityTaskCompletedEventAttributes) return activityCompleted(w, e.activityTaskCompletedEventAttributes, ev);
  if (e.activityTaskFailedEventAttributes || e.activityTaskTimedOutEventAttributes || e.activityTaskCanceledEventAttributes) {
    return activityFailed(w, e, ev);
  }
  if (e.markerRecordedEventAttributes) return markerRecorded(w, e.markerRecordedEventAttributes, ev);
  if (e.workflowExecutionUpdateAcceptedEventAttributes) return updateAccepted(w, e.workflowExecutionUpdateAcceptedEventAttributes, ev);
  if (e.workflowExecutionUpdateCompletedEventAttributes) return updateCompleted(w, e.workflowExecutionUpdateCompletedEventAttributes, ev);
  if (e.workflowExecutionSignaledEventAttributes) return signaled(w, e.workflowExecutionSignaledEventAttributes, ev);
  if (e.workflowExecutionCancelRequestedEventAttributes) return cancelRequested(w, e.workflowExecutionCancelRequestedEventAttributes, ev);
  if (isReset(e.workflowTaskFailedEventAttributes)) return resetRecorded(w, e.workflowTaskFailedEventAttributes!, ev);
  if (e.startChildWorkflowExecutionInitiatedEventAttributes) return childStarted(w, e.startChildWorkflowExecutionInitiatedEventAttributes, ev);
  if (await childEnded(w, e)) return;
  return workflowEnded(w, e, ev);
}

// ---------------------------------------------------------------------------------------------------
// Workflow start and end
// ---------------------------------------------------------------------------------------------------

async function workflowStarted(w: Walk, a: Attributes<'workflowExecutionStartedEventAttributes'>, ev: EventRef): Promise<void> {
  const run = w.run;
  run.workflowType = a.workflowType?.name ?? undefined;
  run.taskQueue = a.taskQueue?.name ?? undefined;
  run.startedAt = ev.at;
  run.workflowId ??= (a as { workflowId?: string | null }).workflowId || undefined;
  run.runId ??= a.originalExecutionRunId || a.firstExecutionRunId || undefined;
  const memo = a.memo?.fields?.[AGENT_MEMO_KEY];
  const agent = memo ? await w.reader.value(memo) : undefined;
  run.agent = typeof agent === 'string' ? agent : run.workflowType;
  const input = await w.reader.values(a.input?.payloads);
  w.push<InputRecord>({ type: 'input', ...ev, input: input.length <= 1 ? input[0] : input, identity: a.identity || undefined });
  run.totals.userActions += 1;
}

async function workflowEnded(w: Walk, e: HistoryEvent, ev: EventRef): Promise<void> {
  const end = await endOf(e, w.reader);
  if (!end) return;
  w.run.status = end.status;
  w.run.closedAt = ev.at;
  w.push<EndRecord>({ type: 'end', ...ev, ...end });
  if (end.status === 'terminated') w.run.totals.userActions += 1;
}

async function endOf(e: HistoryEvent, reader: PayloadReader): Promise<Omit<EndRecord, 'n' | 'type' | 'eventId' | 'at'> | undefined> {
  if (e.workflowExecutionCompletedEventAttributes) {
    const values = await reader.values(e.workflowExecutionCompletedEventAttributes.result?.payloads);
    return { status: 'completed', result: values.length <= 1 ? values[0] : values };
  }
  if (e.workflowExecutionFailedEventAttributes) {
    const f = e.workflowExecutionFailedEventAttributes.failure;
    return { status: 'failed', failure: f ? failureText(f) : 'failed' };
  }
  if (e.workflowExecutionTerminatedEventAttributes) {
    const a = e.workflowExecutionTerminatedEventAttributes;
    return { status: 'terminated', reason: a.reason || undefined, identity: a.identity || undefined };
  }
  if (e.workflowExecutionCanceledEventAttributes) return { status: 'canceled' };
  if (e.workflowExecutionTimedOutEventAttributes) return { status: 'timed_out' };
  if (e.workflowExecutionContinuedAsNewEventAttributes) {
    return { status: 'continued_as_new', reason: `continued as run ${e.workflowExecutionContinuedAsNewEventAttributes.newExecutionRunId ?? '?'}` };
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------------
// What users sent: updates (fh.compact, fh.prompt, …), signals, cancellation
// ---------------------------------------------------------------------------------------------------

async function updateAccepted(w: Walk, a: Attributes<'workflowExecutionUpdateAcceptedEventAttributes'>, ev: EventRef): Promise<void> {
  const req = a.acceptedRequest;
  const name = req?.input?.name ?? '?';
  const rec = w.push<UpdateRecord>({
    type: 'update',
    ...ev,
    name,
    updateId: req?.meta?.updateId ?? undefined,
    identity: req?.meta?.identity || undefined,
    args: await w.reader.values(req?.input?.args?.payloads),
    manualCompaction: name === 'fh.compact',
    status: 'accepted',
  });
  w.updatesByAccepted.set(ev.eventId, rec);
  if (rec.manualCompaction) w.openManual.add(rec);
  if (name === 'fh.prompt') {
    const text = (rec.args[0] as { text?: unknown } | undefined)?.text;
    if (typeof text === 'string') {
      rec.prompt = text;
      w.promptsFromUpdates.push(text);
    }
  }
  w.run.totals.userActions += 1;
}

async function updateCompleted(w: Walk, a: Attributes<'workflowExecutionUpdateCompletedEventAttributes'>, ev: EventRef): Promise<void> {
  const rec = w.updatesByAccepted.get(toNumber(a.acceptedEventId) ?? -1);
  if (!rec) return;
  rec.completedAt = ev.at;
  if (a.outcome?.failure) {
    rec.status = 'failed';
    rec.error = failureText(a.outcome.failure);
  } else {
    rec.status = 'completed';
    const values = await w.reader.values(a.outcome?.success?.payloads);
    rec.result = values.length <= 1 ? values[0] : values;
    if (rec.manualCompaction && isPlain(rec.result) && ((rec.result as { compactedEntries?: number }).compactedEntries ?? 0) > 0) {
      w.run.totals.compactions += 1;
    }
  }
  w.openManual.delete(rec);
}

async function signaled(w: Walk, a: Attributes<'workflowExecutionSignaledEventAttributes'>, ev: EventRef): Promise<void> {
  w.push<SignalRecord>({
    type: 'signal',
    ...ev,
    name: a.signalName ?? '?',
    args: await w.reader.values(a.input?.payloads),
    identity: a.identity || undefined,
  });
  w.run.totals.userActions += 1;
}

const RESET_WORKFLOW = temporal.api.enums.v1.WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_RESET_WORKFLOW;

/** A reset's mark in the new run: its kept history ends with a workflow task failed for the reset. */
function isReset(a: Attributes<'workflowTaskFailedEventAttributes'> | null | undefined): boolean {
  return a?.cause === RESET_WORKFLOW;
}

function resetRecorded(w: Walk, a: Attributes<'workflowTaskFailedEventAttributes'>, ev: EventRef): void {
  w.push<RunResetRecord>({ type: 'run_reset', ...ev, reason: a.failure?.message || undefined, baseRunId: a.baseRunId || undefined, identity: a.identity || undefined });
  w.run.totals.userActions += 1;
}

function cancelRequested(w: Walk, a: Attributes<'workflowExecutionCancelRequestedEventAttributes'>, ev: EventRef): void {
  w.push<CancelRequestRecord>({ type: 'cancel_requested', ...ev, identity: a.identity || undefined, cause: a.cause || undefined });
  w.run.totals.userActions += 1;
}
