/**
 * What a memory flush asks the model, and how the result is kept in budget. Pure: the
 * runtimes (the fhFlushMemory activity, the inline ports) supply the model call and the storage.
 */
import type { Entry } from '../entries';
import { renderEntryForSummary } from './compaction/render';
import { estimateTextTokens } from '../tokens';

export const MEMORY_EXTRACT_SYSTEM =
  'You maintain a memory file for an AI agent: durable notes that outlive its conversations. ' +
  'Reply with the updated memory file only: a Markdown bullet list ("- " per line), no preamble.';

export const MEMORY_COMPACT_SYSTEM =
  'You shorten an AI agent\'s memory file. Reply with the shortened file only: a Markdown bullet list ("- " per line), no preamble.';

/** Marks the extraction request (the fake model and logs tell it from a summary request by it). */
export const MEMORY_EXTRACT_MARKER = '<memory-extraction>';
export const MEMORY_COMPACT_MARKER = '<memory-compaction>';

/** The dropped slice, rendered for the extraction: each entry cut as the summariser cuts it. */
const DROPPED_CHAR_BUDGET = 200_000;

export function extractionPrompt(existing: string | undefined, dropped: readonly Entry[]): string {
  let rendered = dropped.map(renderEntryForSummary).join('\n\n');
  // The oldest part goes first when the slice is huge: the newest work matters most to remember.
  if (rendered.length > DROPPED_CHAR_BUDGET) rendered = `…\n${rendered.slice(rendered.length - DROPPED_CHAR_BUDGET)}`;
  return [
    MEMORY_EXTRACT_MARKER,
    'Update the memory file with what is worth remembering from the conversation below, which is about to be compacted away:',
    '- decisions made (and why), - preferences the user showed, - key artifacts (files, names, ids, URLs), - patterns observed (what works, what fails).',
    'Merge with the existing memory: keep what is still true, drop duplicates and what the conversation made obsolete.',
    '',
    '<existing-memory>',
    existing?.trim() || '(empty)',
    '</existing-memory>',
    '',
    '<conversation>',
    rendered,
    '</conversation>',
  ].join('\n');
}

export function compactionPrompt(memory: string, maxTokens: number): string {
  return [
    MEMORY_COMPACT_MARKER,
    `This memory file is over its budget of ${maxTokens} tokens. Merge related bullets and drop the least useful ones until it fits well under the budget.`,
    '',
    '<memory>',
    memory.trim(),
    '</memory>',
  ].join('\n');
}

/** Bullets, oldest first: a line starting "- " or "* " begins one; other lines continue it. */
function bullets(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    if (/^\s*[-*] /.test(line) || out.length === 0) out.push(line);
    else out[out.length - 1] += `\n${line}`;
  }
  return out;
}

/** The newest bullets that fit `maxTokens` (oldest dropped first): the last resort, deterministic. */
export function trimOldestBullets(text: string, maxTokens: number): string {
  const all = bullets(text);
  const kept: string[] = [];
  let tokens = 0;
  for (let i = all.length - 1; i >= 0; i--) {
    const t = estimateTextTokens(all[i]!) + 1;
    if (tokens + t > maxTokens) break;
    kept.unshift(all[i]!);
    tokens += t;
  }
  return kept.join('\n');
}

export type MemoryModelCall = (req: { system: string; userText: string; maxTokens: number }) => Promise<{ text: string }>;

export interface MemoryUpdate {
  text: string;
  tokens: number;
  /** How it was kept in budget: not at all needed, a second model call, or dropping oldest bullets. */
  compacted: 'no' | 'model' | 'trimmed';
}

/**
 * One extraction call merging the dropped slice into the existing memory; over budget, one compaction
 * call; still over, the oldest bullets go. The result always fits `maxTokens`.
 */
export async function updateMemory(
  call: MemoryModelCall,
  input: { existing: string | undefined; dropped: readonly Entry[]; maxTokens: number },
): Promise<MemoryUpdate> {
  const { maxTokens } = input;
  // Room to answer a little over budget, so an over-long answer is compacted rather than cut mid-bullet.
  const replyTokens = Math.max(256, maxTokens * 2);
  let text = (await call({ system: MEMORY_EXTRACT_SYSTEM, userText: extractionPrompt(input.existing, input.dropped), maxTokens: replyTokens })).text.trim();
  if (estimateTextTokens(text) <= maxTokens) return { text, tokens: estimateTextTokens(text), compacted: 'no' };
  text = (await call({ system: MEMORY_COMPACT_SYSTEM, userText: compactionPrompt(text, maxTokens), maxTokens: replyTokens })).text.trim();
  if (estimateTextTokens(text) <= maxTokens) return { text, tokens: estimateTextTokens(text), compacted: 'model' };
  text = trimOldestBullets(text, maxTokens);
  return { text, tokens: estimateTextTokens(text), compacted: 'trimmed' };
}

/** The memory as the model sees it after a compaction (in the summary entry) or in a new session's system prompt. */
export function memoryBlock(text: string, heading = '## Memory'): string {
  return `${heading}\n${text.trim()}`;
}
