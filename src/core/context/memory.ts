/**
 * The seam between compaction and the agent's memory file: before older history is
 * compacted away the controller asks the memory to flush what is worth keeping from it; after a
 * compaction, a session reset or at the start of a new session, the memory's current text is
 * re-injected. Implementations live where the runtime lives (on Temporal, behind an activity).
 */
import type { Entry } from '../entries';
import type { CompactionReason } from '../events';

export interface ContextMemory {
  /** The memory text to re-inject now (undefined: nothing remembered yet). */
  current(): string | undefined;
  /**
   * Extracts decisions, preferences, key artifacts and patterns from the first `dropped` entries of
   * `conversation` into the memory file. The whole conversation (the session's own array), not a
   * slice: on Temporal its stored prefix then travels by reference, so history stays flat.
   */
  flush(conversation: readonly Entry[], dropped: number, reason: CompactionReason): Promise<void>;
}

/** A memory file as the runtime hands it back: its text, content hash and estimated tokens. */
export interface MemoryFile {
  text: string;
  hash: string;
  tokens: number;
}

export interface MemoryFlushRequest {
  sessionId: string;
  key: string;
  maxTokens: number;
  model: string;
  /** The model connection (absent: the default, 'anthropic'). */
  connection?: string;
  reason: CompactionReason;
  /** The conversation before the compaction (the runtime refers to what it already stored of it). */
  entries: readonly Entry[];
  /** How many of `entries`, from the start, the compaction drops. */
  dropped: number;
}

/** What a runtime does with memory files (absent: the runtime keeps none). */
export interface MemoryPort {
  /** The agent the runtime runs: the default key. */
  readonly agentName: string;
  load(key: string): Promise<MemoryFile | undefined>;
  /** Extracts from the dropped entries, merges with the stored file, keeps it in budget, stores it. */
  flush(req: MemoryFlushRequest): Promise<MemoryFile>;
}

/**
 * The session's memory over a runtime's port: keeps the latest text (what the last flush returned, or
 * what was stored when the session started) for re-injection after a compaction.
 */
export class PortMemory implements ContextMemory {
  private text: string | undefined;

  constructor(
    private readonly port: MemoryPort,
    private readonly settings: { key: string; maxTokens: number },
    private readonly call: { sessionId: string; model: () => string },
    initial?: string,
  ) {
    this.text = initial?.trim() || undefined;
  }

  current(): string | undefined {
    return this.text;
  }

  async flush(entries: readonly Entry[], count: number, reason: CompactionReason): Promise<void> {
    if (count <= 0) return;
    const file = await this.port.flush({
      sessionId: this.call.sessionId,
      key: this.settings.key,
      maxTokens: this.settings.maxTokens,
      model: this.call.model(),
      reason,
      entries,
      dropped: count,
    });
    this.text = file.text.trim() || undefined;
  }
}
