import type { Entry, SummaryEntry } from '../../entries';
import type { CompactionReason } from '../../events';
import { makeEvent } from '../../events';
import type { RuntimePorts } from '../../ports';
import { estimateEntryTokens, estimateTextTokens } from '../../tokens';
import { buildSummaryEntry, applyCompaction } from './build';
import { splitForCompaction } from './cut';
import { CURRENT_SUMMARY_PLAN, type SummaryPlan } from './summary-plan';
import { fallbackSummary } from './fallback';
import { trackFileOperations } from './files';
import { renderEntriesForSummary } from './render';
import { buildSummaryRequest, finalizeSummaryText, planSummaryChunks, SUMMARIZER_SYSTEM_PROMPT } from './summary-prompt';

/**
 * Carries out one compaction: summarise the older slice (with the model, in chunks that each fit the
 * summariser's budget, folding each into the running summary), replace it with one summary entry, keep
 * the recent entries verbatim. Pure orchestration over the ports: on Temporal the summaries are
 * activities, everything else is deterministic workflow code.
 */
export interface CompactOptions {
  sessionId: string;
  reason: CompactionReason;
  keepRecentEntries: number;
  /** false: build the deterministic fallback summary without a model. */
  generateSummary: boolean;
  model: string;
  /** Tokens the summariser's whole request may use (its context window less its reply). */
  summarizerBudgetTokens: number;
  summaryMaxTokens: number;
  /** Tokens of everything that is not history (system prompt, tools), for before/after figures. */
  fixedTokens: number;
  /** How much of the summary may be the user's own messages, verbatim. */
  userMessageBudgetTokens: number;
  /** The chunking numbers the recorded decision carries (absent: a decision recorded before they were). */
  summaryPlan?: SummaryPlan;
  /** Extra summary instructions (a beforeCompact hook's), added to every summary request. */
  instructions?: string;
}

export interface CompactOutcome {
  entries: Entry[];
  summaryEntry: SummaryEntry;
  cut: number;
  messagesBefore: number;
  messagesAfter: number;
  tokensBefore: number;
  tokensAfter: number;
  trackedFileCount: number;
}

/** Result when nothing was compacted: too few entries, or a failed summary that must not be faked. */
export type CompactAttempt = { ok: true; outcome: CompactOutcome } | { ok: false; why: 'nothing_to_compact' | 'summary_failed'; error?: string };


export function historyTokens(entries: readonly Entry[]): number {
  let total = 0;
  for (const e of entries) total += estimateEntryTokens(e);
  return total;
}

export async function compactHistory(
  ports: RuntimePorts,
  entries: readonly Entry[],
  opts: CompactOptions,
): Promise<CompactAttempt> {
  const split = splitForCompaction(entries, opts.keepRecentEntries);
  if (split.cut === 0 || split.toCompact.length === 0) return { ok: false, why: 'nothing_to_compact' };
  const previous = split.previousSummary;
  const sliceEntries = split.toCompact.filter((e) => e.type !== 'summary');
  const files = trackFileOperations(sliceEntries, previous?.files);
  const tokensBefore = opts.fixedTokens + historyTokens(entries);

  let summaryText: string | undefined;
  let usedFallback = !opts.generateSummary;
  if (opts.generateSummary) {
    try {
      summaryText = await summarizeInChunks(ports, renderEntriesForSummary(sliceEntries), previous?.summary, files, opts);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      ports.emit(
        makeEvent(
          'error',
          { code: 'SUMMARIZATION_FAILED', message: `Compaction summary failed: ${message}`, recoverable: true },
          ports.now(),
        ),
      );
      // Under overflow the history cannot be sent as it is, so a model-free summary beats failing.
      if (opts.reason !== 'overflow') return { ok: false, why: 'summary_failed', error: message };
      usedFallback = true;
    }
  }
  if (usedFallback || summaryText === undefined) {
    summaryText = fallbackSummary(sliceEntries, previous, files);
    usedFallback = true;
  }

  const summaryEntry = buildSummaryEntry({
    summaryText,
    toCompact: split.toCompact,
    previousSummary: previous,
    files,
    fallback: usedFallback,
    userMessageBudgetTokens: opts.userMessageBudgetTokens,
  });
  const next = applyCompaction(entries, split.cut, summaryEntry);
  return {
    ok: true,
    outcome: {
      entries: next,
      summaryEntry,
      cut: split.cut,
      messagesBefore: entries.length,
      messagesAfter: next.length,
      tokensBefore,
      tokensAfter: opts.fixedTokens + historyTokens(next),
      trackedFileCount: files.read.length + files.modified.length,
    },
  };
}

/** Summarises chunk by chunk, each request updating the summary so far (never one overflowing request). */
async function summarizeInChunks(
  ports: RuntimePorts,
  rendered: string,
  previousSummary: string | undefined,
  files: ReturnType<typeof trackFileOperations>,
  opts: CompactOptions,
): Promise<string> {
  // From the second chunk on, the request carries the running summary (up to summaryMaxTokens long).
  const summaryTokens = Math.max(estimateTextTokens(previousSummary ?? ''), opts.summaryMaxTokens);
  const plan = opts.summaryPlan ?? CURRENT_SUMMARY_PLAN;
  const overhead = estimateTextTokens(SUMMARIZER_SYSTEM_PROMPT) + estimateTextTokens(opts.instructions ?? '') + summaryTokens + plan.requestSlackTokens;
  const chunkBudget = Math.max(plan.minChunkTokens, opts.summarizerBudgetTokens - overhead - opts.summaryMaxTokens);
  const chunks = planSummaryChunks(rendered, chunkBudget);
  let summary = previousSummary;
  for (const chunk of chunks) {
    const req = buildSummaryRequest({ renderedSlice: chunk, previousSummary: summary, files, instructions: opts.instructions });
    const res = await ports.summarize({
      sessionId: opts.sessionId,
      model: opts.model,
      system: req.system,
      userText: req.userText,
      maxTokens: opts.summaryMaxTokens,
    });
    summary = res.text;
  }
  return finalizeSummaryText(summary ?? '', files);
}
