import { proxySinks, workflowInfo } from '@temporalio/workflow';
import { parseAgentInput, type AgentDefinition, type InitFn } from '../core/agent';
import { UnknownAgentError } from '../core/errors';
import {
  compactionExplicitlyDisabled,
  Harness,
  parseInitOptions,
  TEMPORAL_COMPACTION_WARNING,
  type Flavour,
  type InitOptions,
} from '../core/harness';
import { encodeFailure } from '../wire/failures';
import { RunState } from './run-state';
import type { FabricSinks } from './sinks';
import { createTemporalPorts } from './temporal-ports';

export * from '../wire/messages';

/** The workflow function for one agent: its type name is the agent's name. */
export function agentWorkflow(def: AgentDefinition): (input: unknown) => Promise<unknown> {
  return async (rawInput: unknown) => {
    const state = new RunState();
    state.installHandlers();
    let result: unknown;
    try {
      const input = parseAgentInput(def, rawInput);
      result = await def.run({ init: workflowInit(def.flavour, state), input });
    } catch (err) {
      await state.finish();
      // Our typed errors fail the workflow (non-retryable, `type` = code). Anything else is left to
      // Temporal's default, a workflow task failure that retries, so a fixed bug can resume the run.
      throw encodeFailure(err);
    }
    await state.finish();
    return result;
  };
}

/** Handles a workflow type no registered agent has, with an error that lists the ones there are. */
export function unknownAgentWorkflow(known: string[]): (...args: unknown[]) => Promise<never> {
  return async () => {
    throw encodeFailure(new UnknownAgentError(workflowInfo().workflowType, known));
  };
}

function workflowInit(flavour: Flavour, state: RunState): InitFn {
  return async (raw?: InitOptions) => {
    const options = parseInitOptions(raw);
    // Inside a workflow the runtime is Temporal whatever `runtime` says; warn as the docs promise.
    if (flavour === 'default' && !compactionExplicitlyDisabled(options)) {
      proxySinks<FabricSinks>().fabric.warnOnce('temporal-compaction', TEMPORAL_COMPACTION_WARNING);
    }
    const ports = createTemporalPorts({ record: (e) => state.record(e) });
    const harness = new Harness(ports, options, flavour, '.', state);
    state.harnesses.push(harness);
    return harness;
  };
}
