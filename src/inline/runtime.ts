import type { EntrypointRuntime } from '../core/entrypoint';

/**
 * The Node entries' runtime: in-process runs. Required lazily, so importing the SDK does not load the
 * Anthropic client until an agent is invoked.
 */
export const inlineRuntime: EntrypointRuntime = {
  invoke: (def, input, options) => (require('./invoke') as typeof import('./invoke')).invokeInline(def, input, options),
  init: (flavour) => (options) => (require('./invoke') as typeof import('./invoke')).inlineInit(flavour)(options),
};
