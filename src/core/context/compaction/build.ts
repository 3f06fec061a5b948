/** Builds the summary entry that replaces a compacted slice, and splices it into history. */
import type { Entry, FileOperations, SummaryEntry } from '../../entries';
import { mergeFileOperations } from './files';
import { stripFileOperationsSection } from './summary-prompt';
import { carryUserMessages, DEFAULT_USER_MESSAGE_BUDGET_TOKENS } from './user-messages';

export interface BuildSummaryInput {
  /** Model or fallback summary text (its File Operations section, if any, is dropped: see below). */
  summaryText: string;
  /** The compacted slice; a leading `previousSummary` in it is ignored (not counted twice). */
  toCompact: readonly Entry[];
  previousSummary?: SummaryEntry;
  files: FileOperations;
  userMessageBudgetTokens?: number;
  fallback: boolean;
}

export function buildSummaryEntry(input: BuildSummaryInput): SummaryEntry {
  const { previousSummary } = input;
  const slice = input.toCompact.filter((e) => e !== previousSummary);
  return {
    type: 'summary',
    // renderSummaryEntry appends the File Operations block from `files`; keeping the model's copy too
    // would show the model the block twice.
    summary: stripFileOperationsSection(input.summaryText),
    userMessages: carryUserMessages(slice, previousSummary?.userMessages ?? [], input.userMessageBudgetTokens ?? DEFAULT_USER_MESSAGE_BUDGET_TOKENS),
    // Merging again is idempotent and guarantees no tracked file is lost whatever the caller passed.
    files: mergeFileOperations(previousSummary?.files, input.files),
    compactedEntries: slice.reduce((n, e) => n + (e.type === 'summary' ? e.compactedEntries : 1), previousSummary?.compactedEntries ?? 0),
    fallback: input.fallback,
  };
}

export function applyCompaction(entries: readonly Entry[], cut: number, summaryEntry: SummaryEntry): Entry[] {
  return [summaryEntry, ...entries.slice(cut)];
}
