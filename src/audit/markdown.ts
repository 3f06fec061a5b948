/** The Markdown view of an audit (what `fh history <id>` prints): a header for the run, a section per record. */
import type { AttachmentRef } from '../core/attachments';
import { isOffloaded } from './payloads';
import { cacheText } from './cache';
import { usd } from '../core/costs';
import { plural } from '../core/plural';
import { describeGate } from '../core/context/compaction/gate';
import type {
  ActivityRecord,
  AuditRecord,
  AuditRun,
  CompactionDecisionRecord,
  CompactionGateRecord,
  EndRecord,
  ModelCallRecord,
  ModelResolvedRecord,
  SubAgentRecord,
  SummarizeCallRecord,
  SummaryRecord,
  TitleRecord,
  ToolCallRecord,
  UpdateRecord,
} from './records';

/** Characters of a tool result or text shown in the Markdown (the JSON keeps everything). */
export const DEFAULT_TRUNCATE = 400;

/** The Markdown view of an audit (what `fh history <id>` prints). */
export function renderAuditMarkdown(audit: { run: AuditRun; records: AuditRecord[] }, opts: { truncateAt?: number } = {}): string {
  const n = opts.truncateAt ?? DEFAULT_TRUNCATE;
  const { run, records } = audit;
  const out = renderRun(run);
  for (const r of records) out.push(...renderRecord(r, n), '');
  if (run.status === 'running') out.push('_The run is still going: this transcript ends at the latest recorded event._\n');
  return out.join('\n');
}

function renderRun(run: AuditRun): string[] {
  const t = run.totals;
  return [
    `# Audit: ${run.agent ?? run.workflowType ?? 'agent'} — ${run.workflowId ?? '(workflow id not recorded)'}`,
    '',
    `- Run: ${run.runId ?? '?'} · task queue ${run.taskQueue ?? '?'} · ${run.events} history events`,
    `- Started ${time(run.startedAt)} · ${run.status}${run.closedAt ? ` ${time(run.closedAt)}` : ' (still running)'}`,
    `- ${plural(t.modelCalls, 'model call', 'model calls')} (${t.inputTokens} input / ${t.outputTokens} output tokens) · ` +
      `${plural(t.toolCalls, 'tool call', 'tool calls')}${t.toolErrors ? ` (${t.toolErrors} failed)` : ''} · ` +
      `${plural(t.compactionDecisions, 'compaction decision', 'compaction decisions')}, ${plural(t.compactions, 'compaction', 'compactions')} · ` +
      `${plural(t.summaries, 'summary', 'summaries')}${t.summarizer.calls ? ` (${t.summarizer.inputTokens} input / ${t.summarizer.outputTokens} output tokens)` : ''} · ` +
      `${t.titles?.calls ? `${plural(t.titles.calls, 'session title', 'session titles')} (${t.titles.inputTokens} input / ${t.titles.outputTokens} output tokens) · ` : ''}` +
      `${plural(t.userActions, 'user action', 'user actions')}`,
    `- Prompt ${cacheText(t.cache)}`,
    `- Cost at list prices: ${runCostText(t.cost)}`,
    ...(t.serverContext.edits > 0
      ? [`- Server-side context management: ${plural(t.serverContext.edits, 'edit', 'edits')} applied, ${t.serverContext.clearedToolUses} tool uses / ${t.serverContext.clearedInputTokens} input tokens cleared, ${plural(t.serverContext.compactions, 'compaction', 'compactions')}`]
      : []),
    '',
  ];
}

/** The blocks of one record's section (joined by newlines), `n` characters of long values shown. */
function renderRecord(r: AuditRecord, n: number): string[] {
  switch (r.type) {
    case 'input':
      return [heading(r, 'Input (from the user who started the run)'), fence(truncate(JSON.stringify(r.input, null, 2) ?? 'undefined', n * 4))];
    case 'prompt':
      return [heading(r, 'Prompt'), quote(truncate(r.text, n * 4)), ...(r.attachments?.length ? [attachmentLines(r.attachments)] : [])];
    case 'model_resolved':
      return [
        heading(r, `Model resolved: ${r.model ?? r.requested ?? '?'}${windowText(r)}`),
        `- Connection: ${r.connection}`,
        ...(r.strategy ? [`- Compaction strategy: ${r.strategy.strategy} — ${r.strategy.why}`] : []),
      ];
    case 'model_call':
      return renderModelCall(r, n);
    case 'tool_call':
      return renderToolCall(r, n);
    case 'compaction_decision':
      return renderCompactionDecision(r);
    case 'compaction_gate':
      return renderGate(r, n);
    case 'summary':
      return renderSummary(r, n);
    case 'title':
      return renderTitle(r, n);
    case 'update':
      return renderUpdate(r, n);
    case 'signal':
      return [
        heading(r, r.name === 'fh.close' ? 'Close requested (signal fh.close: stop serving prompts)' : `Signal ${r.name}`),
        `- From: ${r.identity ?? 'unknown'}\n- Arguments: \`${truncate(JSON.stringify(r.args), n)}\``,
      ];
    case 'cancel_requested':
      return [heading(r, 'Cancellation requested'), `- From: ${r.identity ?? 'unknown'}${r.cause ? ` · ${r.cause}` : ''}`];
    case 'run_reset':
      return [
        heading(r, 'Run reset: the history before this point is kept from the run reset; from here on it runs anew'),
        `- Reason: ${r.reason ?? 'none given'}\n- Reset run: ${r.baseRunId ?? 'unknown'}\n- By: ${r.identity ?? 'unknown'}`,
      ];
    case 'activity':
      return renderActivity(r, n);
    case 'sub_agent':
      return renderSubAgent(r, n);
    case 'end':
      return renderEnd(r, n);
  }
}

function windowText(r: ModelResolvedRecord): string {
  if (!r.contextWindowTokens) return r.status === 'completed' ? ' (context window unknown)' : '';
  const from = r.contextWindowSource === 'agent' ? 'set by the agent' : r.contextWindowSource === 'models_api' ? 'from the Models API' : undefined;
  return ` (context window ${r.contextWindowTokens} tokens${from ? `, ${from}` : ''})`;
}

function renderModelCall(r: ModelCallRecord, n: number): string[] {
  const lines = [
    `- Connection: ${r.connection} · model ${r.model}`,
    `- Status: ${r.status}${r.attempts && r.attempts > 1 ? ` after ${r.attempts} attempts` : ''}${r.error ? ` — ${r.error}` : ''}`,
    `- Context: ${plural(r.context.storedEntries + r.context.newEntries, 'entry', 'entries')} (${r.context.storedEntries} stored + ${r.context.newEntries} new${r.context.summaries ? `, ${plural(r.context.summaries, 'summary', 'summaries')}` : ''})`,
  ];
  if (r.usage) {
    lines.push(
      `- Tokens: ${r.usage.inputTokens} input / ${r.usage.outputTokens} output${r.usage.cacheReadInputTokens ? ` (${r.usage.cacheReadInputTokens} cached)` : ''} · stop reason: ${r.stopReason ?? 'none'}`,
    );
  }
  if (r.costUsd !== undefined) lines.push(`- Cost: ${r.costUsd === null ? `unknown (no list price for ${r.model ?? 'its model'})` : `${usd(r.costUsd)} at list prices`}`);
  if (r.cache) lines.push(`- Prompt ${cacheText(r.cache)}`);
  if (r.contextManagement) {
    const applied = r.contextManagement.applied.map((e) => `${e.type} (${e.clearedToolUses !== undefined ? `${e.clearedToolUses} tool uses, ` : ''}${e.clearedInputTokens} tokens)`);
    lines.push(`- Server-side context management: sent ${r.contextManagement.edits.join(', ') || '(none)'}; applied ${applied.join(', ') || 'nothing'}`);
  }
  if (r.tools) lines.push(`- Tools offered: ${r.tools.length ? r.tools.join(', ') : '(none)'}`);
  if (r.response?.text) lines.push(`- Reply:\n\n${quote(truncate(r.response.text, n))}\n`);
  for (const c of r.response?.toolCalls ?? []) lines.push(`- Asks for tool \`${c.name}\` (${c.id}) with \`${truncate(JSON.stringify(c.input), n)}\``);
  return [heading(r, `Model call: ${r.model}`, eventSpan(r)), lines.join('\n')];
}

function renderToolCall(r: ToolCallRecord, n: number): string[] {
  const lines = [
    `- Call id: ${r.callId}`,
    `- Arguments: \`${truncate(JSON.stringify(r.arguments) ?? 'undefined', n)}\``,
    `- Status: ${r.status}${r.isError ? ' (the tool reported an error)' : ''}${r.attempts && r.attempts > 1 ? ` after ${r.attempts} attempts` : ''}${r.error ? ` — ${r.error}` : ''}`,
  ];
  const head = heading(r, `Tool call: ${r.name}`, eventSpan(r));
  if (r.result === undefined) return [head, lines.join('\n')];
  const full = typeof r.result === 'string' ? r.result.length : undefined;
  lines.push(`- Result${full !== undefined ? ` (${full} characters${r.truncated ? ', truncated here; full text in --json' : ''})` : ''}:`);
  return [head, lines.join('\n'), fence(r.resultPreview ?? describeValue(r.result, n))];
}

function renderCompactionDecision(r: CompactionDecisionRecord): string[] {
  if (!r.recorded) return [heading(r, 'Compaction decision: not recorded'), `- ${r.error ?? 'the decision failed'}`];
  return [
    heading(r, `Compaction decision: ${r.compact ? `compact (${r.reason})` : 'no compaction'}`),
    [
      `- Why: ${r.why}`,
      `- Estimate: ${r.estimatedTokens} tokens (${r.estimateMethod}), ${r.usagePercent}% of the ${r.contextWindowTokens}-token window; threshold ${r.threshold}`,
      `- Cut: ${r.cut} of ${r.entriesBefore} entries (${r.keptEntries} kept)${r.warn ? ' · context window warning' : ''}${r.ineffectiveSkip ? ' · skipped: the last compaction was ineffective' : ''}`,
    ].join('\n'),
  ];
}

function renderGate(r: CompactionGateRecord, n: number): string[] {
  if (!r.recorded || r.checked === undefined) return [heading(r, 'Compaction gate: not recorded'), `- ${r.error ?? 'the check failed'}`];
  const reask = r.mode === 'reask' && !r.reasked && (r.restated ?? 0) > 0;
  const title = `Compaction gate: ${describeGate({ checked: r.checked, restated: r.restated ?? 0, reasked: r.reasked ?? false })}${reask ? ' — re-asking the summariser' : ''}`;
  const kinds = Object.entries(r.byKind ?? {}).map(([k, c]) => `${k} ${c.found}/${c.checked}`);
  const lines = [`- Found in the summary, by kind: ${kinds.join(', ') || 'no facts'}${r.reasked ? ' (the summariser’s second answer)' : ''}`];
  const out = [heading(r, title), lines.join('\n')];
  // The facts are the conversation's words (user and model text): quoted, never rendered as Markdown.
  if (r.missing && r.missing.length > 0) out.push(quote(truncate(r.missing.map((f) => `${f.kind}: ${f.text}`).join('\n'), n * 2)));
  return out;
}

function renderSummary(r: SummaryRecord, n: number): string[] {
  const lines = summarizeCallLines(r);
  if (r.request !== undefined) lines.push(`- Summarised: ${typeof r.request === 'string' ? `${r.request.length} characters of conversation` : describeValue(r.request, n)}`);
  const what = r.trigger === 'reset' ? 'Session reset: transfer summary' : `Compaction summary (${r.trigger})`;
  return summarizeCallBlock(r, what, lines, n * 2);
}

function renderTitle(r: TitleRecord, n: number): string[] {
  return summarizeCallBlock(r, 'Session title', summarizeCallLines(r), n);
}

/** What every summarisation call shows (a summary, a title): its status and tokens. */
function summarizeCallLines(r: SummarizeCallRecord): string[] {
  const lines = [`- Status: ${r.status}${r.error ? ` — ${r.error}` : ''}`];
  if (r.usage) lines.push(`- Tokens: ${r.usage.inputTokens} input / ${r.usage.outputTokens} output`);
  return lines;
}

/** A summarisation call's heading (what it was, its model and connection), its lines, and its text quoted up to `chars`. */
function summarizeCallBlock(r: SummaryRecord | TitleRecord, what: string, lines: string[], chars: number): string[] {
  const out = [heading(r, `${what}${r.model ? `: ${r.model}` : ''}${r.connection ? ` on ${r.connection}` : ''}`), lines.join('\n')];
  if (r.text !== undefined) out.push(quote(describeValue(r.text, chars)));
  return out;
}

function renderUpdate(r: UpdateRecord, n: number): string[] {
  const title = r.manualCompaction
    ? 'Manual compaction requested (update fh.compact)'
    : r.prompt !== undefined
      ? 'Prompt from a user (update fh.prompt)'
      : `Update ${r.name}`;
  const lines = [`- From: ${r.identity ?? 'unknown'}${r.updateId ? ` · update id ${r.updateId}` : ''}`];
  if (r.prompt !== undefined) lines.push(`- Prompt:\n\n${quote(truncate(r.prompt, n * 4))}\n`);
  else lines.push(`- Arguments: \`${truncate(JSON.stringify(r.args), n)}\``);
  lines.push(`- Status: ${r.status}${r.completedAt ? ` ${time(r.completedAt)}` : ''}${r.error ? ` — ${r.error}` : ''}`);
  if (r.result !== undefined) {
    if (r.prompt !== undefined && typeof r.result === 'string') lines.push(`- Reply:\n\n${quote(truncate(r.result, n))}\n`);
    else lines.push(`- Result: \`${describeValue(r.result, n)}\``);
  }
  return [heading(r, title), lines.join('\n')];
}

function renderActivity(r: ActivityRecord, n: number): string[] {
  return [
    heading(r, `Activity ${r.name}`),
    `- Status: ${r.status}${r.error ? ` — ${r.error}` : ''}${r.result !== undefined ? `\n- Result: \`${describeValue(r.result, n)}\`` : ''}`,
  ];
}

function renderSubAgent(r: SubAgentRecord, n: number): string[] {
  const lines = [
    `- Child workflow: ${r.childId}${r.depth !== undefined ? ` (depth ${r.depth})` : ''}`,
    `- Input: \`${describeValue(r.input, n)}\``,
    `- Status: ${r.status}${r.error ? ` — ${r.error}` : ''}`,
    ...(r.result !== undefined ? [`- Result: \`${describeValue(r.result, n)}\``] : []),
    ...(r.events.length ? [`- Its events (${r.events.length}):`, ...r.events.map((e) => `  - ${e.type}${describeEvent(e)}`)] : []),
  ];
  return [heading(r, `Sub-agent ${r.agent}`), lines.join('\n')];
}

function describeEvent(e: SubAgentRecord['events'][number]): string {
  const d = e.data as unknown as Record<string, unknown>;
  if (e.type === 'tool_call') return ` ${String(d.name)}`;
  if (e.type === 'model_call') return ` ${String(d.model)} (${String(d.inputTokens)} in, ${String(d.outputTokens)} out)`;
  if (e.type === 'text') return `: ${String(d.text).slice(0, 80)}`;
  return '';
}

function renderEnd(r: EndRecord, n: number): string[] {
  const out = [heading(r, `Run ${r.status}`)];
  if (r.result !== undefined) out.push(fence(truncate(JSON.stringify(r.result, null, 2) ?? 'undefined', n * 4)));
  if (r.failure) out.push(`- Failure: ${r.failure}`);
  if (r.reason) out.push(`- Reason: ${r.reason}${r.identity ? ` (by ${r.identity})` : ''}`);
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Text helpers
// ---------------------------------------------------------------------------------------------------

export function truncate(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n)}… (${s.length - n} more characters)`;
}

/** A value on one line: strings and JSON cut at `n` characters, offloaded payloads described. */
export function describeValue(v: unknown, n: number): string {
  if (isOffloaded(v)) {
    const o = v.$offloaded;
    return `[offloaded: ${formatBytes(o.sizeBytes)} in external storage${o.key ? ` (${o.key})` : ''}${o.error ? `; not retrieved: ${o.error}` : '; pass the store to read it'}]`;
  }
  if (typeof v === 'string') return truncate(v, n);
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : truncate(s, n);
}

/** "## 3. Title — 2024-01-01 10:00:00.000Z (event 12)" */
function heading(r: AuditRecord, title: string, ev = `event ${r.eventId}`): string {
  return `## ${r.n}. ${title} — ${time(r.at)} (${ev})`;
}

function eventSpan(r: { eventId: number; completedEventId?: number }): string {
  return r.completedEventId ? `events ${r.eventId}–${r.completedEventId}` : `event ${r.eventId}`;
}

function formatBytes(b: number): string {
  return b >= 1024 * 1024 ? `${(b / 1024 / 1024).toFixed(1)} MB` : b >= 1024 ? `${(b / 1024).toFixed(1)} KB` : `${b} B`;
}


function time(at: string | undefined): string {
  return at ? at.replace('T', ' ').replace(/\.(\d{3})\d*Z$/, '.$1Z') : '?';
}

/** A prompt's files, by reference: names are the user's text, so each is quoted as a JSON string in code (no Markdown of theirs renders). */
function attachmentLines(refs: readonly AttachmentRef[]): string {
  return refs.map((a) => `- Attachment: \`${JSON.stringify(a.name).replace(/`/g, "'")}\` (${a.mediaType}, ${a.size} bytes, sha256 ${a.hash.slice(0, 16)}…${a.masked ? ', masked' : ''})`).join('\n');
}

function quote(text: string): string {
  return text
    .split('\n')
    .map((l) => `> ${l}`)
    .join('\n');
}

function fence(text: string): string {
  const ticks = text.includes('```') ? '````' : '```';
  return `${ticks}\n${text}\n${ticks}`;
}

/** The run's cost: unknown (never $0) while a call's model has no list price. */
function runCostText(c: { pricedUsd: number; unpricedCalls: number; unpricedModels: string[] }): string {
  if (c.unpricedCalls === 0) return usd(c.pricedUsd);
  return `unknown (no list price for ${c.unpricedModels.join(', ')}: ${plural(c.unpricedCalls, 'call', 'calls')}; ${usd(c.pricedUsd)} for the priced calls)`;
}
