import { randomUUID } from 'node:crypto';
import type { AgentDefinition, InvokeOptions } from '../core/agent';
import { makeEvent, type AgentEvent } from '../core/events';
import type { ToolCallRequest, ToolCallResult } from '../core/ports';
import { SubAgentDepthError, SubAgentSlots, subAgentResultText } from '../core/sub-agents';
import type { SubAgentSpec } from '../core/tools';
import { createWorktree, finishWorktree } from '../activities/git/worktrees';

/** invoke's options as the inline runtime passes them to a sub-agent: its depth rides along. */
export type NestedInvokeOptions = InvokeOptions & { fhDepth?: number; fhConnection?: string };

export type SubAgentRunner = (call: ToolCallRequest, spec: SubAgentSpec) => Promise<ToolCallResult>;

/**
 * Sub-agents inline: the same rules as child workflows (depth, slots, worktree, result text), run in
 * this process with the parent's settings; the child's events reach the parent's listener live, as
 * `subagent_event`. Aborting the parent (invoke's signal) aborts the child.
 */
export function inlineSubAgents(
  defaults: NestedInvokeOptions,
  invoke: (def: AgentDefinition, input: unknown, options: NestedInvokeOptions) => Promise<unknown>,
  emit: (event: AgentEvent) => void,
): SubAgentRunner {
  const slots = new SubAgentSlots();
  const depth = defaults.fhDepth ?? 0;
  let count = 0;
  return async (call, spec) => {
    const agent = spec.agent.name;
    if (depth + 1 > spec.maxDepth) return { content: new SubAgentDepthError(agent, spec.maxDepth).message, isError: true };
    const release = await slots.acquire(spec.maxConcurrent);
    const childId = `inline-${agent}-${call.id}-${++count}`;
    try {
      // Its owner is this call alone (inline nothing is retried): a later run with the same ids gets its own.
      const wt = spec.worktree ? await createWorktree(call.cwd, childId, `inline ${randomUUID()}`) : undefined;
      emit(makeEvent('subagent_started', { childId, agent, callId: call.id, depth: depth + 1, ...(wt ? { branch: wt.branch } : {}) }, Date.now()));
      let result: unknown;
      let failure: unknown;
      try {
        result = await invoke(spec.agent as AgentDefinition, spec.toInput(call.input), {
          ...defaults,
          cwd: wt?.path ?? call.cwd,
          fhDepth: depth + 1,
          // The parent's connection: the child's unless its own init names one.
          fhConnection: call.connection,
          onEvent: (event) => emit(makeEvent('subagent_event', { childId, agent, event }, Date.now())),
        });
      } catch (err) {
        if (defaults.signal?.aborted) throw err;
        failure = err;
      }
      const done = wt ? await finishWorktree({ ...wt, cwd: call.cwd }) : undefined;
      emit(makeEvent('subagent_finished', { childId, agent, callId: call.id, ok: failure === undefined, ...(done ? { branch: done.branch, ...(done.commit ? { commit: done.commit } : {}) } : {}) }, Date.now()));
      if (failure !== undefined) {
        const reason = failure instanceof Error ? `${(failure as { code?: string }).code ? `${(failure as { code?: string }).code}: ` : ''}${failure.message}` : String(failure);
        return { content: `Sub-agent '${agent}' failed: ${reason}${done ? `\n\n[worktree: branch ${done.branch}]` : ''}`, isError: true };
      }
      return { content: subAgentResultText(result, done), isError: false };
    } finally {
      release();
    }
  };
}
