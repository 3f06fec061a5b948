/**
 * Workflow code entry. The worker bundles a small generated module that requires the user's agent
 * modules and passes them to `agentWorkflows`; only workflow-safe code is reachable from here.
 */
import { isAgentDefinition, type AgentDefinition } from '../core/agent';
import { agentWorkflow, unknownAgentWorkflow } from './agent-workflow';
import { agentSetKey } from '../wire/tool-queue';
import { fhFlow, fhFlowBranch } from './flow-workflow';

export * from './agent-workflow';

/** Finds agent definitions among a module's exports (default, named, or arrays of them). */
export function collectAgents(modules: unknown[]): AgentDefinition[] {
  const found = new Map<string, AgentDefinition>();
  const visit = (v: unknown) => {
    if (isAgentDefinition(v)) {
      const prior = found.get(v.name);
      if (prior && prior !== v) throw new Error(`two different agents are named '${v.name}'`);
      found.set(v.name, v);
    } else if (Array.isArray(v)) v.forEach(visit);
  };
  for (const mod of modules) {
    if (isAgentDefinition(mod) || Array.isArray(mod)) visit(mod);
    else if (mod && typeof mod === 'object') Object.values(mod).forEach(visit);
  }
  return [...found.values()];
}

/** Workflow types of the workflows module that are not agents (the tool queue is named by the agents alone). */
export const NON_AGENT_WORKFLOW_TYPES: readonly string[] = ['default', 'fhFlow', 'fhFlowBranch'];

/** The workflows module: one workflow type per agent name, and a default for unknown names. */
export function agentWorkflows(modules: unknown[]): Record<string, (...args: any[]) => Promise<unknown>> {
  const agents = collectAgents(modules);
  const out: Record<string, (...args: any[]) => Promise<unknown>> = {};
  // Tool calls go to the queue of this agent set (wire/tool-queue.ts), which the workers running it poll.
  const toolSet = agentSetKey(agents.map((a) => a.name));
  for (const def of agents) out[def.name] = agentWorkflow(def, toolSet);
  // Flows run on every worker: their stages use the built-in tools and the agents registered here.
  // Their tool calls (command nodes, prompt nodes' tools) go to the same tool queue as the agents'.
  out.fhFlow = (input: Parameters<typeof fhFlow>[0]) => fhFlow(input, toolSet);
  out.fhFlowBranch = (input: Parameters<typeof fhFlowBranch>[0]) => fhFlowBranch(input, toolSet);
  out.default = unknownAgentWorkflow(agents.map((a) => a.name));
  return out;
}
