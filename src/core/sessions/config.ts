/** How an agent's sessions behave (agent({ sessions })): the same for every session of the agent. */
export interface SessionAgentConfig {
  /** Custom statuses besides todo, in-progress, needs-review, done and cancelled. */
  statuses?: readonly string[];
  /**
   * The small model that writes a session's title from its first message, on the session's connection
   * (default: Claude Haiku on the default connection, the session's own model on a named one).
   */
  titleModel?: string;
}
