/**
 * The seam between compaction and the agent's memory file (seed 004 §5): before older history is
 * compacted away the controller asks the memory to flush what is worth keeping from it; after a
 * compaction, a session reset or at the start of a new session, the memory's current text is
 * re-injected. Implementations live where the runtime lives (on Temporal, behind an activity).
 */
import type { Entry } from '../entries';
import type { CompactionReason } from '../events';

export interface ContextMemory {
  /** The memory text to re-inject now (undefined: nothing remembered yet). */
  current(): string | undefined;
  /** Extracts decisions, preferences, key artifacts and patterns from `dropped` into the memory file. */
  flush(dropped: readonly Entry[], reason: CompactionReason): Promise<void>;
}
