import { inWorkflowContext } from '@temporalio/workflow';
import { defineAgent, type AgentConfig, type AgentDefinition, type InvokeImpl, type InitFn } from './agent';
import type { Flavour, Harness, InitOptions } from './harness';
import { RuntimeUnavailableError } from './errors';

/**
 * What the two entrypoints share; they differ only in `flavour` (what is injected by default). The
 * inline runtime is required lazily so that workflow bundles, which import this module through agent
 * definitions, never execute Node-only code (the bundler stubs those modules out).
 */
export function entrypoint(flavour: Flavour) {
  const invoke: InvokeImpl = (def, input, options) =>
    (require('../inline/invoke') as typeof import('../inline/invoke')).invokeInline(def, input, options);

  function agent<I = unknown, O = unknown>(config: AgentConfig<I, O>): AgentDefinition<I, O> {
    return defineAgent(config, flavour, invoke);
  }

  /**
   * A harness outside `run` (scripts, tests). Inside a workflow, use the `init` that `run` receives:
   * it is bound to the workflow's state (queries, events).
   */
  const init: InitFn = async (options?: InitOptions): Promise<Harness> => {
    if (inWorkflowContext()) {
      throw new RuntimeUnavailableError("Inside an agent workflow, call the `init` passed to run({ init, input }), not the imported one.");
    }
    const { inlineInit } = require('../inline/invoke') as typeof import('../inline/invoke');
    return inlineInit(flavour)(options);
  };

  return { agent, init };
}
