/**
 * Activity events into records: scheduled (a record by activity type: model call, tool call, summary,
 * model lookup, any other activity), started (attempts), completed (the result, by type), and failed,
 * timed out or canceled.
 */
import { DEFAULT_CONNECTION } from '../core/connection-name';
import type { temporal } from '@temporalio/proto';
import type {
  ModelActivityInput,
  ModelActivityReply,
  ModelActivityResult,
  ResolveModelResult,
  SummarizeActivityInput,
  ToolActivityInput,
  ToolActivityResult,
} from '../wire/activity-contract';
import { assistantText, type Entry, type Usage } from '../core/entries';
import { failureText, toNumber } from './history-fields';
import { describeValue, truncate } from './markdown';
import { isOffloaded, isPlain } from './payloads';
import { decisionRecorded } from './local-activities';
import { quietDecision, type DecisionFacts } from '../core/context/compaction/decide';
import { canonicalJson, hashString } from '../core/hash';
import type { ToolSpec } from '../core/tools-spec';
import type { ActivityRecord, ActivityStatus, AuditRecord, AuditRun, ModelCallRecord, ModelResolvedRecord, SummarizeCallRecord, SummaryRecord, TitleRecord, ToolCallRecord } from './records';
import { isTitleRequest } from '../core/sessions/titles';
import { isTransferRequest } from '../core/context/reset';
import type { Attributes, EventRef, HistoryEvent, Walk } from './walk';

type Failure = temporal.api.failure.v1.IFailure;

import { addCacheAccounts, cacheAccount } from './cache';
import { callCostUsd, modelInfo } from '../core/model-table';

export async function activityScheduled(w: Walk, a: Attributes<'activityTaskScheduledEventAttributes'>, ev: EventRef): Promise<void> {
  const name = a.activityType?.name ?? '?';
  const input = await w.reader.value(a.input?.payloads?.[0]);
  let rec: AuditRecord;
  if (name === 'fhModel' && isPlain(input)) rec = modelScheduled(w, input as unknown as ModelActivityInput, ev);
  else if (name === 'fhTool' && isPlain(input)) rec = toolScheduled(w, input as unknown as ToolActivityInput, ev);
  else if (name === 'fhSummarize' && isPlain(input) && isTitleRequest((input as { system?: unknown }).system)) rec = titleScheduled(w, input as unknown as SummarizeActivityInput, ev);
  else if (name === 'fhSummarize') rec = summaryScheduled(w, input, ev);
  else if (name === 'fhStorePrelude' && isPlain(input)) {
    // Since the fh-prelude-first patch the prelude is stored ahead of the first model call using it:
    // that call's record shows it, as it did when the call carried it.
    const value = input as unknown as { system?: string; tools: ToolSpec[] };
    if (!storedPreludes.has(w)) storedPreludes.set(w, new Map());
    storedPreludes.get(w)!.set(hashString(canonicalJson(value)), value);
    rec = w.push<ActivityRecord>({ type: 'activity', ...ev, name, input: await w.reader.values(a.input?.payloads), status: 'pending' });
  }
  else if (name === 'fhResolveModel') {
    const ri = isPlain(input) ? (input as { model?: string; contextWindowTokens?: number; connection?: string }) : {};
    rec = w.push<ModelResolvedRecord>({
      type: 'model_resolved',
      ...ev,
      connection: ri.connection ?? DEFAULT_CONNECTION,
      requested: ri.model,
      // The agent's own window travels in the input; the activity then looks nothing up.
      ...(ri.contextWindowTokens !== undefined ? { contextWindowTokens: ri.contextWindowTokens, contextWindowSource: 'agent' as const } : {}),
      status: 'pending',
    });
  } else {
    rec = w.push<ActivityRecord>({ type: 'activity', ...ev, name, input: await w.reader.values(a.input?.payloads), status: 'pending' });
  }
  w.byScheduled.set(ev.eventId, rec);
}

/** The decision facts a model call was scheduled with: a result recording a quiet decision is rebuilt from them. */
const scheduledFacts = new WeakMap<ModelCallRecord, DecisionFacts>();

/** Preludes stored by fhStorePrelude, by hash, until the first model call that uses them. */
const storedPreludes = new WeakMap<Walk, Map<string, { system?: string; tools: ToolSpec[] }>>();

function modelScheduled(w: Walk, mi: ModelActivityInput, ev: EventRef): ModelCallRecord {
  const hash = mi.prelude?.hash;
  const prelude = mi.prelude?.value ?? (hash !== undefined ? storedPreludes.get(w)?.get(hash) : undefined);
  if (hash !== undefined) storedPreludes.get(w)?.delete(hash);
  const delta: Entry[] = Array.isArray(mi.delta) ? mi.delta : [];
  notePrompt(w, delta, ev);
  const rec = w.push<ModelCallRecord>({
    type: 'model_call',
    ...ev,
    connection: mi.connection ?? DEFAULT_CONNECTION,
    model: mi.model,
    maxTokens: mi.maxTokens,
    context: {
      storedEntries: mi.base?.count ?? 0,
      newEntries: delta.length,
      summaries: delta.filter((d) => d.type === 'summary').length,
    },
    ...(mi.contextManagement ? { contextManagement: { edits: mi.contextManagement.edits.map((e) => e.type), applied: [] } } : {}),
    ...(prelude ? { system: prelude.system, tools: (prelude.tools ?? []).map((t) => t.name) } : {}),
    status: 'pending',
  });
  w.pendingCompaction = undefined;
  w.run.totals.modelCalls += 1;
  if (mi.decide) scheduledFacts.set(rec, mi.decide);
  return rec;
}

/** Lists the prompt a model call sends, once: not again for a retry, nor for a prompt listed with its fh.prompt update. */
function notePrompt(w: Walk, delta: Entry[], ev: EventRef): void {
  // A new prompt is the user entry the session just added (the last one sent); a retry resends it.
  const last = delta[delta.length - 1];
  if (last?.type !== 'user') return;
  const fromUpdate = w.promptsFromUpdates.indexOf(last.text);
  if (fromUpdate >= 0) w.promptsFromUpdates.splice(fromUpdate, 1); // listed with its fh.prompt update
  else if (!(w.lastPrompt && !w.lastPrompt.completed && w.lastPrompt.text === last.text)) {
    // The prompt came before the compaction decision made for it: list it there.
    const records = w.records;
    let pos = records.length;
    while (pos > 0 && (records[pos - 1]!.type === 'compaction_decision' || records[pos - 1]!.type === 'summary')) pos--;
    records.splice(pos, 0, { n: 0, type: 'prompt', ...ev, text: last.text, ...(last.attachments?.length ? { attachments: last.attachments } : {}) });
  }
  w.lastPrompt = { text: last.text, completed: false };
}

function toolScheduled(w: Walk, ti: ToolActivityInput, ev: EventRef): ToolCallRecord {
  const rec = w.push<ToolCallRecord>({
    type: 'tool_call',
    ...ev,
    name: ti.name,
    callId: ti.callId,
    arguments: ti.input,
    cwd: ti.cwd,
    status: 'pending',
  });
  w.run.totals.toolCalls += 1;
  return rec;
}

function summaryScheduled(w: Walk, input: unknown, ev: EventRef): SummaryRecord {
  const si = isPlain(input) ? (input as unknown as SummarizeActivityInput) : undefined;
  const rec = w.push<SummaryRecord>({
    type: 'summary',
    ...ev,
    trigger: isTransferRequest(si?.system) ? 'reset' : summaryTrigger(w),
    ...(si ? { connection: si.connection ?? DEFAULT_CONNECTION } : {}),
    model: si?.model,
    request: si ? si.userText : isOffloaded(input) ? input : undefined,
    status: 'pending',
  });
  w.run.totals.summaries += 1;
  return rec;
}

function titleScheduled(w: Walk, input: SummarizeActivityInput, ev: EventRef): TitleRecord {
  return w.push<TitleRecord>({ type: 'title', ...ev, connection: input.connection ?? DEFAULT_CONNECTION, model: input.model, status: 'pending' });
}

/** What asked for the compaction a summary belongs to. */
function summaryTrigger(w: Walk): SummaryRecord['trigger'] {
  if (w.pendingCompaction) return w.pendingCompaction;
  if (w.overflowSeen) return 'overflow';
  return w.openManual.size > 0 ? 'manual' : 'unknown';
}

export function activityStarted(w: Walk, a: Attributes<'activityTaskStartedEventAttributes'>): void {
  const rec = w.byScheduled.get(toNumber(a.scheduledEventId) ?? -1) as { attempts?: number } | undefined;
  if (rec) rec.attempts = a.attempt ?? undefined;
}

export async function activityCompleted(w: Walk, a: Attributes<'activityTaskCompletedEventAttributes'>, ev: EventRef): Promise<void> {
  const rec = w.byScheduled.get(toNumber(a.scheduledEventId) ?? -1);
  if (!rec) return;
  const result = await w.reader.value(a.result?.payloads?.[0]);
  if (rec.type === 'model_call') modelCompleted(w, rec, result, ev);
  else if (rec.type === 'tool_call') toolCompleted(w, rec, result, ev);
  else if (rec.type === 'summary') summaryCompleted(w, rec, result, ev);
  else if (rec.type === 'title') titleCompleted(w, rec, result, ev);
  else if (rec.type === 'model_resolved') resolveCompleted(rec, result);
  else if (rec.type === 'activity') {
    rec.status = 'completed';
    rec.result = result;
  }
}

function completion(ev: EventRef) {
  return { status: 'completed' as const, completedAt: ev.at, completedEventId: ev.eventId };
}

function modelCompleted(w: Walk, rec: ModelCallRecord, result: unknown, ev: EventRef): void {
  Object.assign(rec, completion(ev));
  // A quiet decision is recorded as a flag (quietDecision): the same decision, rebuilt from the facts sent.
  const facts = scheduledFacts.get(rec);
  if (isPlain(result) && (result as { quietDecision?: true }).quietDecision && facts && !(result as unknown as ModelActivityResult).decision) {
    result = { ...(result as object), decision: quietDecision(facts) };
  }
  if (isPlain(result) && (result as unknown as ModelActivityResult).decision) {
    const { decision, entry } = result as unknown as ModelActivityResult;
    w.run.totals.compactionDecisions += 1;
    // No reply: the decision was to compact, and this activity made no model call.
    decisionRecorded(w, decision!, ev, { at: rec, how: entry === undefined ? 'replace' : 'before' });
    if (entry === undefined) {
      w.run.totals.modelCalls -= 1;
      return;
    }
  }
  if (isPlain(result)) {
    const r = result as unknown as ModelActivityReply;
    rec.model = r.model ?? rec.model;
    rec.stopReason = r.stopReason;
    rec.usage = r.usage;
    if (r.usage) {
      rec.cache = cacheAccount(r.usage);
      w.run.totals.cache = addCacheAccounts(w.run.totals.cache, rec.cache);
      // At list prices: the app's own rows (init({ models })) live in its code, which an audit does not run.
      if (rec.model) {
        rec.costUsd = callCostUsd(r.usage, modelInfo(rec.model));
        const cost = w.run.totals.cost;
        if (rec.costUsd !== null) cost.pricedUsd += rec.costUsd;
        else if ((cost.unpricedCalls += 1) && !cost.unpricedModels.includes(rec.model)) cost.unpricedModels.push(rec.model);
      }
    }
    if (r.contextManagement) {
      const applied = r.contextManagement.applied ?? [];
      rec.contextManagement = { edits: rec.contextManagement?.edits ?? [], applied };
      const sc = w.run.totals.serverContext;
      for (const e of applied) {
        sc.edits += 1;
        sc.clearedToolUses += e.clearedToolUses ?? 0;
        sc.clearedInputTokens += e.clearedInputTokens;
        if (e.type === 'compact_20260112') sc.compactions += 1;
      }
    }
    const content = r.entry?.content ?? [];
    rec.response = {
      text: assistantText({ type: 'assistant', content }),
      toolCalls: content.flatMap((b) => (b.type === 'tool_use' ? [{ id: b.id, name: b.name, input: b.input }] : [])),
    };
    w.run.totals.inputTokens += r.usage?.inputTokens ?? 0;
    w.run.totals.outputTokens += r.usage?.outputTokens ?? 0;
  } else if (isOffloaded(result)) {
    rec.error = describeValue(result, w.truncateAt);
  }
  if (w.lastPrompt) w.lastPrompt.completed = true;
  w.overflowSeen = false;
}

function toolCompleted(w: Walk, rec: ToolCallRecord, result: unknown, ev: EventRef): void {
  Object.assign(rec, completion(ev));
  if (isPlain(result)) {
    const r = result as unknown as ToolActivityResult;
    rec.isError = r.isError;
    rec.result = r.content;
    rec.resultPreview = truncate(r.content ?? '', w.truncateAt);
    rec.truncated = (r.content ?? '').length > w.truncateAt;
    if (r.isError) w.run.totals.toolErrors += 1;
  } else if (isOffloaded(result)) {
    rec.result = result;
    rec.resultPreview = describeValue(result, w.truncateAt);
    rec.truncated = true;
  }
}

function summaryCompleted(w: Walk, rec: SummaryRecord, result: unknown, ev: EventRef): void {
  summarizeCompleted(rec, result, ev, w.run.totals.summarizer);
}

function titleCompleted(w: Walk, rec: TitleRecord, result: unknown, ev: EventRef): void {
  summarizeCompleted(rec, result, ev, w.run.totals.titles);
}

/** A summarisation call's reply on its record, and its tokens in the run's bucket for that kind of call. */
function summarizeCompleted(rec: SummarizeCallRecord, result: unknown, ev: EventRef, bucket: AuditRun['totals']['summarizer']): void {
  Object.assign(rec, { status: 'completed', completedAt: ev.at });
  bucket.calls += 1;
  if (isPlain(result)) {
    const r = result as { text?: string; usage?: Usage };
    rec.text = r.text;
    rec.usage = r.usage;
    bucket.inputTokens += r.usage?.inputTokens ?? 0;
    bucket.outputTokens += r.usage?.outputTokens ?? 0;
  } else if (isOffloaded(result)) {
    rec.text = result;
  }
}

function resolveCompleted(rec: ModelResolvedRecord, result: unknown): void {
  rec.status = 'completed';
  if (isPlain(result)) {
    const r = result as unknown as ResolveModelResult;
    rec.model = r.model;
    if (rec.contextWindowSource !== 'agent') {
      rec.contextWindowTokens = r.contextWindowTokens;
      rec.contextWindowSource = r.contextWindowTokens !== undefined ? 'models_api' : 'unknown';
    }
    if (r.strategy) rec.strategy = { strategy: r.strategy.strategy, why: r.strategy.why };
  }
}

/** An activity failed, timed out or was canceled. */
export function activityFailed(w: Walk, e: HistoryEvent, ev: EventRef): void {
  const failed = (e.activityTaskFailedEventAttributes ?? e.activityTaskTimedOutEventAttributes ?? e.activityTaskCanceledEventAttributes)!;
  const rec = w.byScheduled.get(toNumber(failed.scheduledEventId) ?? -1) as (AuditRecord & { status?: ActivityStatus; error?: string }) | undefined;
  if (!rec) return;
  const status: ActivityStatus = e.activityTaskFailedEventAttributes ? 'failed' : e.activityTaskTimedOutEventAttributes ? 'timed_out' : 'canceled';
  rec.status = status;
  const failure = 'failure' in failed ? (failed.failure as Failure | null | undefined) : undefined;
  rec.error = failure ? failureText(failure) : status === 'canceled' ? 'canceled' : status;
  if (rec.type === 'model_call') {
    Object.assign(rec, { completedAt: ev.at, completedEventId: ev.eventId });
    if (/context|too long|overflow/i.test(rec.error ?? '')) w.overflowSeen = true;
  }
}
