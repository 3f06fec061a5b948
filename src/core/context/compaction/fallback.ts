/**
 * A deterministic summary built from the entries alone, for when no model is available (or the
 * summariser failed under overflow). Same sections as the model summary, so the agent reads one format.
 */
import { assistantText, type Entry, type FileOperations, type SummaryEntry, type ToolUseBlock } from '../../entries';
import { truncateWithMarker } from './render';
import { finalizeSummaryText } from './summary-prompt';

const HEAD_CHARS = 200;
const ARG_CHARS = 120;
/** Long sessions would make the list as long as the history it replaces; keep the newest items. */
const MAX_ITEMS = 40;

function head(text: string, max = HEAD_CHARS): string {
  return truncateWithMarker(text.replace(/\s+/g, ' ').trim(), max);
}

/** A tool call as `name(first argument)`. */
function describeCall(b: ToolUseBlock): string {
  let arg = '';
  if (b.input !== null && typeof b.input === 'object') {
    const first = Object.values(b.input as Record<string, unknown>)[0];
    if (first !== undefined) arg = typeof first === 'string' ? first : (JSON.stringify(first) ?? '');
  } else if (b.input !== undefined) {
    arg = JSON.stringify(b.input) ?? '';
  }
  return `${b.name}(${head(arg, ARG_CHARS)})`;
}

/** The body of one `## Name` section of an earlier summary, or undefined. */
export function extractSection(summary: string, name: string): string | undefined {
  const lines = summary.split('\n');
  const start = lines.findIndex((l) => /^#{1,6}\s/.test(l) && l.replace(/^#{1,6}\s*/, '').replace(/:\s*$/, '').trim() === name);
  if (start === -1) return undefined;
  let end = lines.length;
  for (let i = start + 1; i < lines.length; i++) {
    if (/^#{1,6}\s/.test(lines[i]!)) {
      end = i;
      break;
    }
  }
  const body = lines.slice(start + 1, end).join('\n').trim();
  return body && body !== 'None.' ? body : undefined;
}

function bulletLines(section: string | undefined): string[] {
  return section ? section.split('\n').filter((l) => l.trim().length > 0) : [];
}

function cap(items: string[]): string[] {
  if (items.length <= MAX_ITEMS) return items;
  return [`- … ${items.length - MAX_ITEMS} earlier items omitted`, ...items.slice(-MAX_ITEMS)];
}

function section(name: string, items: string[]): string {
  return `## ${name}\n${items.length > 0 ? cap(items).join('\n') : 'None.'}`;
}

export function fallbackSummary(toCompact: readonly Entry[], previousSummary: SummaryEntry | undefined, files: FileOperations): string {
  const prev = previousSummary?.summary ?? '';
  const progress = bulletLines(extractSection(prev, 'Progress'));
  const failed = bulletLines(extractSection(prev, 'Failed Approaches'));
  const names = new Map<string, ToolUseBlock>();
  let firstUser: string | undefined;
  let lastAssistant: string | undefined;

  for (const e of toCompact) {
    if (e.type === 'user') {
      firstUser ??= e.text;
    } else if (e.type === 'assistant') {
      const text = assistantText(e).trim();
      if (text) {
        progress.push(`- Assistant: ${head(text)}`);
        lastAssistant = text;
      }
      for (const b of e.content) {
        if (b.type !== 'tool_use') continue;
        names.set(b.id, b);
        progress.push(`- Called ${describeCall(b)}`);
      }
    } else if (e.type === 'tool_results') {
      for (const r of e.results) {
        if (!r.is_error) continue;
        const call = names.get(r.tool_use_id);
        failed.push(`- ${call ? describeCall(call) : 'Tool call'} failed: ${head(r.content)}`);
      }
    }
  }

  // The goal is the session's first request: the earlier summary's goal, else its oldest carried user
  // message, else the first user message of this slice.
  const oldestCarried = previousSummary?.userMessages[previousSummary.userMessages.length - 1];
  const goal = extractSection(prev, 'Goal') ?? (oldestCarried !== undefined ? head(oldestCarried, 500) : undefined) ?? (firstUser !== undefined ? head(firstUser, 500) : undefined);
  const last = lastAssistant !== undefined ? [`- Last assistant message: ${head(lastAssistant)}`] : bulletLines(extractSection(prev, 'Open Issues'));
  const next = lastAssistant !== undefined ? [`- Continue from: ${head(lastAssistant)}`] : bulletLines(extractSection(prev, 'Next Steps'));

  const text = [
    `## Goal\n${goal ?? 'Not recorded.'}`,
    section('Progress', progress),
    section('Key Decisions', bulletLines(extractSection(prev, 'Key Decisions'))),
    section('Failed Approaches', failed),
    section('Open Issues', last),
    section('Next Steps', next),
  ].join('\n\n');
  return finalizeSummaryText(text, files);
}
