/**
 * @fabric-harness/sdk — the default entry. Compaction is on by default: a headless agent that fails at
 * the context window is the wrong default. For exact, replay-stable conversations use
 * `@fabric-harness/sdk/strict`. Inside a workflow bundle this module is replaced by ./workflow-entry.
 */
import { entrypoint } from './core/entrypoint';
import { inlineRuntime } from './inline/runtime';

export const { agent, init } = entrypoint('default', inlineRuntime);
export * from './core/entry-exports';
export * from './inline/session-exports';
export type { FlowGraph, FlowNode, FlowEdge, FlowContext, ContextValue, Fidelity, NodeKind, StageRecord, FlowEvent } from './core/flows';
export * from './inline/reachable-types';
