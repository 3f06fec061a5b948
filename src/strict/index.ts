/**
 * @fabric-harness/sdk/strict — nothing injected: compaction stays off unless the agent sets it (so a
 * Temporal replay sees exactly the conversation that ran), and every agent must declare an input schema.
 * Inside a workflow bundle this module is replaced by ./workflow-entry.
 */
import { strictEntrypoint } from '../core/entrypoint';
import { inlineRuntime } from '../inline/runtime';

export const { agent, init } = strictEntrypoint(inlineRuntime);
export * from '../core/entry-exports';
export * from '../inline/session-exports';
export * from '../inline/reachable-types';
