/**
 * What `fh chat` prints for a sub-agent's event (at any depth) on the session's stream. Its text is not
 * the session's reply (its result comes back as a tool result), so it is labelled with the path from the
 * session and indented by depth, and shown as whole messages: a sub-agent's deltas would interleave with
 * the session's own open line.
 */
import type { StreamEvent } from '../../wire/stream';
import { compactJson } from './styles';

/** A sub-agent's message shows at most this many lines (the rest is counted). */
export const SUB_AGENT_LINES = 4;

export interface SubAgentLine {
  kind: 'text' | 'tool' | 'error';
  text: string;
}

export function subAgentLines(path: readonly string[], e: StreamEvent, width: number): SubAgentLine[] {
  const indent = '  '.repeat(path.length);
  const label = `${indent}[${path.join(' › ')}]`;
  const fit = (text: string) => (text.length > width ? `${text.slice(0, Math.max(1, width - 1))}…` : text);
  switch (e.type) {
    case 'message_end': {
      const lines = e.content.flatMap((b) => (b.type === 'text' ? b.text.split('\n') : [])).filter((l) => l.trim());
      const shown = lines.slice(0, SUB_AGENT_LINES);
      if (lines.length > shown.length) shown.push(`… ${lines.length - shown.length} more lines`);
      return shown.map((l) => ({ kind: 'text', text: fit(`${label} ${l}`) }));
    }
    case 'tool_started':
      return [{ kind: 'tool', text: fit(`${label} → ${e.name} ${compactJson(e.input, width)}`) }];
    case 'tool_ended':
      return e.isError ? [{ kind: 'error', text: fit(`${label} ✗ ${e.content.split('\n').find((l) => l.trim()) ?? ''}`) }] : [];
    default:
      return [];
  }
}
