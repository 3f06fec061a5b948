/**
 * How `fh session` prints sessions as text: the list as a table, one session's catalogue entry and
 * settings, its pending approvals, and its conversation one numbered line per message.
 */
import type { PendingApproval, SessionInfo } from '../wire/session-messages';
import type { SessionSummary } from '../client/sessions-list';
import type { Entry } from '../core/entries';
import { costText, usd } from '../core/costs';
import type { AgentUsage } from '../wire/messages';
import { formatTime, table } from './render';
import { plural } from '../core/plural';

export function labelsText(labels: Record<string, unknown>): string {
  const parts = Object.entries(labels).map(([n, v]) => (v === null || v === undefined ? n : `${n}=${String(v)}`));
  return parts.length ? parts.join(', ') : '-';
}

export function oneLineText(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export function json(value: unknown): string {
  try {
    return JSON.stringify(value) ?? 'undefined';
  } catch {
    return String(value);
  }
}

export function sessionTable(rows: SessionSummary[]): string {
  return table(
    ['ID', 'TITLE', 'STATUS', 'LABELS', 'LAST MESSAGE (UTC)'],
    rows.map((s) => [
      `${s.flagged ? '★ ' : ''}${s.id}`,
      oneLineText(s.title ?? '-', 40),
      `${s.status || '-'}${s.waitingApprovals ? ` (approval: ${oneLineText(s.waitingApprovals.map((a) => a.tool).join(', '), 30)})` : ''}${s.archived ? ' (archived)' : ''}${s.running ? '' : ' (ended)'}`,
      oneLineText(labelsText(s.labels), 40),
      formatTime(s.lastMessageAt),
    ]),
  );
}

export function infoText(i: SessionInfo, usage?: AgentUsage | null): string {
  const rows: Array<[string, string]> = [
    ['id', `${i.id}${i.flagged ? ' ★ flagged' : ''}${i.archived ? ' (archived)' : ''}${i.closed || i.failure ? ' (ended)' : ''}`],
    ['title', i.title ? `${i.title}${i.titleSource === 'generated' ? ' (generated)' : ''}` : '-'],
    ['agent', i.agent],
    ['status', `${i.status}${i.statusManual ? ' (set by hand: no automatic transitions)' : ''}`],
    ['labels', labelsText(i.labels)],
    ['model', `${i.settings.model ?? '(the agent\'s default)'} on connection ${i.settings.connection}${i.messageCount > 0 || i.forkedFrom ? ' (connection locked)' : ''}`],
    ['settings', `mode ${i.settings.permissionMode}, thinking ${i.settings.thinking}${i.settings.workingDirectory ? `, cwd ${i.settings.workingDirectory}` : ''}`],
    ['messages', `${i.messageCount} from the user; last ${formatTime(i.lastMessageAt === undefined ? undefined : new Date(i.lastMessageAt))}; created ${formatTime(new Date(i.createdAt))}`],
    ['turn', i.processing ? `running${i.current ? ` (message ${i.current})` : ''}` : 'idle'],
  ];
  if (i.failure) rows.push(['failed', `${oneLineText(i.failure.message, 200)} [${i.failure.code}]: every message is answered with this error`]);
  if (usage) rows.push(['cost', usageCostText(usage, i.settings.budget?.maxCostUsd)]);
  else if (i.settings.budget) rows.push(['budget', usd(i.settings.budget.maxCostUsd)]);
  if (i.queued.length) rows.push(['queued', i.queued.map((m) => `${m.id}: ${oneLineText(m.text, 50)}`).join('; ')]);
  if (i.pendingApprovals.length) rows.push(['approvals', i.pendingApprovals.map(approvalText).join('; ')]);
  if (i.forkedFrom) rows.push(['forked from', `${i.forkedFrom.sessionId} at message ${i.forkedFrom.atMessage}`]);
  if (i.continuedRuns) rows.push(['runs', `${i.continuedRuns + 1} (continued as new ${i.continuedRuns}×), history ${i.historyLength} events`]);
  const w = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(w)}  ${v}`).join('\n');
}

export function approvalText(a: PendingApproval): string {
  return `${a.callId} ${a.tool} ${oneLineText(json(a.input), 80)}`;
}

/** The conversation, one numbered line per message (full text with `full`). */
export function conversationText(messages: Entry[], full: boolean): string {
  if (messages.length === 0) return '(no messages yet)';
  const width = String(messages.length - 1).length;
  const clip = (t: string, n: number) => (full ? t : oneLineText(t, n));
  return messages
    .map((m, i) => {
      const n = `#${String(i).padStart(width)}`;
      switch (m.type) {
        case 'user':
          return `${n} user       ${clip(m.text, 100)}`;
        case 'assistant': {
          const parts = m.content.map((b) =>
            b.type === 'text' ? clip(b.text, 100) : b.type === 'tool_use' ? `→ ${b.name} ${clip(json(b.input), 80)}` : `(${b.type === 'thinking' ? 'thinking' : 'redacted thinking'})`,
          );
          return `${n} assistant  ${parts.join(full ? '\n' : ' ')}`;
        }
        case 'tool_results':
          return `${n} tools      ${m.results.map((r) => `${r.is_error ? '✗ ' : ''}${clip(r.content, 80)}`).join(full ? '\n' : ' | ')}`;
        case 'summary':
          return `${n} summary    ${clip(m.summary, 100)} (${m.compactedEntries} earlier messages)`;
        default:
          return `${n} ${(m as { type: string }).type}`;
      }
    })
    .join('\n');
}

/**
 * What a session's calls cost, from the table's prices: `$0.0123 over 2 model calls (1200 in, 80 out, 0 cache
 * read, 0 cache write); budget $1.00`. A model without a price makes the cost `unknown (…)`, never $0.
 */
export function usageCostText(u: AgentUsage, budgetUsd?: number): string {
  const tokens = `${u.inputTokens} in, ${u.outputTokens} out, ${u.cacheReadInputTokens ?? 0} cache read, ${u.cacheCreationInputTokens ?? 0} cache write`;
  const summarizer = u.summarizer.calls ? `; summaries ${u.summarizer.calls} calls, not priced` : '';
  return `${costText(u.cost)} over ${plural(u.modelCalls, 'model call', 'model calls')} (${tokens})${summarizer}${budgetUsd !== undefined ? `; budget ${usd(budgetUsd)}` : ''}`;
}
