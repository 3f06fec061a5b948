/**
 * The structured summarisation request, chunking for slices larger than the summariser's budget, and
 * the final fix-up that makes the File Operations section exactly the tracked block.
 */
import { renderFileOperations, type FileOperations } from '../../entries';

export const SUMMARY_SECTIONS = [
  'Goal',
  'Progress',
  'Key Decisions',
  'Failed Approaches',
  'Open Issues',
  'Next Steps',
  'File Operations',
] as const;

export type SummarySection = (typeof SUMMARY_SECTIONS)[number];

/** First-line marker: a scripted fake model server routes summarisation requests on it. */
export const SUMMARIZE_MARKER = '[fabric-harness:summarize]';

export const SUMMARIZER_SYSTEM_PROMPT = [
  `${SUMMARIZE_MARKER} You summarise an AI agent's conversation so the agent can continue after older history is removed.`,
  '',
  'Write a concise, factual summary in Markdown with exactly these sections, in this order, each as a `## ` heading:',
  ...SUMMARY_SECTIONS.map((s) => `- ${s}`),
  '',
  'Section guidance:',
  '- Goal: what the user asked for, in their terms.',
  '- Progress: what was accomplished, with file paths, identifiers and results.',
  '- Key Decisions: important choices and why they were made.',
  '- Failed Approaches: what was tried and did not work, and why.',
  '- Open Issues: remaining bugs, edge cases and TODOs.',
  '- Next Steps: what should happen next.',
  '- File Operations: copy the tracked file block you are given verbatim.',
  '',
  'Keep exact identifiers, paths, numbers and error messages. Do not invent facts. Write "None." for an empty section.',
  'Reply with the summary only: no preamble, no closing remarks.',
].join('\n');

function filesBlock(files: FileOperations): string {
  const block = renderFileOperations(files);
  return files.read.length + files.modified.length > 0 ? block : `${block}\nNone.`;
}

export function buildSummaryRequest(input: {
  renderedSlice: string;
  previousSummary?: string;
  files: FileOperations;
  /** Extra instructions from the agent (a beforeCompact hook), after the standard ones. */
  instructions?: string;
}): { system: string; userText: string } {
  const files = filesBlock(input.files);
  const extra = input.instructions?.trim();
  const previous = input.previousSummary?.trim();
  const userText = previous
    ? [
        'Below is the existing summary of the earlier conversation, followed by the conversation that happened after it.',
        'UPDATE the existing summary with the new conversation: keep what is still true, add new progress, decisions,',
        'failures and issues, move finished items from Next Steps to Progress, and drop items that were resolved.',
        'Do not summarise the new conversation on its own: the result must replace the existing summary.',
        '',
        '<existing-summary>',
        previous,
        '</existing-summary>',
        '',
        '<new-conversation>',
        input.renderedSlice,
        '</new-conversation>',
        '',
        'Tracked file operations (copy verbatim as the File Operations section):',
        files,
      ].join('\n')
    : [
        'Summarise the conversation below.',
        '',
        '<conversation>',
        input.renderedSlice,
        '</conversation>',
        '',
        'Tracked file operations (copy verbatim as the File Operations section):',
        files,
      ].join('\n');
  // In the user text, not the system prompt: the system prompt stays one constant string.
  return { system: SUMMARIZER_SYSTEM_PROMPT, userText: extra ? `${userText}\n\nAdditional instructions for this summary:\n${extra}` : userText };
}

const CHARS_PER_TOKEN = 4;

/**
 * Splits a rendered slice into chunks of at most `budgetTokens` (minus `overheadTokens`) each, for an
 * iterative fold: summarise chunk 1, then update that summary with chunk 2, and so on. Splits on entry
 * boundaries (blank lines) where possible, then on lines, and hard-splits a single line only when it
 * alone is over budget. Chunks concatenate back to the input exactly.
 */
export function planSummaryChunks(renderedSlice: string, budgetTokens: number, overheadTokens = 0): string[] {
  const maxTokens = Math.floor(budgetTokens - overheadTokens);
  if (!(maxTokens >= 1)) {
    throw new RangeError(`Summary chunk budget must leave room for text: budget ${budgetTokens}, overhead ${overheadTokens}`);
  }
  if (renderedSlice.length === 0) return [];
  const maxChars = maxTokens * CHARS_PER_TOKEN;
  if (renderedSlice.length <= maxChars) return [renderedSlice];

  const chunks: string[] = [];
  let current = '';
  const flush = () => {
    if (current) chunks.push(current);
    current = '';
  };
  const add = (piece: string) => {
    if (current.length + piece.length > maxChars) flush();
    current += piece;
  };
  for (const block of splitKeeping(renderedSlice, '\n\n')) {
    if (block.length <= maxChars) {
      add(block);
      continue;
    }
    for (const line of splitKeeping(block, '\n')) {
      if (line.length <= maxChars) {
        add(line);
        continue;
      }
      flush();
      for (const part of hardSplit(line, maxChars)) add(part);
    }
  }
  flush();
  return chunks;
}

/** Splits after each separator, keeping it on the left piece, so pieces join back to `s`. */
function splitKeeping(s: string, sep: string): string[] {
  const out: string[] = [];
  let start = 0;
  for (let i = s.indexOf(sep); i !== -1; i = s.indexOf(sep, start)) {
    out.push(s.slice(start, i + sep.length));
    start = i + sep.length;
  }
  if (start < s.length) out.push(s.slice(start));
  return out;
}

function hardSplit(s: string, maxChars: number): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < s.length) {
    let end = Math.min(s.length, i + maxChars);
    // Keep surrogate pairs whole (maxChars >= 4, so this always makes progress).
    if (end < s.length && isHighSurrogate(s.charCodeAt(end - 1))) end--;
    out.push(s.slice(i, end));
    i = end;
  }
  return out;
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

/** Matches a File Operations heading however the model wrote it: `## File Operations`, `**File Operations:**`, … */
const FILE_OPS_HEADING = /^[ \t]*(?:#{1,6}[ \t]*)?(?:\*\*|__)?[ \t]*File Operations[ \t]*:?[ \t]*(?:\*\*|__)?[ \t]*:?[ \t]*$/im;
/** Any following section heading ends it. */
const NEXT_HEADING = /^[ \t]*(?:#{1,6}[ \t]+\S|(?:\*\*|__)[^\n*_]+(?:\*\*|__)[ \t]*:?[ \t]*$)/m;

/** The summary text without its File Operations section (the entry renders that block from `files`). */
export function stripFileOperationsSection(text: string): string {
  const m = FILE_OPS_HEADING.exec(text);
  if (!m) return text.trim();
  const before = text.slice(0, m.index);
  const rest = text.slice(m.index + m[0].length);
  const next = NEXT_HEADING.exec(rest);
  const after = next ? rest.slice(next.index) : '';
  return `${before.trimEnd()}\n\n${after.trimStart()}`.trim();
}

/** The model's summary with its File Operations section replaced by the tracked block, verbatim, last. */
export function finalizeSummaryText(modelText: string, files: FileOperations): string {
  let body = modelText;
  // Models sometimes repeat the section; remove every copy.
  for (let prev = ''; prev !== body; ) {
    prev = body;
    body = stripFileOperationsSection(body);
  }
  return `${body}\n\n${filesBlock(files)}`.trim();
}
