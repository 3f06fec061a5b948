/**
 * What `@fabric-harness/sdk` is inside a workflow bundle (the bundler aliases it here): the same
 * exports as ./index, with no path to the inline runtime, the Anthropic client or activities, so the
 * bundle holds only workflow-safe code and Temporal's check for Node modules applies to user code.
 */
import { entrypoint } from './core/entrypoint';
import { workflowRuntime } from './core/workflow-runtime';

export const { agent, init } = entrypoint('default', workflowRuntime);
export * from './core/entry-exports';
export { openSession, listInlineSessions } from './core/inline-sessions-unavailable';
