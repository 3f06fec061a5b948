/**
 * `fh replay <id> --reset`: a run whose history the current code cannot replay (a deploy that changed
 * commands without patched(), or a history Temporal recorded out of order) is stuck: every time a worker
 * has to replay it, the workflow task fails again. Temporal's reset is the way out: a new run that keeps
 * the history up to a workflow task and runs the code from there. This finds that task (the newest, at or
 * before the divergence the replay named, whose history before it the code replays, so the new run does)
 * and asks the server to reset there, applying again every signal and update the run received after it.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type Long from 'long';
import type { History } from '../../audit/history-file';
import { plural } from '../../core/plural';
import { recordedCommands } from '../../audit/replay-explain';

const { EventType, ResetReapplyType } = temporal.api.enums.v1;

export interface ResetPoint {
  /** The WorkflowTaskCompleted event the new run resets to (its workflow task runs again, on the current code). */
  eventId: number;
  /** Signals and updates after it: the server applies them again in the new run. */
  reapplied: number;
  /** Events of the old run after the reset point (model and tool calls among them run again). */
  discarded: number;
  /** What the new run does again: the old run's model calls (summaries included) and tool calls (by name) after the point. */
  again: { modelCalls: number; toolCalls: string[] };
}

/** The model calls (compaction summaries too: each calls a model) and tool calls recorded among `events`. */
function againIn(events: temporal.api.history.v1.IHistoryEvent[]): ResetPoint['again'] {
  const activities = recordedCommands({ events }).filter((c) => c.kind === 'activity');
  return {
    modelCalls: activities.filter((c) => c.name === 'fhModel' || c.name === 'fhSummarize').length,
    // A tool whose input went to the store has no name in history.
    toolCalls: activities.filter((c) => c.name === 'fhTool').map((c) => c.detail ?? '(a tool)'),
  };
}

/**
 * One line for a reset point: done (`runId`, the new run) or, for --dry-run, what a reset would do.
 * It names what runs again, so the user can judge a reset before making it: tool calls with effects
 * outside the sandbox happen twice.
 */
export function describeReset(label: string, point: ResetPoint, runId?: string): string {
  const done = runId !== undefined;
  const verb = (now: string, would: string) => (done ? now : would);
  const { reapplied, discarded, again } = point;
  const tools = [...new Set(again.toolCalls)].join(', ');
  const rerun = [
    ...(again.modelCalls ? [plural(again.modelCalls, 'model call', 'model calls')] : []),
    ...(again.toolCalls.length ? [`${plural(again.toolCalls.length, 'tool call', 'tool calls')} (${tools})`] : []),
  ];
  return (
    (done ? `reset ${label}: new run ${runId} keeps` : `would reset ${label} (--dry-run: nothing changed): a new run would keep`) +
    ` the history before the workflow task completed at event ${point.eventId} (the latest the current code replays) and ${verb('runs', 'run')} the current code from there; ` +
    `${plural(reapplied, 'signal or update', 'signals and updates')} sent after it ${verb(reapplied === 1 ? 'is' : 'are', 'would be')} applied again; ` +
    `${plural(discarded, 'later event', 'later events')} of the old run ${verb(discarded === 1 ? 'is' : 'are', 'would be')} dropped` +
    (rerun.length ? `, among them ${rerun.join(' and ')}, which ${verb('run', 'would run')} again` : discarded === 1 ? ', not a model or tool call' : ', none of them a model or tool call')
  );
}

/** The signals and updates among `events`, once each (an update admitted, then accepted, is one). */
function reappliedIn(events: temporal.api.history.v1.IHistoryEvent[]): number {
  const sent = new Set<string>();
  for (const e of events) {
    if (e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED) sent.add(`signal ${String(e.eventId)}`);
    const update = e.workflowExecutionUpdateAdmittedEventAttributes?.request?.meta?.updateId ?? e.workflowExecutionUpdateAcceptedEventAttributes?.protocolInstanceId;
    if (update) sent.add(`update ${update}`);
  }
  return sent.size;
}

/** Whether the current code replays these events (the history a reset would keep). */
export type ReplaysPrefix = (history: History) => Promise<boolean>;

/**
 * The latest workflow task completed before `divergedAt` whose kept history the current code replays, or
 * undefined when there is none. A full replay names where the commands first differ, but not always the
 * first task a new run would fail at: patch markers the code no longer matches are tolerated while later
 * history follows, and checked once they end it. So each candidate's kept history (the events before its
 * task completed: the task itself runs again) is replayed on its own; the newest that replays wins. A
 * prefix that replays has shorter ones that replay too, so the search halves the candidates each time.
 */
export async function findResetPoint(history: History, divergedAt: number, replays: ReplaysPrefix): Promise<ResetPoint | undefined> {
  const events = history.events ?? [];
  const candidates = events
    .filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED && Number(e.eventId) < divergedAt)
    .map((e) => Number(e.eventId));
  let [low, high, found] = [0, candidates.length - 1, -1];
  while (low <= high) {
    const mid = (low + high) >> 1;
    const eventId = candidates[mid]!;
    if (await replays({ ...history, events: events.filter((e) => Number(e.eventId) < eventId) })) [found, low] = [mid, mid + 1];
    else high = mid - 1;
  }
  if (found < 0) return undefined;
  const eventId = candidates[found]!;
  const after = events.filter((e) => Number(e.eventId) > eventId);
  return { eventId, reapplied: reappliedIn(after), discarded: after.length, again: againIn(after) };
}

/** Resets the run to `point`; the new run's id. */
export async function resetRun(client: Client, workflowId: string, runId: string, point: ResetPoint, reason: string): Promise<string> {
  const response = await client.workflowService.resetWorkflowExecution({
    namespace: client.options.namespace,
    workflowExecution: { workflowId, runId },
    reason,
    // protobufjs takes a number for an int64 at run time; its generated types name only Long.
    workflowTaskFinishEventId: point.eventId as unknown as Long,
    requestId: randomUUID(),
    // Every signal and update the run was sent after the reset point is applied again: nothing a user
    // sent is lost. (The reapply type's default is signals only; exclusions alone do not widen it.)
    resetReapplyType: ResetReapplyType.RESET_REAPPLY_TYPE_ALL_ELIGIBLE,
    resetReapplyExcludeTypes: [],
    identity: `fh replay --reset (${process.pid})`,
  });
  return (response as temporal.api.workflowservice.v1.IResetWorkflowExecutionResponse).runId ?? '';
}
