/**
 * Explaining a failed replay: the first point where the recorded run and the current code diverge,
 * both sides named from the commands history recorded and the commands the code issued (the trace),
 * in plain words with what to do about it.
 */
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { toNumber } from './history-fields';
import type { History } from './history-file';
import type { ReplayCommand, ReplayResult } from './replay-types';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

interface RecordedCommand extends ReplayCommand {
  eventId: number;
}

type Explained = Omit<Extract<ReplayResult, { ok: false }>, 'ok' | 'workflowId' | 'events' | 'source'>;

/** Turns a replay error into the divergence point and a plain explanation (exported for tests). */
export function explainReplayFailure(error: Error, history: History, trace?: ReplayCommand[]): Explained {
  const message = error.message;
  const core = /Nondeterminism error: (.*?)(?:", source:|$)/s.exec(message)?.[1] ?? message;
  const isNondeterminism = error.name === 'DeterminismViolationError' || /nondeterminism/i.test(message);
  const recordedCmds = recordedCommands(history);
  const coreEventId = toNumber(/HistoryEvent\(id: (\d+)/.exec(core)?.[1]);

  if (!isNondeterminism) {
    // A module without the run's agent fails the run's first workflow task (UnknownAgentError).
    const missing = unknownAgent(message);
    if (missing) return missing;
    const taskFailure = /workflow task failure/i.test(message);
    const detail = /Details: (.*)$/s.exec(message)?.[1]?.trim() ?? message;
    const hint = /missing from the store|ExternalStorage/i.test(message)
      ? ' The history has payloads offloaded to external storage: replay where the store the workers use is reachable (FH_STORE_DIR / --store-dir).'
      : taskFailure
        ? ' A worker running this code would fail the same workflow task and retry it until the code is fixed.'
        : '';
    return {
      kind: taskFailure ? 'workflow_task_failure' : 'replay_error',
      error: message,
      explanation: `${taskFailure ? 'The workflow code failed while replaying the recorded run' : 'Replay failed'}: ${firstLine(detail)}.${hint}`,
    };
  }

  // The SDK's own error line ([TMPRL…]), without the bridge's wrapping.
  const sdkError = /message: "(\[TMPRL\d+\][^"]*)"/.exec(message)?.[1] ?? message;
  let eventId = coreEventId;
  let recorded: RecordedCommand | undefined = eventId !== undefined ? recordedCmds.find((c) => c.eventId === eventId) : undefined;
  let current: ReplayCommand | undefined;

  if (trace) {
    const d = firstDivergence(recordedCmds, trace);
    if (d && (eventId === undefined || !recorded || d.recorded.eventId === eventId)) {
      eventId = d.recorded.eventId;
      recorded = d.recorded;
      current = d.current;
    } else if (recorded) {
      current = codeCommandFor(recorded, trace) ?? firstUnmatched(recordedCmds, trace) ?? { kind: 'other' };
    }
  } else {
    // Without a trace, the SDK's own wording is all there is to say about the code's side.
    const m = /Activity type of scheduled event '([^']*)' does not match activity type of activity command '([^']*)'/.exec(core);
    if (m) {
      recorded ??= recordedCmds.find((c) => c.kind === 'activity' && c.name === m[1]);
      current = { kind: 'activity', name: m[2] };
      eventId ??= recorded?.eventId;
    }
  }
  if (!recorded && eventId !== undefined) {
    const ev = history.events?.find((e) => toNumber(e.eventId) === eventId);
    if (ev) recorded = { eventId, kind: 'other', name: eventTypeName(ev) };
  }

  const missing = current?.kind === 'fail' ? unknownAgent(current.detail ?? '') : undefined;
  if (missing) return missing;

  const at = eventId !== undefined ? ` at event ${eventId}` : '';
  const recordedText = recorded ? describeCommand(recorded) : 'something else';
  const laterUpdate = /^Update machine does not handle this event/.test(core) && eventId !== undefined ? updateAcceptedLaterInTask(history, eventId) : undefined;
  if (laterUpdate !== undefined) {
    return {
      kind: 'nondeterminism',
      eventId: eventId!,
      ...(recorded ? { recorded: stripEventId(recorded) } : {}),
      error: sdkError,
      explanation:
        `The recorded run and the code issue the same commands in one workflow task, in another order: the recorded run has ${recordedText}${at} ` +
        `and accepts an update after it (event ${laterUpdate}), where a replay accepts the task's updates first. Workflow code does not choose this ` +
        `order: the task's commands were recorded from two activations (seen under heavy load, when a workflow task timed out while updates ` +
        `waited), an order no replay reproduces. A worker that has to replay this run fails its workflow task from now on: repair it with ` +
        `\`fh replay <id> --agents <module> --reset\` (docs/deploying.md, "A run the code no longer replays").`,
    };
  }
  const currentText = current ? (current.kind === 'other' && !current.name ? 'issues no command there' : describeCommand(current)) : undefined;
  const explanation =
    `The workflow code now issues a different command${at} than the recorded run did: recorded ${recordedText}` +
    (currentText ? `, code now ${currentText}` : ` (SDK: ${firstLine(core)})`) +
    `. Changes that add, remove or reorder model calls, tool calls, compaction decisions or timers (for example turning compaction on, ` +
    `changing its settings or the tools, or adding a step) break runs recorded before the change: keep the old code for those runs ` +
    `(a patch, or worker versioning) or let them finish first.`;
  return {
    kind: 'nondeterminism',
    ...(eventId !== undefined ? { eventId } : {}),
    ...(recorded ? { recorded: stripEventId(recorded) } : {}),
    ...(current ? { current } : {}),
    error: sdkError,
    explanation,
  };
}

/**
 * UnknownAgentError's words (as a worker throws them, or inline), explained for a replay: the agent the
 * run needs and the agents the code defines, without the worker's advice about retried tasks.
 */
function unknownAgent(text: string): Explained | undefined {
  const m = /Unknown agent '([^']*)'(?: on task queue '[^']*': this worker registers|\. Registered agents:) ([^.]*)\./.exec(text);
  if (!m) return undefined;
  const [, agent, known] = m;
  return {
    kind: 'unknown_agent',
    error: `Unknown agent '${agent}'`,
    explanation: `The current code does not define this run's agent '${agent}' (${known === '(none)' ? 'it defines none' : `it defines ${known}`}). Replay against the module that defines it (--agents / options.agents).`,
  };
}

/** An update accepted after `eventId` in the same workflow task's events (before the next task completes), or undefined. */
function updateAcceptedLaterInTask(history: History, eventId: number): number | undefined {
  for (const e of history.events ?? []) {
    const id = toNumber(e.eventId) ?? 0;
    if (id <= eventId) continue;
    if (e.workflowTaskCompletedEventAttributes) return undefined;
    if (e.workflowExecutionUpdateAcceptedEventAttributes) return id;
  }
  return undefined;
}

function stripEventId(c: RecordedCommand): ReplayCommand {
  const { eventId: _e, ...rest } = c;
  return rest;
}

/** The commands history recorded, in event order (activities by id = seq, local activities by marker seq). */
export function recordedCommands(history: History): RecordedCommand[] {
  const out: RecordedCommand[] = [];
  for (const e of history.events ?? []) {
    const eventId = toNumber(e.eventId) ?? 0;
    if (e.activityTaskScheduledEventAttributes) {
      const a = e.activityTaskScheduledEventAttributes;
      const name = a.activityType?.name ?? undefined;
      let detail: string | undefined;
      if (name === 'fhTool') detail = safeDecode(a.input?.payloads?.[0])?.name;
      out.push({ eventId, kind: 'activity', seq: toNumber(a.activityId), name, ...(detail ? { detail } : {}) });
    } else if (e.markerRecordedEventAttributes) {
      const m = e.markerRecordedEventAttributes;
      if (m.markerName !== 'core_local_activity') continue; // patch markers are the SDK's business
      const data = safeDecode(m.details?.data?.payloads?.[0]) as { seq?: number; activity_type?: string } | undefined;
      out.push({ eventId, kind: 'local_activity', seq: data?.seq, name: data?.activity_type });
    } else if (e.timerStartedEventAttributes) {
      out.push({ eventId, kind: 'timer', seq: toNumber(e.timerStartedEventAttributes.timerId) });
    } else if (e.startChildWorkflowExecutionInitiatedEventAttributes) {
      out.push({ eventId, kind: 'child_workflow', name: e.startChildWorkflowExecutionInitiatedEventAttributes.workflowType?.name ?? undefined });
    } else if (e.signalExternalWorkflowExecutionInitiatedEventAttributes) {
      out.push({ eventId, kind: 'signal_external', name: e.signalExternalWorkflowExecutionInitiatedEventAttributes.signalName ?? undefined });
    } else if (e.workflowExecutionCompletedEventAttributes) {
      out.push({ eventId, kind: 'complete' });
    } else if (e.workflowExecutionFailedEventAttributes) {
      out.push({ eventId, kind: 'fail', detail: e.workflowExecutionFailedEventAttributes.failure?.message ?? undefined });
    } else if (e.workflowExecutionContinuedAsNewEventAttributes) {
      out.push({ eventId, kind: 'continue_as_new', name: e.workflowExecutionContinuedAsNewEventAttributes.workflowType?.name ?? undefined });
    } else if (e.workflowExecutionCanceledEventAttributes) {
      out.push({ eventId, kind: 'cancel' });
    }
  }
  return out;
}

/** Activities and local activities share one sequence; timers have their own. */
function family(c: ReplayCommand): string {
  if (c.kind === 'activity' || c.kind === 'local_activity') return `act:${c.seq}`;
  if (c.kind === 'timer') return `timer:${c.seq}`;
  return c.kind === 'fail' || c.kind === 'complete' || c.kind === 'cancel' || c.kind === 'continue_as_new' ? 'close' : `${c.kind}:${c.name}`;
}

function codeCommandFor(rec: ReplayCommand, trace: ReplayCommand[]): ReplayCommand | undefined {
  const key = family(rec);
  return trace.find((c) => family(c) === key);
}

function sameCommand(a: ReplayCommand, b: ReplayCommand): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === 'activity' || a.kind === 'local_activity' || a.kind === 'child_workflow' || a.kind === 'signal_external') return a.name === b.name;
  return true;
}

function firstDivergence(recorded: RecordedCommand[], trace: ReplayCommand[]): { recorded: RecordedCommand; current: ReplayCommand } | undefined {
  for (const rec of recorded) {
    const code = codeCommandFor(rec, trace);
    if (!code) return { recorded: rec, current: firstUnmatched(recorded, trace) ?? { kind: 'other' } };
    if (!sameCommand(rec, code)) return { recorded: rec, current: code };
  }
  return undefined;
}

/** The first command of the code that no recorded command accounts for. */
function firstUnmatched(recorded: RecordedCommand[], trace: ReplayCommand[]): ReplayCommand | undefined {
  return trace.find((c) => {
    const rec = recorded.find((r) => family(r) === family(c));
    return !rec || !sameCommand(rec, c);
  });
}

const ACTIVITY_WORDS: Record<string, string> = {
  fhModel: 'a model call',
  fhTool: 'a tool call',
  fhSummarize: 'a compaction summary',
  fhResolveModel: 'a model lookup',
  fhDecideCompaction: 'a compaction decision',
  fhCheckSummaryGate: 'a compaction gate check',
  fhStorePrelude: 'storing the system prompt and tools',
};

/** "a model call (activity fhModel)", "a tool call 'add' (activity fhTool)", "a timer (5000 ms)" … */
export function describeCommand(c: ReplayCommand): string {
  switch (c.kind) {
    case 'activity':
    case 'local_activity': {
      const words = (c.name && ACTIVITY_WORDS[c.name]) ?? 'an activity';
      const tool = c.name === 'fhTool' && c.detail ? ` '${c.detail}'` : '';
      return `${words}${tool} (${c.kind === 'local_activity' ? 'local activity' : 'activity'} ${c.name ?? '?'})`;
    }
    case 'timer':
      return `a timer${c.detail ? ` (${c.detail})` : ''}`;
    case 'child_workflow':
      return `a child workflow (${c.name ?? '?'})`;
    case 'signal_external':
      return `a signal to another workflow (${c.name ?? '?'})`;
    case 'continue_as_new':
      return 'continue-as-new';
    case 'complete':
      return 'completing the workflow';
    case 'fail':
      return `failing the workflow${c.detail ? ` (${firstLine(c.detail)})` : ''}`;
    case 'cancel':
      return 'cancelling the workflow';
    default:
      return c.name ? `an event of type ${c.name}` : 'no command';
  }
}

function eventTypeName(e: HistoryEvent): string {
  const attr = Object.keys(e).find((k) => k.endsWith('EventAttributes') && (e as Record<string, unknown>)[k]);
  return attr ? attr.replace(/EventAttributes$/, '').replace(/^./, (c) => c.toUpperCase()) : 'unknown';
}

function safeDecode(p: Payload | null | undefined): any {
  if (!p) return undefined;
  try {
    return defaultPayloadConverter.fromPayload(p);
  } catch {
    return undefined;
  }
}

function firstLine(s: string): string {
  return s.split('\n')[0]!.trim().replace(/\.$/, '');
}
