/**
 * Every run an audit bundle holds for one workflow id: its continue-as-new chain (oldest first), then,
 * for each run in order, each child workflow it started (sub-agents, flow branches) with the child's
 * own chain and children, depth first. The order depends only on the histories, so two exports of the
 * same closed runs list them the same way.
 */
import type { Client } from '@temporalio/client';
import type { History } from '../history-file';
import { toNumber } from '../history-fields';

export interface FetchedRun {
  workflowId: string;
  runId: string;
  history: History;
  role: 'root' | 'continued' | 'child';
  parent?: { workflowId: string; runId: string; eventId: number };
}

/** How many runs one bundle may hold: a loop of children starting children stops here, named. */
const MAX_RUNS = 10_000;

export async function fetchRuns(client: Client, workflowId: string): Promise<FetchedRun[]> {
  const out: FetchedRun[] = [];
  const seen = new Set<string>();
  const fetch = async (id: string, runId: string): Promise<History> => (await client.workflow.getHandle(id, runId).fetchHistory()) as History;

  // The root: back from the latest run through each run's predecessor.
  const latest = await client.workflow.getHandle(workflowId).describe();
  const chain: Array<{ runId: string; history: History }> = [];
  for (let runId: string | undefined = latest.runId; runId; ) {
    const history = await fetch(workflowId, runId);
    chain.unshift({ runId, history });
    runId = history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
  }

  const visit = async (id: string, runs: Array<{ runId: string; history: History }>, parent?: FetchedRun['parent']): Promise<void> => {
    runs.forEach((r, i) => {
      if (seen.has(`${id}/${r.runId}`)) return;
      seen.add(`${id}/${r.runId}`);
      out.push({ workflowId: id, runId: r.runId, history: r.history, role: parent ? 'child' : i === 0 ? 'root' : 'continued', ...(parent && i === 0 ? { parent } : {}) });
      if (parent && i > 0) out[out.length - 1]!.role = 'continued';
    });
    if (out.length > MAX_RUNS) throw new Error(`more than ${MAX_RUNS} runs under ${workflowId}`);
    for (const r of runs) {
      for (const e of r.history.events ?? []) {
        const started = e.childWorkflowExecutionStartedEventAttributes;
        const child = started?.workflowExecution;
        if (!child?.workflowId || !child.runId || seen.has(`${child.workflowId}/${child.runId}`)) continue;
        await visit(child.workflowId, await forwardChain(child.workflowId, child.runId), {
          workflowId: id,
          runId: r.runId,
          eventId: toNumber(started!.initiatedEventId) ?? toNumber(e.eventId) ?? 0,
        });
      }
    }
  };

  /** A child's runs from its first: each continue-as-new names the next. */
  const forwardChain = async (id: string, first: string): Promise<Array<{ runId: string; history: History }>> => {
    const runs: Array<{ runId: string; history: History }> = [];
    for (let runId: string | undefined = first; runId && runs.length < MAX_RUNS; ) {
      const history = await fetch(id, runId);
      runs.push({ runId, history });
      const events = history.events ?? [];
      runId = events[events.length - 1]?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId || undefined;
    }
    return runs;
  };

  await visit(workflowId, chain);
  return out;
}
