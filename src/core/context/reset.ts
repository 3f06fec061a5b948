/**
 * Session reset: the conversation is replaced by a short transfer summary (outcome,
 * decisions, open work: conclusions, never raw tool output), the agent's memory re-injected, and —
 * when a turn is running — that turn's prompt, so it is still answered. Used as the last overflow
 * ladder step and by a manual `session.reset()`. One summarize call; if it fails, a deterministic
 * summary stands in (a reset must not fail for want of a summary).
 */
import type { Entry, SummaryEntry, UserEntry } from '../entries';
import type { RuntimePorts } from '../ports';
import { estimateTextTokens } from '../tokens';
import { fallbackSummary } from './compaction/fallback';
import { trackFileOperations } from './compaction/files';
import { renderEntriesForSummary } from './compaction/render';
import { SUMMARIZE_MARKER } from './compaction/summary-prompt';
import { purgeToolResults } from './ladder';

export const TRANSFER_SYSTEM_PROMPT = [
  `${SUMMARIZE_MARKER} You write the hand-over note for an AI agent whose conversation is being reset.`,
  '',
  'In at most 15 short Markdown bullet lines, under the headings `## Outcome`, `## Decisions` and `## Open Work`,',
  'state what was achieved, what was decided (and why, in a few words) and what is still to do.',
  'Conclusions only: never copy tool output, file contents or long quotes. Output only the note.',
].join('\n');

/** Whether a summarisation request is a session reset's transfer summary (the audit tells them apart by it). */
export function isTransferRequest(system: unknown): boolean {
  return typeof system === 'string' && system.startsWith(TRANSFER_SYSTEM_PROMPT.split('\n')[0]!);
}

export const TRANSFER_SUMMARY_MAX_TOKENS = 1024;

export interface TransferOptions {
  sessionId: string;
  model: string;
  /** Tokens the transfer request may carry of the conversation (its newest part is kept). */
  budgetTokens: number;
  /** false: build the deterministic summary without a model (a summarize call that fails does the same). */
  generateSummary: boolean;
}

/** One summarize call over the conversation with every tool result reduced to its placeholder. */
export async function transferSummary(
  ports: Pick<RuntimePorts, 'summarize'>,
  entries: readonly Entry[],
  opts: TransferOptions,
): Promise<{ text: string; fallback: boolean }> {
  const purged = purgeToolResults(entries, entries.length).entries;
  const deterministic = () => fallbackSummary(entries.filter((e) => e.type !== 'summary'), entries.find((e): e is SummaryEntry => e.type === 'summary'), trackFileOperations(entries));
  if (!opts.generateSummary) return { text: deterministic(), fallback: true };
  try {
    const res = await ports.summarize({
      sessionId: opts.sessionId,
      model: opts.model,
      system: TRANSFER_SYSTEM_PROMPT,
      userText: `Conversation to hand over:\n\n${newestWithin(renderEntriesForSummary(purged), opts.budgetTokens)}`,
      maxTokens: TRANSFER_SUMMARY_MAX_TOKENS,
    });
    const text = res.text.trim();
    if (text) return { text, fallback: false };
  } catch {
    // fall through: the deterministic summary
  }
  return { text: deterministic(), fallback: true };
}

/** The conversation after a reset: transfer summary (memory injected with it), then the running prompt. */
export function resetConversation(opts: { summary: string; fallback: boolean; memory?: string; prompt?: string | UserEntry; compactedEntries: number }): Entry[] {
  const summaryEntry: SummaryEntry = {
    type: 'summary',
    summary: opts.summary,
    userMessages: [],
    files: { read: [], modified: [] },
    compactedEntries: opts.compactedEntries,
    fallback: opts.fallback,
    ...(opts.memory?.trim() ? { injected: opts.memory.trim() } : {}),
  };
  if (opts.prompt === undefined) return [summaryEntry];
  // The running prompt as it was sent, its attachments with it (an overflow's reset resends them).
  const prompt: UserEntry = typeof opts.prompt === 'string' ? { type: 'user', text: opts.prompt } : opts.prompt;
  return [summaryEntry, prompt];
}

/** The newest part of `text` that fits `tokens` (the start of a long conversation matters least now). */
function newestWithin(text: string, tokens: number): string {
  if (estimateTextTokens(text) <= tokens) return text;
  let chars = Math.max(0, Math.floor(text.length * (tokens / estimateTextTokens(text))));
  while (chars > 0 && estimateTextTokens(text.slice(text.length - chars)) > tokens) chars = Math.floor(chars * 0.9);
  return `[…earlier conversation omitted…]\n${text.slice(text.length - chars)}`;
}
