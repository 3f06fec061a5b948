/**
 * Where tool activities go. The tool activity is generic (one activity type for every tool), so on a
 * task queue shared by workers with different agents it would land on any of them, and one without the
 * tool's code would fail the call. Instead a run schedules its tool calls on a queue of its own agent
 * set: the workflow task queue plus a hash of the names of the agents in the workflow bundle it runs
 * under. Every worker polls the queue of its own agent set next to the shared one, so a tool call goes
 * to a worker that runs the same agents (and so, by the deployment rule in docs/deploying.md, has their
 * tools). Both ends compute it here: the workflow from its bundle, the worker from its agent modules.
 * Workflow-safe: pure.
 */
import { hashString } from '../core/hash';

/** The key of a set of agent names: order and duplicates do not matter. */
export function agentSetKey(agentNames: readonly string[]): string {
  return hashString([...new Set(agentNames)].sort().join('\n'));
}

/** The task queue the tool calls of runs on `taskQueue` under agent set `key` go to. */
export function toolTaskQueue(taskQueue: string, key: string): string {
  return `${taskQueue}:tools-${key}`;
}
