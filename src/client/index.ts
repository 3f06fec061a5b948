export { startAgent, getAgentHandle, DEFAULT_TASK_QUEUE, AGENT_MEMO_KEY, type StartAgentOptions } from './start';
export { AgentHandle, AGENT_QUERIES, COMPACT_UPDATE, PROMPT_UPDATE, CLOSE_SIGNAL } from './agent-handle';
export { FabricHarnessPlugin } from '../worker/plugin';
export type { AgentUsage, CompactRequest, PromptRequest } from '../workflows/agent-workflow';
