import { ToolNotRegisteredError } from '../core/errors';
import { ToolRegistry, type ToolSource } from '../core/tool-registry';
import { collectAgents } from '../workflows';
import { loadModule, loadSources } from './load-modules';

/**
 * The worker's tool code, collected once: from the agent modules (loaded in Node: tools with execute
 * they export or list in agent({ tools })) and from `tools` (implementations, tools with execute, or
 * module paths). Every tool an agent declares in agent({ tools }) must have code here.
 */
export function collectToolCode(agentFiles: string[], tools: ReadonlyArray<ToolSource | string>): ToolRegistry {
  const agentModules = agentFiles.map((f) => loadModule(f, 'agents'));
  const registry = ToolRegistry.from([...agentModules, ...loadSources(tools, 'tools')]);
  for (const agent of collectAgents(agentModules)) {
    const missing = registry.missing(agent.tools ?? []);
    if (missing.length > 0) throw new ToolNotRegisteredError(missing[0]!);
  }
  return registry;
}
