import type { Client } from '@temporalio/client';
import { parseAgentInput, type AgentDefinition } from '../core/agent';
import { AgentHandle } from './agent-handle';
import { STREAMING_MEMO_KEY } from '../wire/stream';
import { refuseUnknownAgent } from './unknown-agent';
import { checkStartAgentOptions, type StartAgentOptions } from './start-agent-options';

export type { StartAgentOptions } from './start-agent-options';

export const DEFAULT_TASK_QUEUE = 'fabric-harness';
/** Memo key that names the agent of a run (for `fh list` and audits). */
export const AGENT_MEMO_KEY = 'fh.agent';

/**
 * Starts an agent as a workflow. With a definition (not just a name) the input is validated here,
 * before anything is started, against the agent's schema. When a worker polls the task queue, waits for
 * the run's first workflow task (at most 10 s): an agent that worker does not have is refused with
 * UNKNOWN_AGENT (naming the agents it has) and the run terminated.
 */
export async function startAgent<I, O>(
  client: Client,
  agent: AgentDefinition<I, O> | string,
  input: I,
  options: StartAgentOptions,
): Promise<AgentHandle<O>> {
  const name = typeof agent === 'string' ? agent : agent.name;
  const { streaming, ...startOptions } = checkStartAgentOptions(options);
  const args = [typeof agent === 'string' ? input : parseAgentInput(agent, input)];
  const taskQueue = startOptions.taskQueue ?? DEFAULT_TASK_QUEUE;
  const handle = await client.workflow.start(name, {
    ...startOptions,
    taskQueue,
    args,
    memo: { [AGENT_MEMO_KEY]: name, ...(streaming === false ? { [STREAMING_MEMO_KEY]: false } : {}), ...options.memo },
  });
  // An agent no polling worker knows: UNKNOWN_AGENT now (the run is terminated), not a result that never comes.
  await refuseUnknownAgent(handle, name, taskQueue);
  return new AgentHandle<O>(handle, client);
}

export function getAgentHandle<O = unknown>(client: Client, workflowId: string, runId?: string): AgentHandle<O> {
  return new AgentHandle<O>(client.workflow.getHandle(workflowId, runId), client);
}
