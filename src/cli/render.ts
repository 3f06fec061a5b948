/** Plain-text rendering for `fh`: tables, bars, times. No colours (output is often piped or logged). */
import { describeGate } from '../core/context/compaction/gate';
import type { ContextBudget } from '../core/budget';
import type { HistoryRunState } from '../audit/history-state';
import type { CompactionState } from '../core/conversation';
import { plural } from '../core/plural';

/** A left-aligned table with a header row; cells are padded to the widest in their column. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

/** A bar of `width` cells: filled for `part` of `whole` (at least one cell when part > 0). */
export function bar(part: number, whole: number, width: number): string {
  if (whole <= 0) return ' '.repeat(width);
  let filled = Math.round((part / whole) * width);
  if (part > 0 && filled === 0) filled = 1;
  filled = Math.min(width, Math.max(0, filled));
  return '█'.repeat(filled) + '░'.repeat(width - filled);
}

export function pct(part: number, whole: number): string {
  return whole > 0 ? `${((part / whole) * 100).toFixed(1)}%` : '-';
}

/** "2026-11-22 01:54:26" in UTC (stable across machines, sortable). */
export function formatTime(d: Date | string | undefined | null): string {
  if (!d) return '-';
  const date = typeof d === 'string' ? new Date(d) : d;
  return Number.isNaN(date.getTime()) ? '-' : date.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

export function formatBudget(workflowId: string, sessionId: string | undefined, b: ContextBudget, width = 40): string {
  const layers: Array<[string, number]> = [
    ['system prompt', b.layers.systemPrompt],
    ['tool definitions', b.layers.toolDefinitions],
    ['summaries', b.layers.summaries],
    ['history', b.layers.history],
    ['reserved for reply', b.layers.reservedForResponse],
  ];
  const used = layers.reduce((s, [, n]) => s + n, 0);
  layers.push(['free', Math.max(0, b.contextWindowTokens - used)]);
  const nameWidth = Math.max(...layers.map(([n]) => n.length));
  const numWidth = Math.max(...layers.map(([, n]) => String(n).length));
  const lines = [
    `Context budget of ${workflowId}${sessionId ? ` (session ${sessionId})` : ''}: ${b.usedTokens} of ${b.contextWindowTokens} tokens used (${b.usagePercent}%), estimate ${b.estimateMethod}`,
    '',
    ...layers.map(
      ([name, n]) => `  ${name.padEnd(nameWidth)}  ${bar(n, b.contextWindowTokens, width)}  ${String(n).padStart(numWidth)}  ${pct(n, b.contextWindowTokens).padStart(6)}`,
    ),
    '',
    `  history + summaries use ${b.historyPercentOfAvailable}% of the ${b.availableForHistory} tokens available to them`,
  ];
  if (b.hint) lines.push(`  hint: ${b.hint}`);
  return lines.join('\n');
}

export function formatCompactionState(workflowId: string, s: CompactionState): string {
  const lines = [`Compaction state of ${workflowId} (session ${s.sessionId})`, ''];
  const row = (k: string, v: string) => lines.push(`  ${k.padEnd(15)}${v}`);
  if (s.enabled && s.settings) {
    const st = s.settings;
    row(
      'enabled',
      `yes: compacts above ${st.compactAtTokens} of ${st.contextWindowTokens} tokens, keeps ${st.keepRecentEntries} recent entries, reserves ${st.reserveTokens} for the reply, ${st.recoverFromOverflow ? 'recovers' : 'does not recover'} from overflow`,
    );
  } else {
    row('enabled', 'no');
  }
  const window = s.contextWindowTokens;
  row(
    'estimate',
    `${s.estimate.tokens} tokens (${s.estimate.method})${window ? `, ${s.usagePercent}% of the ${window}-token window` : ', context window unknown'}`,
  );
  row('compactions', `${s.count} (after ${plural(s.decisions, 'decision', 'decisions')})`);
  if (s.last) {
    const l = s.last;
    row(
      'last',
      `${l.reason} at ${formatTime(new Date(l.at))}: ${l.messagesBefore} → ${l.messagesAfter} entries, ${l.tokensBefore} → ${l.tokensAfter} tokens (cut ${l.cut})${l.fallback ? ', fallback summary (no model)' : ''}${l.ineffective ? ', ineffective (still over the threshold)' : ''}`,
    );
    const summary = l.summary.replace(/\s+/g, ' ').trim();
    row('summary', summary.length > 160 ? `${summary.slice(0, 160)}…` : summary);
    if (l.gate) row('gate', `${describeGate(l.gate)}; found by kind: ${Object.entries(l.gate.byKind).map(([k, c]) => `${k} ${c!.found}/${c!.checked}`).join(', ')}`);
  } else {
    row('last', 'none yet');
  }
  if (s.lastDecision) {
    const d = s.lastDecision;
    row('last decision', `${d.compact ? 'compact' : 'no compaction'}: ${d.why}`);
  }
  return lines.join('\n');
}

/** `fh state` for a run answered from its history: the recorded facts, said to be such. */
export function formatHistoryState(workflowId: string, s: HistoryRunState): string {
  const lines = [`Compaction state of ${workflowId} (${s.status}), from history: ${s.note}`, ''];
  const row = (k: string, v: string) => lines.push(`  ${k.padEnd(15)}${v}`);
  row('sessions', 'all (history does not say which session a model call belongs to)');
  if (s.model) row('model', s.model);
  row('window', s.contextWindowTokens ? `${s.contextWindowTokens} tokens (${windowSource(s.contextWindowSource)})` : 'unknown');
  const c = s.compaction;
  row('compactions', `${c.compactions} (after ${plural(c.decisions, 'decision', 'decisions')})`);
  if (c.lastDecision) {
    const d = c.lastDecision;
    row('last decision', `${d.compact ? 'compact' : 'no compaction'}: ${d.why ?? '?'} (event ${d.eventId})`);
    if (d.estimatedTokens !== undefined) row('estimate then', `${d.estimatedTokens} tokens (${d.estimateMethod}), ${d.usagePercent}% of ${d.contextWindowTokens}; threshold ${d.threshold}`);
  }
  if (c.lastSummary?.text !== undefined) {
    const summary = c.lastSummary.text.replace(/\s+/g, ' ').trim();
    row('last summary', `${c.lastSummary.trigger} at ${formatTime(c.lastSummary.at)}: ${summary.length > 160 ? `${summary.slice(0, 160)}…` : summary}`);
  }
  if (c.lastGate) row('last gate', `${describeGate(c.lastGate)} (event ${c.lastGate.eventId})`);
  if (s.lastModelCall) row('last call', `${s.lastModelCall.inputTokens} input tokens as the provider reported (event ${s.lastModelCall.eventId})`);
  row('usage', usageText(s));
  return lines.join('\n');
}

/** `fh budget` from history: the last request's size as the provider counted it, against the window. */
export function formatHistoryBudget(workflowId: string, s: HistoryRunState, width = 40): string {
  const lines = [`Context budget of ${workflowId} (${s.status}), from history: ${s.note}`, ''];
  const window = s.contextWindowTokens;
  const last = s.lastModelCall;
  if (!last) lines.push('  no model call completed: nothing to show');
  else if (!window) lines.push(`  last model call: ${last.inputTokens} input tokens; the context window is unknown`);
  else {
    lines.push(
      `  last model call  ${bar(last.inputTokens, window, width)}  ${last.inputTokens} of ${window} tokens (${pct(last.inputTokens, window)}), as the provider reported (event ${last.eventId})`,
    );
  }
  lines.push('', '  (the per-layer split — system, tools, summaries, history — needs a worker: `fh worker --agents <module>`)');
  lines.push(`  usage: ${usageText(s)}`);
  return lines.join('\n');
}

function windowSource(src: HistoryRunState['contextWindowSource']): string {
  switch (src) {
    case 'agent':
      return 'set by the agent';
    case 'models_api':
      return 'from the Models API';
    case 'compaction_decision':
      return 'as the last compaction decision recorded it';
    default:
      return 'source unknown';
  }
}

function usageText(s: HistoryRunState): string {
  const u = s.usage;
  const sum = u.summarizer.calls ? `; summariser ${plural(u.summarizer.calls, 'call', 'calls')}, ${u.summarizer.inputTokens} input / ${u.summarizer.outputTokens} output tokens` : '';
  return `${plural(u.modelCalls, 'model call', 'model calls')}, ${u.inputTokens} input / ${u.outputTokens} output tokens${sum}`;
}
