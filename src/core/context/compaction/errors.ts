/** Typed compaction errors. Plain classes (no Node APIs) so workflow code can throw and match them. */
import { FabricError } from '../../errors';

export class InvalidCompactionSettingsError extends FabricError {
  declare readonly code: 'INVALID_COMPACTION_SETTINGS';
  /** The offending setting, as the caller spelled it (e.g. `reserveTokens`, `compactionKeepRecentEntries`). */
  readonly field: string;

  constructor(field: string, problem: string) {
    super('INVALID_COMPACTION_SETTINGS', `Invalid compaction setting "${field}": ${problem}`);
    this.field = field;
  }
}

export const CONTEXT_WINDOW_SUGGESTIONS: readonly string[] = [
  'use a model with a larger context window',
  'lower keepRecentEntries so compaction can fold more history into the summary',
  'compact manually with session.compact()',
  'start a new session (or branch) and carry over a short summary',
];

export class ContextWindowExceededError extends FabricError {
  declare readonly code: 'CONTEXT_WINDOW_EXCEEDED';
  readonly estimatedTokens?: number;
  readonly contextWindowTokens: number;
  readonly suggestions: string[];

  constructor(opts: { contextWindowTokens: number; estimatedTokens?: number; detail?: string; suggestions?: readonly string[] }) {
    const suggestions = [...(opts.suggestions ?? CONTEXT_WINDOW_SUGGESTIONS)];
    const size =
      opts.estimatedTokens !== undefined
        ? `~${opts.estimatedTokens} tokens do not fit the ${opts.contextWindowTokens}-token context window`
        : `the request does not fit the ${opts.contextWindowTokens}-token context window`;
    super(
      'CONTEXT_WINDOW_EXCEEDED',
      `Context window exceeded: ${size}${opts.detail ? ` (${opts.detail})` : ''}. Try:\n` +
        suggestions.map((s) => `- ${s}`).join('\n'),
    );
    this.estimatedTokens = opts.estimatedTokens;
    this.contextWindowTokens = opts.contextWindowTokens;
    this.suggestions = suggestions;
  }
}
