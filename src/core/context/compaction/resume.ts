/**
 * The resume block: after a compaction the summary ends with what the agent was doing and its next
 * step, so the model continues the task instead of restarting it or re-running finished work. Pure:
 * read from the history as it stood before the compaction (the newest user request and what the last
 * assistant message said it would do next).
 */
import type { Entry } from '../../entries';
import { factsToKeep, newestFact } from './facts';

export const RESUME_HEADING = '## Resume Here';

/** Longest line of the block: it points at where the agent was, the kept entries hold the rest verbatim. */
const RESUME_ITEM_CHARS = 200;

/** The block, each item cut to fit `maxChars` in all (the gate's budget for a small window). */
export function resumeBlock(entries: readonly Entry[], maxChars = 4 * RESUME_ITEM_CHARS): string | undefined {
  const item = Math.max(40, Math.min(RESUME_ITEM_CHARS, Math.floor((maxChars - 120) / 2)));
  const cut = (s: string) => (s.length <= item ? s : `${s.slice(0, item - 1)}…`);
  // Only user and assistant entries say what the task is and what comes next.
  const facts = factsToKeep(entries.filter((e) => e.type === 'user' || e.type === 'assistant' || e.type === 'summary'));
  const task = newestFact(facts, 'task');
  const next = newestFact(facts, 'next_step');
  if (!task && !next) return undefined;
  const lines = [RESUME_HEADING];
  if (task) lines.push(`- You were working on: ${cut(task.text)}`);
  if (next) lines.push(`- Your next step: ${cut(next.text)}`);
  lines.push('- Continue from there; do not redo finished work.');
  return lines.join('\n');
}
