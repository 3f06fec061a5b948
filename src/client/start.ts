import type { Client, WorkflowStartOptions } from '@temporalio/client';
import { parseAgentInput, type AgentDefinition } from '../core/agent';
import { AgentHandle } from './agent-handle';
import { STREAMING_MEMO_KEY } from '../wire/stream';
import { refuseUnknownAgent } from './unknown-agent';

export const DEFAULT_TASK_QUEUE = 'fabric-harness';
/** Memo key that names the agent of a run (for `fh list` and audits). */
export const AGENT_MEMO_KEY = 'fh.agent';

export type StartAgentOptions = Partial<Omit<WorkflowStartOptions, 'args'>> & {
  workflowId: string;
  /** false: the run's model calls are made without streaming (its stream still carries every durable event). Default true. */
  streaming?: boolean;
};

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
  const args = [typeof agent === 'string' ? input : parseAgentInput(agent, input)];
  const { streaming, ...startOptions } = options;
  if (streaming !== undefined && typeof streaming !== 'boolean') throw new TypeError(`startAgent: streaming must be a boolean, got ${typeof streaming}`);
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
