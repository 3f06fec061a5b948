/**
 * Pinning a stateful MCP server's connection to one worker (Temporal's worker-specific task queue
 * pattern). A run asks, by the activity `fhMcpPin` on its tool queue, which worker will own its
 * connection to a server: whichever worker takes the activity answers with a task queue only it polls,
 * and the answer is recorded in history. The run's list and calls to that server then go to that queue,
 * so they reach the one connection. When that worker is gone, a call waits `MCP_PIN_WAIT` unstarted
 * (schedule-to-start), and the run asks again: another worker, a new connection. Workflow-safe: pure.
 */
import type { McpServerRef } from '../core/mcp';

export interface McpPinInput {
  server: McpServerRef;
}

export interface McpPinResult {
  /** The queue only the answering worker polls; null: that worker has none (calls go where they always went). */
  taskQueue: string | null;
  /** Whether the server keeps state per connection (a declared or registered `stateful: false` does not). */
  stateful: boolean;
}

/** How long a pinned call waits for its worker before the run decides the worker is gone. */
export const MCP_PIN_WAIT = '15 seconds';

/** The pinned queue of a worker serving `servedQueue`: readable (the identity) and unique (the id). */
export function mcpPinTaskQueue(servedQueue: string, identity: string, id: string): string {
  return `${servedQueue}:mcp-${identity.replace(/[^A-Za-z0-9_.@-]/g, '_').slice(0, 60)}-${id}`;
}
