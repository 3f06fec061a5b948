/** What `@fabric-harness/sdk/strict` is inside a workflow bundle (see ../workflow-entry). */
import { strictEntrypoint } from '../core/entrypoint';
import { workflowRuntime } from '../core/workflow-runtime';

export const { agent, init } = strictEntrypoint(workflowRuntime);
export * from '../core/entry-exports';
export { openSession, listInlineSessions } from '../core/inline-sessions-unavailable';
