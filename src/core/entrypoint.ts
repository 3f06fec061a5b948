import { defineAgent, type AgentConfig, type AgentDefinition, type InvokeImpl, type InitFn, type StrictAgentConfig } from './agent';
import type { Flavour } from './harness';

/**
 * Where an entrypoint's `agent().invoke` and imported `init` run. The Node entries use the inline
 * runtime; the workflow entries (what agent modules get inside a workflow bundle) use one that
 * explains why neither is available there, so no Node-only code is reachable from workflow code.
 */
export interface EntrypointRuntime {
  invoke: InvokeImpl;
  init(flavour: Flavour): InitFn;
}

/** What the entrypoints share; they differ in `flavour` (what is injected by default) and the runtime. */
export function entrypoint(flavour: Flavour, runtime: EntrypointRuntime) {
  function agent<I = unknown, O = unknown>(config: AgentConfig<I, O>): AgentDefinition<I, O> {
    return defineAgent(config, flavour, runtime.invoke);
  }

  /**
   * A harness outside `run` (scripts, tests). Inside a workflow, use the `init` that `run` receives:
   * it is bound to the workflow's state (queries, events).
   */
  const init: InitFn = (options) => runtime.init(flavour)(options);

  return { agent, init };
}

/** The strict entry: `agent` requires an input schema in its type too. */
export function strictEntrypoint(runtime: EntrypointRuntime) {
  const { agent, init } = entrypoint('strict', runtime);
  return { agent: agent as <I = unknown, O = unknown>(config: StrictAgentConfig<I, O>) => AgentDefinition<I, O>, init };
}
