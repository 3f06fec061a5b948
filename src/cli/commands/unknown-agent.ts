import type { WorkflowHandle } from '@temporalio/client';

/** How UnknownAgentError's message starts (a task failure carries no failure type: the message is what there is). */
const UNKNOWN_AGENT_MESSAGE = "Unknown agent '";

/**
 * An unknown agent fails the workflow TASK, not the run (src/workflows/agent-workflow.ts): Temporal
 * retries it until a worker that has the agent takes it, so `handle.result()` alone would wait silently.
 * This watches the run (describe: a pending workflow task on its second attempt or later) and resolves with
 * the failure's message once the task failed because the agent is unknown. Polls until `signal` aborts.
 */
export async function unknownAgentTaskFailure(handle: WorkflowHandle, signal: AbortSignal, everyMs = 1_000): Promise<string> {
  while (!signal.aborted) {
    const described = await handle.describe().catch(() => undefined);
    if ((described?.raw.pendingWorkflowTask?.attempt ?? 0) >= 2) {
      const events = (await handle.fetchHistory().catch(() => undefined))?.events ?? [];
      const failure = events.map((e) => e.workflowTaskFailedEventAttributes?.failure).reverse().find((f) => f?.message?.startsWith(UNKNOWN_AGENT_MESSAGE));
      if (failure?.message) return failure.message;
    }
    await new Promise((r) => setTimeout(r, everyMs).unref());
  }
  return new Promise(() => undefined); // stopped: never settles (the result won the race)
}
