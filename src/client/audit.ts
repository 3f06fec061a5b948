/**
 * Audit transcript: what an agent run did, read from its Temporal history alone (nothing is run).
 *
 * Every model call (fhModel: model, token usage, stop reason, what it answered), every tool call
 * (fhTool: arguments and result), every compaction decision (the fhDecideCompaction local-activity
 * markers: estimate, threshold, cut, compact or not), every summary (fhSummarize), and everything a
 * user sent (the workflow input, signals, updates such as a manual `fh.compact`, cancellation and
 * termination requests), each with its timestamp and event id.
 *
 * Payloads are decoded with the default payload converter (or the given data converter). Payloads
 * offloaded to external storage are resolved through `store` / the data converter's external storage;
 * without one (or when the blob is gone) they show as "[offloaded]".
 */
import { defaultPayloadConverter, type DataConverter, type Payload, type PayloadConverter } from '@temporalio/common';
import {
  decodeReferencePayload,
  ExternalStorageRunner,
  isReferencePayload,
} from '@temporalio/common/lib/internal-non-workflow';
import type { temporal } from '@temporalio/proto';
import type {
  ModelActivityInput,
  ModelActivityResult,
  ResolveModelResult,
  SummarizeActivityInput,
  ToolActivityInput,
  ToolActivityResult,
} from '../activities/contract';
import { externalStorageFor } from '../activities/external-storage';
import type { TranscriptStore } from '../activities/transcript-store';
import type { CompactionDecision } from '../core/compaction/decide';
import type { Entry, Usage } from '../core/entries';
import { AGENT_MEMO_KEY } from './start';

type History = temporal.api.history.v1.IHistory;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
type Failure = temporal.api.failure.v1.IFailure;

export interface AuditOptions {
  /** The transcript store the workers use: resolves payloads offloaded to external storage. */
  store?: TranscriptStore;
  /** A data converter (payload converter, codecs, external storage) when the workers use a custom one. */
  dataConverter?: Pick<DataConverter, 'payloadCodecs' | 'externalStorage'> & { payloadConverter?: PayloadConverter };
  /** Characters of a tool result or text shown in the Markdown (the JSON keeps everything). Default 400. */
  truncateAt?: number;
  /** Known ids (histories do not always record them). */
  workflowId?: string;
  runId?: string;
}

/** A payload that lives in external storage and was not (or could not be) fetched. */
export interface OffloadedValue {
  $offloaded: { driver: string; key?: string; sizeBytes: number; error?: string };
}

export type ActivityStatus = 'completed' | 'failed' | 'timed_out' | 'canceled' | 'pending';

interface RecordBase {
  /** Position in the transcript, from 1. */
  n: number;
  /** The event that records it (the scheduled event for activities). */
  eventId: number;
  /** ISO time of that event. */
  at?: string;
}

export interface InputRecord extends RecordBase {
  type: 'input';
  /** The workflow input: what the user asked the agent to do. */
  input: unknown;
  identity?: string;
}

export interface PromptRecord extends RecordBase {
  type: 'prompt';
  /** A user message the session sent to the model (a prompt of the run). */
  text: string;
}

export interface ModelResolvedRecord extends RecordBase {
  type: 'model_resolved';
  requested?: string;
  model?: string;
  contextWindowTokens?: number;
  status: ActivityStatus;
}

export interface ModelCallRecord extends RecordBase {
  type: 'model_call';
  model: string;
  maxTokens: number;
  /** Transcript length sent: entries already in the store plus entries added since the last call. */
  context: { storedEntries: number; newEntries: number; summaries: number };
  /** System prompt and tool names, on the calls that carried them (the first, and after a store miss). */
  system?: string;
  tools?: string[];
  status: ActivityStatus;
  attempts?: number;
  completedAt?: string;
  completedEventId?: number;
  stopReason?: string | null;
  usage?: Usage;
  /** What the model answered: its text and the tools it asked for. */
  response?: { text: string; toolCalls: Array<{ id: string; name: string; input: unknown }> };
  error?: string;
}

export interface ToolCallRecord extends RecordBase {
  type: 'tool_call';
  name: string;
  callId: string;
  arguments: unknown;
  cwd?: string;
  status: ActivityStatus;
  attempts?: number;
  completedAt?: string;
  completedEventId?: number;
  isError?: boolean;
  /** The full result text (the Markdown shows `resultPreview`). */
  result?: string | OffloadedValue;
  resultPreview?: string;
  truncated?: boolean;
  error?: string;
}

export interface CompactionDecisionRecord extends RecordBase, Partial<CompactionDecision> {
  type: 'compaction_decision';
  /** Whether the decision could be read (the marker's result payload); false for a failed decision. */
  recorded: boolean;
  error?: string;
}

export interface SummaryRecord extends RecordBase {
  type: 'summary';
  /** What caused the compaction this summary belongs to. */
  trigger: 'threshold' | 'overflow' | 'manual' | 'unknown';
  model?: string;
  status: ActivityStatus;
  completedAt?: string;
  usage?: Usage;
  text?: string | OffloadedValue;
  /** The slice of conversation the summariser was given (full text in the JSON). */
  request?: string | OffloadedValue;
  error?: string;
}

export interface UpdateRecord extends RecordBase {
  type: 'update';
  name: string;
  updateId?: string;
  identity?: string;
  args: unknown[];
  /** A manual compaction requested through `fh.compact`. */
  manualCompaction: boolean;
  /** The prompt text of an `fh.prompt` update (a user talking to the running agent). */
  prompt?: string;
  status: 'accepted' | 'completed' | 'failed';
  completedAt?: string;
  result?: unknown;
  error?: string;
}

export interface SignalRecord extends RecordBase {
  type: 'signal';
  name: string;
  args: unknown[];
  identity?: string;
}

export interface CancelRequestRecord extends RecordBase {
  type: 'cancel_requested';
  identity?: string;
  cause?: string;
}

export interface ActivityRecord extends RecordBase {
  type: 'activity';
  name: string;
  input: unknown[];
  status: ActivityStatus;
  result?: unknown;
  error?: string;
}

export interface EndRecord extends RecordBase {
  type: 'end';
  status: RunStatus;
  result?: unknown;
  failure?: string;
  reason?: string;
  identity?: string;
}

export type AuditRecord =
  | InputRecord
  | PromptRecord
  | ModelResolvedRecord
  | ModelCallRecord
  | ToolCallRecord
  | CompactionDecisionRecord
  | SummaryRecord
  | UpdateRecord
  | SignalRecord
  | CancelRequestRecord
  | ActivityRecord
  | EndRecord;

export type RunStatus = 'running' | 'completed' | 'failed' | 'terminated' | 'canceled' | 'timed_out' | 'continued_as_new';

export interface AuditRun {
  workflowId?: string;
  runId?: string;
  /** The agent (memo `fh.agent`, else the workflow type). */
  agent?: string;
  workflowType?: string;
  taskQueue?: string;
  status: RunStatus;
  startedAt?: string;
  closedAt?: string;
  events: number;
  totals: {
    modelCalls: number;
    inputTokens: number;
    outputTokens: number;
    toolCalls: number;
    toolErrors: number;
    compactionDecisions: number;
    compactions: number;
    summaries: number;
    userActions: number;
  };
}

export interface AuditTranscript {
  json: { run: AuditRun; records: AuditRecord[] };
  markdown: string;
}

const DEFAULT_TRUNCATE = 400;

/** Renders a run from its history: `{ json: { run, records }, markdown }`. Runs nothing. */
export async function auditTranscript(history: History, opts: AuditOptions = {}): Promise<AuditTranscript> {
  const reader = new PayloadReader(opts);
  const truncateAt = opts.truncateAt ?? DEFAULT_TRUNCATE;
  const events = history.events ?? [];
  const records: AuditRecord[] = [];
  const byScheduled = new Map<number, AuditRecord>();
  const updatesByAccepted = new Map<number, UpdateRecord>();
  const push = <R extends AuditRecord>(r: Omit<R, 'n'>): R => {
    const rec = { n: records.length + 1, ...r } as R;
    records.push(rec);
    return rec;
  };

  const run: AuditRun = {
    workflowId: opts.workflowId,
    runId: opts.runId,
    status: 'running',
    events: events.length,
    totals: {
      modelCalls: 0,
      inputTokens: 0,
      outputTokens: 0,
      toolCalls: 0,
      toolErrors: 0,
      compactionDecisions: 0,
      compactions: 0,
      summaries: 0,
      userActions: 0,
    },
  };

  // Compaction context for summaries: what asked for the compaction they belong to.
  let pendingCompaction: 'threshold' | 'overflow' | undefined;
  let overflowSeen = false;
  /** Prompt texts users sent through fh.prompt, not yet seen in a model call (so they are listed once). */
  const promptsFromUpdates: string[] = [];
  let lastPrompt: { text: string; completed: boolean } | undefined;
  const openManual = new Set<UpdateRecord>();

  for (const e of events) {
    const eventId = num(e.eventId) ?? 0;
    const at = iso(e.eventTime);

    if (e.workflowExecutionStartedEventAttributes) {
      const a = e.workflowExecutionStartedEventAttributes;
      run.workflowType = a.workflowType?.name ?? undefined;
      run.taskQueue = a.taskQueue?.name ?? undefined;
      run.startedAt = at;
      run.workflowId ??= (a as { workflowId?: string | null }).workflowId || undefined;
      run.runId ??= a.originalExecutionRunId || a.firstExecutionRunId || undefined;
      const memo = a.memo?.fields?.[AGENT_MEMO_KEY];
      const agent = memo ? await reader.value(memo) : undefined;
      run.agent = typeof agent === 'string' ? agent : run.workflowType;
      const input = await reader.values(a.input?.payloads);
      push<InputRecord>({ type: 'input', eventId, at, input: input.length <= 1 ? input[0] : input, identity: a.identity || undefined });
      run.totals.userActions += 1;
      continue;
    }

    if (e.activityTaskScheduledEventAttributes) {
      const a = e.activityTaskScheduledEventAttributes;
      const name = a.activityType?.name ?? '?';
      const input = await reader.value(a.input?.payloads?.[0]);
      let rec: AuditRecord;
      if (name === 'fhModel' && isPlain(input)) {
        const mi = input as unknown as ModelActivityInput;
        const delta: Entry[] = Array.isArray(mi.delta) ? mi.delta : [];
        // A new prompt is the user entry the session just added (the last one sent); a retry resends it.
        const last = delta[delta.length - 1];
        const fromUpdate = last?.type === 'user' ? promptsFromUpdates.indexOf(last.text) : -1;
        if (fromUpdate >= 0) promptsFromUpdates.splice(fromUpdate, 1); // listed with its fh.prompt update
        else if (last?.type === 'user' && !(lastPrompt && !lastPrompt.completed && lastPrompt.text === last.text)) {
          // The prompt came before the compaction decision made for it: list it there.
          let pos = records.length;
          while (pos > 0 && (records[pos - 1]!.type === 'compaction_decision' || records[pos - 1]!.type === 'summary')) pos--;
          records.splice(pos, 0, { n: 0, type: 'prompt', eventId, at, text: last.text });
        }
        if (last?.type === 'user') lastPrompt = { text: last.text, completed: false };
        rec = push<ModelCallRecord>({
          type: 'model_call',
          eventId,
          at,
          model: mi.model,
          maxTokens: mi.maxTokens,
          context: {
            storedEntries: mi.base?.count ?? 0,
            newEntries: delta.length,
            summaries: delta.filter((d) => d.type === 'summary').length,
          },
          ...(mi.prelude?.value
            ? { system: mi.prelude.value.system, tools: (mi.prelude.value.tools ?? []).map((t) => t.name) }
            : {}),
          status: 'pending',
        });
        pendingCompaction = undefined;
        run.totals.modelCalls += 1;
      } else if (name === 'fhTool' && isPlain(input)) {
        const ti = input as unknown as ToolActivityInput;
        rec = push<ToolCallRecord>({
          type: 'tool_call',
          eventId,
          at,
          name: ti.name,
          callId: ti.callId,
          arguments: ti.input,
          cwd: ti.cwd,
          status: 'pending',
        });
        run.totals.toolCalls += 1;
      } else if (name === 'fhSummarize') {
        const si = isPlain(input) ? (input as unknown as SummarizeActivityInput) : undefined;
        const trigger: SummaryRecord['trigger'] = pendingCompaction
          ? pendingCompaction
          : overflowSeen
            ? 'overflow'
            : openManual.size > 0
              ? 'manual'
              : 'unknown';
        rec = push<SummaryRecord>({
          type: 'summary',
          eventId,
          at,
          trigger,
          model: si?.model,
          request: si ? si.userText : isOffloaded(input) ? input : undefined,
          status: 'pending',
        });
        run.totals.summaries += 1;
      } else if (name === 'fhResolveModel') {
        rec = push<ModelResolvedRecord>({
          type: 'model_resolved',
          eventId,
          at,
          requested: isPlain(input) ? (input as { model?: string }).model : undefined,
          status: 'pending',
        });
      } else {
        rec = push<ActivityRecord>({ type: 'activity', eventId, at, name, input: await reader.values(a.input?.payloads), status: 'pending' });
      }
      byScheduled.set(eventId, rec);
      continue;
    }

    if (e.activityTaskStartedEventAttributes) {
      const rec = byScheduled.get(num(e.activityTaskStartedEventAttributes.scheduledEventId) ?? -1) as { attempts?: number } | undefined;
      if (rec) rec.attempts = e.activityTaskStartedEventAttributes.attempt ?? undefined;
      continue;
    }

    if (e.activityTaskCompletedEventAttributes) {
      const a = e.activityTaskCompletedEventAttributes;
      const rec = byScheduled.get(num(a.scheduledEventId) ?? -1);
      if (!rec) continue;
      const result = await reader.value(a.result?.payloads?.[0]);
      const done = { status: 'completed' as const, completedAt: at, completedEventId: eventId };
      if (rec.type === 'model_call') {
        Object.assign(rec, done);
        if (isPlain(result)) {
          const r = result as unknown as ModelActivityResult;
          rec.model = r.model ?? rec.model;
          rec.stopReason = r.stopReason;
          rec.usage = r.usage;
          const content = r.entry?.content ?? [];
          rec.response = {
            text: content.map((b) => (b.type === 'text' ? b.text : '')).join(''),
            toolCalls: content.flatMap((b) => (b.type === 'tool_use' ? [{ id: b.id, name: b.name, input: b.input }] : [])),
          };
          run.totals.inputTokens += r.usage?.inputTokens ?? 0;
          run.totals.outputTokens += r.usage?.outputTokens ?? 0;
        } else if (isOffloaded(result)) {
          rec.error = describeValue(result, truncateAt);
        }
        if (lastPrompt) lastPrompt.completed = true;
        overflowSeen = false;
      } else if (rec.type === 'tool_call') {
        Object.assign(rec, done);
        if (isPlain(result)) {
          const r = result as unknown as ToolActivityResult;
          rec.isError = r.isError;
          rec.result = r.content;
          rec.resultPreview = truncate(r.content ?? '', truncateAt);
          rec.truncated = (r.content ?? '').length > truncateAt;
          if (r.isError) run.totals.toolErrors += 1;
        } else if (isOffloaded(result)) {
          rec.result = result;
          rec.resultPreview = describeValue(result, truncateAt);
          rec.truncated = true;
        }
      } else if (rec.type === 'summary') {
        Object.assign(rec, { status: 'completed', completedAt: at });
        if (isPlain(result)) {
          const r = result as { text?: string; usage?: Usage };
          rec.text = r.text;
          rec.usage = r.usage;
        } else if (isOffloaded(result)) {
          rec.text = result;
        }
      } else if (rec.type === 'model_resolved') {
        rec.status = 'completed';
        if (isPlain(result)) {
          const r = result as unknown as ResolveModelResult;
          rec.model = r.model;
          rec.contextWindowTokens = r.contextWindowTokens;
        }
      } else if (rec.type === 'activity') {
        rec.status = 'completed';
        rec.result = result;
      }
      continue;
    }

    const failed = e.activityTaskFailedEventAttributes ?? e.activityTaskTimedOutEventAttributes ?? e.activityTaskCanceledEventAttributes;
    if (failed) {
      const rec = byScheduled.get(num(failed.scheduledEventId) ?? -1) as (AuditRecord & { status?: ActivityStatus; error?: string }) | undefined;
      if (!rec) continue;
      const status: ActivityStatus = e.activityTaskFailedEventAttributes ? 'failed' : e.activityTaskTimedOutEventAttributes ? 'timed_out' : 'canceled';
      rec.status = status;
      const failure = 'failure' in failed ? (failed.failure as Failure | null | undefined) : undefined;
      rec.error = failure ? failureText(failure) : status === 'canceled' ? 'canceled' : status;
      if (rec.type === 'model_call') {
        Object.assign(rec, { completedAt: at, completedEventId: eventId });
        if (/context|too long|overflow/i.test(rec.error ?? '')) overflowSeen = true;
      }
      continue;
    }

    if (e.markerRecordedEventAttributes) {
      const m = e.markerRecordedEventAttributes;
      if (m.markerName !== 'core_local_activity') continue;
      const data = (await reader.value(m.details?.data?.payloads?.[0])) as { activity_type?: string; seq?: number } | undefined;
      if (data?.activity_type !== 'fhDecideCompaction') {
        push<ActivityRecord>({
          type: 'activity',
          eventId,
          at,
          name: `${data?.activity_type ?? '?'} (local)`,
          input: [],
          status: m.failure ? 'failed' : 'completed',
          result: m.details?.result?.payloads?.[0] ? await reader.value(m.details.result.payloads[0]) : undefined,
          ...(m.failure ? { error: failureText(m.failure) } : {}),
        });
        continue;
      }
      const result = m.details?.result?.payloads?.[0] ? await reader.value(m.details.result.payloads[0]) : undefined;
      run.totals.compactionDecisions += 1;
      if (isPlain(result)) {
        const d = result as unknown as CompactionDecision;
        push<CompactionDecisionRecord>({ type: 'compaction_decision', eventId, at, recorded: true, ...d });
        if (d.compact) {
          pendingCompaction = d.reason === 'overflow' ? 'overflow' : 'threshold';
          run.totals.compactions += 1;
        }
      } else {
        push<CompactionDecisionRecord>({
          type: 'compaction_decision',
          eventId,
          at,
          recorded: false,
          ...(m.failure ? { error: failureText(m.failure) } : isOffloaded(result) ? { error: describeValue(result, truncateAt) } : {}),
        });
      }
      continue;
    }

    if (e.workflowExecutionUpdateAcceptedEventAttributes) {
      const a = e.workflowExecutionUpdateAcceptedEventAttributes;
      const req = a.acceptedRequest;
      const name = req?.input?.name ?? '?';
      const rec = push<UpdateRecord>({
        type: 'update',
        eventId,
        at,
        name,
        updateId: req?.meta?.updateId ?? undefined,
        identity: req?.meta?.identity || undefined,
        args: await reader.values(req?.input?.args?.payloads),
        manualCompaction: name === 'fh.compact',
        status: 'accepted',
      });
      updatesByAccepted.set(eventId, rec);
      if (rec.manualCompaction) openManual.add(rec);
      if (name === 'fh.prompt') {
        const text = (rec.args[0] as { text?: unknown } | undefined)?.text;
        if (typeof text === 'string') {
          rec.prompt = text;
          promptsFromUpdates.push(text);
        }
      }
      run.totals.userActions += 1;
      continue;
    }

    if (e.workflowExecutionUpdateCompletedEventAttributes) {
      const a = e.workflowExecutionUpdateCompletedEventAttributes;
      const rec = updatesByAccepted.get(num(a.acceptedEventId) ?? -1);
      if (!rec) continue;
      rec.completedAt = at;
      if (a.outcome?.failure) {
        rec.status = 'failed';
        rec.error = failureText(a.outcome.failure);
      } else {
        rec.status = 'completed';
        const values = await reader.values(a.outcome?.success?.payloads);
        rec.result = values.length <= 1 ? values[0] : values;
        if (rec.manualCompaction && isPlain(rec.result) && ((rec.result as { compactedEntries?: number }).compactedEntries ?? 0) > 0) {
          run.totals.compactions += 1;
        }
      }
      openManual.delete(rec);
      continue;
    }

    if (e.workflowExecutionSignaledEventAttributes) {
      const a = e.workflowExecutionSignaledEventAttributes;
      push<SignalRecord>({
        type: 'signal',
        eventId,
        at,
        name: a.signalName ?? '?',
        args: await reader.values(a.input?.payloads),
        identity: a.identity || undefined,
      });
      run.totals.userActions += 1;
      continue;
    }

    if (e.workflowExecutionCancelRequestedEventAttributes) {
      const a = e.workflowExecutionCancelRequestedEventAttributes;
      push<CancelRequestRecord>({ type: 'cancel_requested', eventId, at, identity: a.identity || undefined, cause: a.cause || undefined });
      run.totals.userActions += 1;
      continue;
    }

    const end = await endOf(e, reader);
    if (end) {
      run.status = end.status;
      run.closedAt = at;
      push<EndRecord>({ type: 'end', eventId, at, ...end });
      if (end.status === 'terminated') run.totals.userActions += 1;
    }
  }

  records.forEach((r, i) => (r.n = i + 1));
  const json = { run, records };
  return { json, markdown: renderAuditMarkdown(json, { truncateAt }) };
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
// Payloads
// ---------------------------------------------------------------------------------------------------

class PayloadReader {
  private readonly converter: PayloadConverter;
  private readonly codecs: NonNullable<DataConverter['payloadCodecs']>;
  private readonly runner: ExternalStorageRunner | undefined;

  constructor(opts: AuditOptions) {
    this.converter = opts.dataConverter?.payloadConverter ?? defaultPayloadConverter;
    this.codecs = opts.dataConverter?.payloadCodecs ?? [];
    const external = opts.dataConverter?.externalStorage ?? (opts.store ? externalStorageFor(opts.store) : undefined);
    this.runner = external ? new ExternalStorageRunner(external) : undefined;
  }

  async values(payloads: Payload[] | null | undefined): Promise<unknown[]> {
    return Promise.all((payloads ?? []).map((p) => this.value(p)));
  }

  /** Decodes one payload: external storage first, then codecs (in reverse), then the converter. */
  async value(payload: Payload | null | undefined): Promise<unknown> {
    if (!payload) return undefined;
    let p = payload;
    if (isReferencePayload(p)) {
      const ref = safeRef(p);
      if (!this.runner) return offloaded(ref);
      try {
        [p] = (await this.runner.retrieve([p])) as [Payload];
      } catch (err) {
        return offloaded(ref, err instanceof Error ? err.message : String(err));
      }
    }
    try {
      for (const codec of [...this.codecs].reverse()) [p] = (await codec.decode([p])) as [Payload];
      return this.converter.fromPayload(p);
    } catch (err) {
      return { $undecodable: err instanceof Error ? err.message : String(err) };
    }
  }
}

function safeRef(p: Payload): { driverName: string; claimData: Record<string, string>; sizeBytes: number } {
  try {
    return decodeReferencePayload(p);
  } catch {
    return { driverName: '?', claimData: {}, sizeBytes: 0 };
  }
}

function offloaded(ref: { driverName: string; claimData: Record<string, string>; sizeBytes: number }, error?: string): OffloadedValue {
  return {
    $offloaded: {
      driver: ref.driverName,
      ...(ref.claimData.key ? { key: ref.claimData.key } : {}),
      sizeBytes: ref.sizeBytes,
      ...(error ? { error } : {}),
    },
  };
}

export function isOffloaded(v: unknown): v is OffloadedValue {
  return typeof v === 'object' && v !== null && '$offloaded' in v;
}

function isPlain(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !isOffloaded(v) && !('$undecodable' in v);
}

function failureText(f: Failure): string {
  const parts: string[] = [];
  let cur: Failure | null | undefined = f;
  for (let depth = 0; cur && depth < 5; depth++) {
    const type = cur.applicationFailureInfo?.type;
    if (cur.message) parts.push(type ? `${cur.message} [${type}]` : cur.message);
    cur = cur.cause;
  }
  return parts.join(': ') || 'failed';
}

function num(v: unknown): number | undefined {
  if (v === null || v === undefined) return undefined;
  const n = typeof v === 'object' && 'toNumber' in (v as object) ? (v as { toNumber(): number }).toNumber() : Number(v);
  return Number.isFinite(n) ? n : undefined;
}

/** A protobuf Timestamp as ISO text (seconds may be a Long, a number or a string, depending on the decoder). */
function iso(ts: { seconds?: unknown; nanos?: number | null } | null | undefined): string | undefined {
  if (!ts) return undefined;
  const seconds = num(ts.seconds) ?? 0;
  const ms = seconds * 1000 + Math.floor((ts.nanos ?? 0) / 1e6);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : undefined;
}

// ---------------------------------------------------------------------------------------------------
// Markdown
// ---------------------------------------------------------------------------------------------------

export function truncate(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n)}… (${s.length - n} more characters)`;
}

function describeValue(v: unknown, n: number): string {
  if (isOffloaded(v)) {
    const o = v.$offloaded;
    return `[offloaded: ${formatBytes(o.sizeBytes)} in external storage${o.key ? ` (${o.key})` : ''}${o.error ? `; not retrieved: ${o.error}` : '; pass the store to read it'}]`;
  }
  if (typeof v === 'string') return truncate(v, n);
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : truncate(s, n);
}

function formatBytes(b: number): string {
  return b >= 1024 * 1024 ? `${(b / 1024 / 1024).toFixed(1)} MB` : b >= 1024 ? `${(b / 1024).toFixed(1)} KB` : `${b} B`;
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

function time(at: string | undefined): string {
  return at ? at.replace('T', ' ').replace(/\.(\d{3})\d*Z$/, '.$1Z') : '?';
}

function quote(text: string): string {
  return text
    .split('\n')
    .map((l) => `> ${l}`)
    .join('\n');
}

function fence(text: string): string {
  const ticks = text.includes('```') ? '````' : '```';
  return `${ticks}\n${text}\n${ticks}`;
}

function events(r: { eventId: number; completedEventId?: number }): string {
  return r.completedEventId ? `events ${r.eventId}–${r.completedEventId}` : `event ${r.eventId}`;
}

/** The Markdown view of an audit (what `fh history <id>` prints). */
export function renderAuditMarkdown(audit: { run: AuditRun; records: AuditRecord[] }, opts: { truncateAt?: number } = {}): string {
  const n = opts.truncateAt ?? DEFAULT_TRUNCATE;
  const { run, records } = audit;
  const t = run.totals;
  const out: string[] = [];
  out.push(`# Audit: ${run.agent ?? run.workflowType ?? 'agent'} — ${run.workflowId ?? '(workflow id not recorded)'}`);
  out.push('');
  out.push(`- Run: ${run.runId ?? '?'} · task queue ${run.taskQueue ?? '?'} · ${run.events} history events`);
  out.push(`- Started ${time(run.startedAt)} · ${run.status}${run.closedAt ? ` ${time(run.closedAt)}` : ' (still running)'}`);
  out.push(
    `- ${t.modelCalls} model call${t.modelCalls === 1 ? '' : 's'} (${t.inputTokens} input / ${t.outputTokens} output tokens) · ` +
      `${t.toolCalls} tool call${t.toolCalls === 1 ? '' : 's'}${t.toolErrors ? ` (${t.toolErrors} failed)` : ''} · ` +
      `${t.compactionDecisions} compaction decision${t.compactionDecisions === 1 ? '' : 's'}, ${t.compactions} compaction${t.compactions === 1 ? '' : 's'} · ` +
      `${t.summaries} summar${t.summaries === 1 ? 'y' : 'ies'} · ${t.userActions} user action${t.userActions === 1 ? '' : 's'}`,
  );
  out.push('');

  for (const r of records) {
    const head = (title: string, ev = `event ${r.eventId}`) => `## ${r.n}. ${title} — ${time(r.at)} (${ev})`;
    switch (r.type) {
      case 'input':
        out.push(head('Input (from the user who started the run)'));
        out.push(fence(truncate(JSON.stringify(r.input, null, 2) ?? 'undefined', n * 4)));
        break;
      case 'prompt':
        out.push(head('Prompt'));
        out.push(quote(truncate(r.text, n * 4)));
        break;
      case 'model_resolved':
        out.push(
          head(
            `Model resolved: ${r.model ?? r.requested ?? '?'}${r.contextWindowTokens ? ` (context window ${r.contextWindowTokens} tokens)` : ''}`,
          ),
        );
        break;
      case 'model_call': {
        out.push(head(`Model call: ${r.model}`, events(r)));
        const lines = [
          `- Status: ${r.status}${r.attempts && r.attempts > 1 ? ` after ${r.attempts} attempts` : ''}${r.error ? ` — ${r.error}` : ''}`,
          `- Context: ${plural(r.context.storedEntries + r.context.newEntries, 'entry', 'entries')} (${r.context.storedEntries} stored + ${r.context.newEntries} new${r.context.summaries ? `, ${plural(r.context.summaries, 'summary', 'summaries')}` : ''})`,
        ];
        if (r.usage) {
          lines.push(
            `- Tokens: ${r.usage.inputTokens} input / ${r.usage.outputTokens} output${r.usage.cacheReadInputTokens ? ` (${r.usage.cacheReadInputTokens} cached)` : ''} · stop reason: ${r.stopReason ?? 'none'}`,
          );
        }
        if (r.tools) lines.push(`- Tools offered: ${r.tools.length ? r.tools.join(', ') : '(none)'}`);
        if (r.response?.text) lines.push(`- Reply:\n\n${quote(truncate(r.response.text, n))}\n`);
        for (const c of r.response?.toolCalls ?? []) lines.push(`- Asks for tool \`${c.name}\` (${c.id}) with \`${truncate(JSON.stringify(c.input), n)}\``);
        out.push(lines.join('\n'));
        break;
      }
      case 'tool_call': {
        out.push(head(`Tool call: ${r.name}`, events(r)));
        const lines = [
          `- Call id: ${r.callId}`,
          `- Arguments: \`${truncate(JSON.stringify(r.arguments) ?? 'undefined', n)}\``,
          `- Status: ${r.status}${r.isError ? ' (the tool reported an error)' : ''}${r.attempts && r.attempts > 1 ? ` after ${r.attempts} attempts` : ''}${r.error ? ` — ${r.error}` : ''}`,
        ];
        if (r.result !== undefined) {
          const full = typeof r.result === 'string' ? r.result.length : undefined;
          lines.push(`- Result${full !== undefined ? ` (${full} characters${r.truncated ? ', truncated here; full text in --json' : ''})` : ''}:`);
          out.push(lines.join('\n'));
          out.push(fence(r.resultPreview ?? describeValue(r.result, n)));
        } else {
          out.push(lines.join('\n'));
        }
        break;
      }
      case 'compaction_decision': {
        if (!r.recorded) {
          out.push(head('Compaction decision: not recorded'));
          out.push(`- ${r.error ?? 'the decision failed'}`);
          break;
        }
        out.push(head(`Compaction decision: ${r.compact ? `compact (${r.reason})` : 'no compaction'}`));
        out.push(
          [
            `- Why: ${r.why}`,
            `- Estimate: ${r.estimatedTokens} tokens (${r.estimateMethod}), ${r.usagePercent}% of the ${r.contextWindowTokens}-token window; threshold ${r.threshold}`,
            `- Cut: ${r.cut} of ${r.entriesBefore} entries (${r.keptEntries} kept)${r.warn ? ' · context window warning' : ''}${r.ineffectiveSkip ? ' · skipped: the last compaction was ineffective' : ''}`,
          ].join('\n'),
        );
        break;
      }
      case 'summary': {
        out.push(head(`Compaction summary (${r.trigger})${r.model ? `: ${r.model}` : ''}`));
        const lines = [`- Status: ${r.status}${r.error ? ` — ${r.error}` : ''}`];
        if (r.usage) lines.push(`- Tokens: ${r.usage.inputTokens} input / ${r.usage.outputTokens} output`);
        if (r.request !== undefined) lines.push(`- Summarised: ${typeof r.request === 'string' ? `${r.request.length} characters of conversation` : describeValue(r.request, n)}`);
        out.push(lines.join('\n'));
        if (r.text !== undefined) out.push(quote(describeValue(r.text, n * 2)));
        break;
      }
      case 'update': {
        const title = r.manualCompaction
          ? 'Manual compaction requested (update fh.compact)'
          : r.prompt !== undefined
            ? 'Prompt from a user (update fh.prompt)'
            : `Update ${r.name}`;
        out.push(head(title));
        const lines = [`- From: ${r.identity ?? 'unknown'}${r.updateId ? ` · update id ${r.updateId}` : ''}`];
        if (r.prompt !== undefined) lines.push(`- Prompt:\n\n${quote(truncate(r.prompt, n * 4))}\n`);
        else lines.push(`- Arguments: \`${truncate(JSON.stringify(r.args), n)}\``);
        lines.push(`- Status: ${r.status}${r.completedAt ? ` ${time(r.completedAt)}` : ''}${r.error ? ` — ${r.error}` : ''}`);
        if (r.result !== undefined) {
          if (r.prompt !== undefined && typeof r.result === 'string') lines.push(`- Reply:\n\n${quote(truncate(r.result, n))}\n`);
          else lines.push(`- Result: \`${describeValue(r.result, n)}\``);
        }
        out.push(lines.join('\n'));
        break;
      }
      case 'signal':
        out.push(head(r.name === 'fh.close' ? 'Close requested (signal fh.close: stop serving prompts)' : `Signal ${r.name}`));
        out.push(`- From: ${r.identity ?? 'unknown'}\n- Arguments: \`${truncate(JSON.stringify(r.args), n)}\``);
        break;
      case 'cancel_requested':
        out.push(head('Cancellation requested'));
        out.push(`- From: ${r.identity ?? 'unknown'}${r.cause ? ` · ${r.cause}` : ''}`);
        break;
      case 'activity':
        out.push(head(`Activity ${r.name}`));
        out.push(`- Status: ${r.status}${r.error ? ` — ${r.error}` : ''}${r.result !== undefined ? `\n- Result: \`${describeValue(r.result, n)}\`` : ''}`);
        break;
      case 'end':
        out.push(head(`Run ${r.status}`));
        if (r.result !== undefined) out.push(fence(truncate(JSON.stringify(r.result, null, 2) ?? 'undefined', n * 4)));
        if (r.failure) out.push(`- Failure: ${r.failure}`);
        if (r.reason) out.push(`- Reason: ${r.reason}${r.identity ? ` (by ${r.identity})` : ''}`);
        break;
    }
    out.push('');
  }
  if (run.status === 'running') out.push('_The run is still going: this transcript ends at the latest recorded event._\n');
  return out.join('\n');
}
