/**
 * The compacted slice as readable text for the summariser. Tool arguments and results are cut to 500
 * characters each: the summary needs what happened, not full file contents.
 */
import { assistantText, renderSummaryEntry, type Entry } from '../../entries';

export const RENDER_TRUNCATE_CHARS = 500;

/** `s` cut to `max` characters with a marker saying how much was dropped. */
export function truncateWithMarker(s: string, max: number): string {
  if (s.length <= max) return s;
  let end = max;
  // Never leave half a surrogate pair behind.
  if (end > 0 && isHighSurrogate(s.charCodeAt(end - 1))) end--;
  return `${s.slice(0, end)}…[truncated ${s.length - end} chars]`;
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

export function renderEntryForSummary(e: Entry): string {
  switch (e.type) {
    case 'user':
      return `User: ${e.text}`;
    case 'assistant': {
      const lines: string[] = [];
      const text = assistantText(e);
      if (text.trim()) lines.push(`Assistant: ${text}`);
      // Thinking blocks are skipped: they are the model's working, not what it said or did, and
      // redacted ones are unreadable; the summary keeps the text and the tool calls.
      for (const b of e.content) {
        if (b.type === 'tool_use') {
          lines.push(`Tool call ${b.name}(${truncateWithMarker(JSON.stringify(b.input) ?? '', RENDER_TRUNCATE_CHARS)})`);
        }
      }
      return lines.length > 0 ? lines.join('\n') : 'Assistant: (no content)';
    }
    case 'tool_results':
      return e.results
        .map((r) => `Tool result${r.is_error ? ' (error)' : ''}: ${truncateWithMarker(r.content, RENDER_TRUNCATE_CHARS)}`)
        .join('\n');
    case 'summary':
      // Only reached for a summary that is not the leading one (that one is passed as previousSummary).
      return `Earlier summary:\n${renderSummaryEntry(e)}`;
  }
}

/** Entries separated by a blank line, so the chunk planner can split on entry boundaries. */
export function renderEntriesForSummary(entries: readonly Entry[]): string {
  return entries.map(renderEntryForSummary).join('\n\n');
}
