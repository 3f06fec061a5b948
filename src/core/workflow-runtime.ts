import type { EntrypointRuntime } from './entrypoint';
import { RuntimeUnavailableError } from './errors';

/** The runtime of the workflow entries: inside a workflow there is no in-process runtime to call. */
export const workflowRuntime: EntrypointRuntime = {
  invoke: async (def) => {
    throw new RuntimeUnavailableError(
      `agent '${def.name}'.invoke() runs the agent in this process; workflow code cannot. Start it with startAgent() (or \`fh run\`), or from workflow code call its run({ init, input }).`,
    );
  },
  init: () => async () => {
    throw new RuntimeUnavailableError("Inside an agent workflow, call the `init` passed to run({ init, input }), not the imported one.");
  },
};
