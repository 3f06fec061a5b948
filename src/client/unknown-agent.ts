/**
 * An unknown agent fails the workflow TASK, not the run (src/workflows/agent-workflow.ts): Temporal
 * retries it until a worker that has the agent takes it, so a client that only waits would wait in
 * silence. These read that failure from the run's history (a task failure carries no failure type: its
 * message is what there is): startAgent and startSession refuse such a run at start, and `fh close`
 * says when a run is not being served at all.
 */
import type { WorkflowHandle } from '@temporalio/client';
import { UnknownAgentError } from '../core/errors';
import { describeQuietly, idleQueue } from './query-retries';

/**
 * A new run (an agent run or a session) of an agent the polling worker does not know is refused at once
 * (UNKNOWN_AGENT, naming the agents that worker has) and terminated: left open it would wait for a
 * worker that may never come, its failing task retried into the worker's log. With no worker polling
 * yet, the run waits for one (nothing can be told).
 */
export async function refuseUnknownAgent(handle: WorkflowHandle, agent: string, taskQueue: string): Promise<void> {
  try {
    await checkFirstTask(handle, agent, taskQueue);
  } catch (err) {
    if (err instanceof UnknownAgentError) await handle.terminate(`unknown agent '${agent}' on task queue '${taskQueue}'`).catch(() => undefined);
    throw err;
  }
}

/**
 * Why no worker serves a running run now, in a few words, or undefined when one does (or may: a first
 * task not yet taken while a worker polls). Not served: its workflow task keeps failing (an agent the
 * polling workers do not have, a bug), or no worker polls its task queue.
 */
export async function notServedReason(handle: WorkflowHandle): Promise<string | undefined> {
  const described = await describeQuietly(handle);
  const attempt = described.workflowTaskAttempt;
  if (attempt >= 2) {
    const events = (await handle.fetchHistory().catch(() => undefined))?.events ?? [];
    const unknown = unknownAgentMessage(events);
    if (unknown) return `no worker polling task queue '${described.taskQueue}' has its agent (its workflow task fails: ${unknown.split('\n')[0]})`;
    const last = events.map((e) => e.workflowTaskFailedEventAttributes?.failure?.message).filter(Boolean).pop();
    return `its workflow task keeps failing (attempt ${attempt}${last ? `: ${last.split('\n')[0]}` : ''})`;
  }
  const idle = await idleQueue(handle);
  return idle ? `no worker polls task queue '${idle.taskQueue}'` : undefined;
}

/** How UnknownAgentError's message starts. */
const UNKNOWN_AGENT_MESSAGE = "Unknown agent '";

function unknownAgentMessage(events: Array<{ workflowTaskFailedEventAttributes?: { failure?: { message?: string | null } | null } | null }>): string | undefined {
  const failure = events.map((e) => e.workflowTaskFailedEventAttributes?.failure).reverse().find((f) => f?.message?.startsWith(UNKNOWN_AGENT_MESSAGE));
  return failure?.message ?? undefined;
}

/**
 * Watches the run (describe: a pending workflow task on its second attempt or later) and resolves with
 * the failure's message once the task failed because the agent is unknown. Polls until `signal` aborts.
 */
export async function unknownAgentTaskFailure(handle: WorkflowHandle, signal: AbortSignal, everyMs = 1_000): Promise<string> {
  while (!signal.aborted) {
    const described = await describeQuietly(handle).catch(() => undefined);
    if ((described?.workflowTaskAttempt ?? 0) >= 2) {
      const message = unknownAgentMessage((await handle.fetchHistory().catch(() => undefined))?.events ?? []);
      if (message) return message;
    }
    await new Promise((r) => setTimeout(r, everyMs).unref());
  }
  return new Promise(() => undefined); // stopped: never settles (the result won the race)
}

/** The agents the failing worker has, read back from UnknownAgentError's message. */
function knownAgents(message: string): string[] {
  const listed = /registers (.*?)\. The workflow task/.exec(message)?.[1] ?? /Registered agents: (.*?)\.?( \[|$)/.exec(message)?.[1];
  return !listed || listed === '(none)' ? [] : listed.split(', ');
}

/**
 * A new session's first workflow task, as the client that started it sees it: resolves once a worker
 * ran it, throws UnknownAgentError (naming the agents that worker has) when the worker that took it does
 * not know the agent, and returns at once when no worker polls the task queue (the session waits for one).
 */
export async function checkFirstTask(handle: WorkflowHandle, agent: string, taskQueue: string, limitMs = 10_000): Promise<void> {
  if (await idleQueue(handle)) return;
  const until = Date.now() + limitMs;
  for (let wait = 25; Date.now() < until; wait = Math.min(wait * 2, 500)) {
    const events = (await handle.fetchHistory().catch(() => undefined))?.events ?? [];
    if (events.some((e) => e.workflowTaskCompletedEventAttributes)) return;
    const message = unknownAgentMessage(events);
    if (message) throw new UnknownAgentError(agent, knownAgents(message), taskQueue, true);
    await new Promise((r) => setTimeout(r, wait));
  }
}
