/**
 * What a command that waits on a workflow is waiting for, in one line: no worker polling its task queue,
 * an activity (a model or tool call, with its attempt and last failure), a serving agent, or the run's
 * own code. Said instead of guessing "is a worker serving …?" while one is.
 */
import type { Client } from '@temporalio/client';
import { isoTime } from '../audit/history-fields';
import { phaseQuery, type RunPhase } from '../wire/messages';
import { GRPC, grpcCode, grpcDetails } from './errors';

/** A poller seen within this long counts as a worker serving the queue (the server keeps them ~5 min). */
const POLLER_FRESH_MS = 90_000;

/**
 * Whether a worker polled the task queue's workflow tasks lately. undefined when the server will not
 * say (permissions, an older server): callers then say nothing rather than guess.
 */
export async function workerPolls(client: Client, namespace: string, taskQueue: string): Promise<boolean | undefined> {
  try {
    const res = await client.workflowService.describeTaskQueue({ namespace, taskQueue: { name: taskQueue }, taskQueueType: 1 });
    const now = Date.now();
    return (res.pollers ?? []).some((poller) => {
      const at = poller.lastAccessTime ? Date.parse(isoTime(poller.lastAccessTime) ?? '') : now;
      return Number.isNaN(at) || now - at < POLLER_FRESH_MS;
    });
  } catch {
    return undefined;
  }
}

export const noWorkerMessage = (taskQueue: string): string =>
  `no worker polls task queue '${taskQueue}': start one with \`fh worker --agents <module>\` (same namespace and task queue)`;

const ACTIVITY_NAMES: Record<string, string> = {
  fhModel: 'a model call',
  fhTool: 'a tool call',
  fhSummarize: 'a summary (compaction)',
  fhResolveModel: "the model's facts (Models API)",
  fhFlushMemory: 'a memory flush',
  fhLoadMemory: 'loading memory',
};

/** One line: what the workflow is waiting for now. */
export async function whatItWaitsFor(client: Client, namespace: string, workflowId: string, taskQueue: string): Promise<string> {
  if ((await workerPolls(client, namespace, taskQueue)) === false) return noWorkerMessage(taskQueue);
  const handle = client.workflow.getHandle(workflowId);
  const described = await handle.describe().catch(() => undefined);
  const pending = described?.raw.pendingActivities?.[0];
  if (pending) {
    const type = pending.activityType?.name ?? 'an activity';
    const what = ACTIVITY_NAMES[type] ?? `activity ${type}`;
    const attempt = pending.attempt && pending.attempt > 1 ? `, attempt ${pending.attempt}` : '';
    const failure = pending.lastFailure?.message ? `, last failure: ${pending.lastFailure.message.split('\n')[0]}` : '';
    return `waiting for ${what}${attempt}${failure}`;
  }
  const phase = await client.connection
    .withDeadline(Date.now() + 3_000, () => handle.query(phaseQuery))
    .catch(() => undefined as RunPhase | undefined);
  if (phase?.phase === 'serving') {
    const idle = phase.idleTimeoutMs !== undefined ? `; it ends by itself after ${Math.round(phase.idleTimeoutMs / 1000)} s without a prompt` : '';
    return (
      `the agent is serving prompts (its run called serve()): send one with \`fh prompt ${workflowId} <text>\`, ` +
      `end it with \`fh close ${workflowId}\`${idle}`
    );
  }
  return 'the run is in its own code (between calls, or waiting on a timer or condition)';
}

/**
 * The server turned a query away because no worker has polled the run's task queue lately (a worker that
 * stopped a moment ago still counts as polling for a while, so this can come before any deadline).
 */
/** What to say when the server turned a query away for want of pollers (isNoPollerError), and what to start. */
export function noPollerMessage(taskQueue: string | undefined): string {
  const queue = taskQueue ? `task queue '${taskQueue}'` : 'its task queue';
  return `the server has seen no worker poll ${queue} lately (the one serving it may have stopped); queries run on a worker, so start one with \`fh worker --agents <module>${taskQueue ? ` --task-queue ${taskQueue}` : ''}\``;
}

export function isNoPollerError(err: unknown): boolean {
  return grpcCode(err) === GRPC.FAILED_PRECONDITION && /no poller seen/i.test(grpcDetails(err) || String((err as Error)?.message ?? ''));
}

/**
 * A read of a session that nothing answered before its deadline: the client's typed WaitEndedError (a
 * read's: no update id, so nothing to reattach to), or the bare gRPC errors such a read ends with.
 */
export function isUnansweredRead(err: unknown): boolean {
  const e = err as { code?: unknown; updateId?: unknown; message?: unknown } | undefined;
  if (e?.code === 'WAIT_ENDED') return e.updateId === undefined;
  return grpcCode(err) === GRPC.DEADLINE_EXCEEDED || /deadline exceeded|failed to query workflow/i.test(String(e?.message ?? ''));
}
