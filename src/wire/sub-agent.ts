/**
 * How a parent starts a sub-agent's child workflow: the agent's input wrapped with where it runs.
 * The child answers with a SubAgentOutcome (its result and its events, for the parent to nest).
 */
export interface SubAgentEnvelope {
  fhSubAgent: {
    /** The agent's own input. */
    input: unknown;
    /** The child's depth (the top-level run is 0). */
    depth: number;
    /** Its working directory when the parent gave one (a worktree): the default sandbox cwd. */
    cwd?: string;
    /** The parent's workflow id. */
    parent: string;
    /** The offsets the parent reserved for the child's stream: the child's stream starts at `from` and stays below `to`. */
    stream?: { from: number; to: number };
    /** The parent's model connection, the child's unless its init names one (absent: the default, and in envelopes from before connections). */
    connection?: string;
  };
}

export function isSubAgentEnvelope(input: unknown): input is SubAgentEnvelope {
  return typeof input === 'object' && input !== null && typeof (input as SubAgentEnvelope).fhSubAgent === 'object';
}
