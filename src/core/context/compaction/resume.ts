/**
 * The resume block: after a compaction the summary ends with what the agent was doing and its next
 * step, so the model continues the task instead of restarting it or re-running finished work. Pure:
 * read from the history as it stood before the compaction (the newest user request and what the last
 * assistant message said it would do next).
 */
import type { Entry } from '../../entries';
import { factsToKeep, newestFact } from './facts';

export const RESUME_HEADING = '## Resume Here';

export function resumeBlock(entries: readonly Entry[]): string | undefined {
  // Only user and assistant entries say what the task is and what comes next.
  const facts = factsToKeep(entries.filter((e) => e.type === 'user' || e.type === 'assistant' || e.type === 'summary'));
  const task = newestFact(facts, 'task');
  const next = newestFact(facts, 'next_step');
  if (!task && !next) return undefined;
  const lines = [RESUME_HEADING];
  if (task) lines.push(`- You were working on: ${task.text}`);
  if (next) lines.push(`- Your next step: ${next.text}`);
  lines.push('- Continue from that step. The work listed above as done is done: do not start over or repeat it.');
  return lines.join('\n');
}
