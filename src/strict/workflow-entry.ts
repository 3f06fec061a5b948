/** What `@fabric-harness/sdk/strict` is inside a workflow bundle (see ../workflow-entry). */
import { entrypoint } from '../core/entrypoint';
import { workflowRuntime } from '../core/workflow-runtime';

export const { agent, init } = entrypoint('strict', workflowRuntime);
export * from '../core/entry-exports';
