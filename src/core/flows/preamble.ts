/**
 * The preamble a prompt/agent node's text is prefixed with: the goal, the completed stages (detail by
 * fidelity) and the context values not already shown. Internal keys and the excluded prefixes never
 * appear; an offloaded value appears as a reference the agent can read back with read_artifact.
 */
import { parseArtifactPointer, type ContextValue, type FlowContext } from './context';
import type { Fidelity } from './graph';
import type { StageRecord } from './stage';

/** Never rendered: engine keys and the prefixes the seed excludes. */
const EXCLUDED_PREFIXES = ['internal.', 'current', 'graph.', 'thread.', 'response.'];
/** Rendered inline with their stage, so not again under Context. */
const SHOWN_WITH_STAGES = new Set(['last_stage', 'last_response', 'command.output', 'command.stderr', 'outcome', 'failure_class', 'failure_signature', 'preferred_label', 'human.gate.selected', 'human.gate.label', 'human.gate.text']);

/** Rough budgets (4 characters a token): summary:medium ~1,500 tokens, summary:low ~600. */
const BUDGET_CHARS: Partial<Record<Fidelity, number>> = { 'summary:medium': 6_000, 'summary:low': 2_400 };
const STREAM_CHARS: Partial<Record<Fidelity, number>> = { compact: 2_000, 'summary:high': 4_000 };
const VALUE_CHARS = 500;

export interface PreambleInput {
  fidelity: Fidelity;
  goal?: string;
  runId: string;
  stages: readonly StageRecord[];
  context: FlowContext;
}

/** The preamble text ('' for `full`: the node continues its thread's conversation instead). */
export function renderPreamble(input: PreambleInput): string {
  const { fidelity } = input;
  if (fidelity === 'full') return '';
  const goal = `Goal: ${input.goal ?? '(none)'}`;
  if (fidelity === 'truncate') return `${goal}\nRun: ${input.runId}`;
  const shown = input.stages.filter((s) => s.kind !== 'start' && s.kind !== 'route' && s.kind !== 'exit');
  const parts = [goal];
  if (shown.length) parts.push(['## Completed stages', ...shown.map((s) => renderStage(s, fidelity, input.context))].join('\n'));
  if (fidelity !== 'summary:low') {
    const ctx = contextLines(input.context);
    if (ctx.length) parts.push(['## Context', ...ctx].join('\n'));
  }
  const text = parts.join('\n\n');
  const budget = BUDGET_CHARS[fidelity];
  return budget !== undefined && text.length > budget ? `${text.slice(0, budget)}\n…[preamble cut to ~${budget / 4} tokens]` : text;
}

function renderStage(s: StageRecord, fidelity: Fidelity, ctx: FlowContext): string {
  const head = fidelity === 'summary:high' ? `### ${s.node}: ${s.status}` : `- **${s.node}**: ${s.status}`;
  if (fidelity === 'summary:low') return `- ${s.node}: ${s.status}`;
  const lines = [head];
  const bullet = fidelity === 'summary:high' ? '- ' : '  - ';
  if (s.agent) {
    lines.push(`${bullet}Model: ${s.agent.model}, ${tokens(s.agent.inputTokens)} tokens in / ${tokens(s.agent.outputTokens)} out`);
    if (s.agent.files.length) lines.push(`${bullet}Files: ${s.agent.files.join(', ')}`);
    if (fidelity === 'summary:high' && ctx[`response.${s.node}`] !== undefined) lines.push(`${bullet}Response:\n${stream(ctx[`response.${s.node}`]!, STREAM_CHARS['summary:high']!)}`);
  }
  if (s.command) {
    lines.push(`${bullet}Script: \`${s.command.script}\``);
    if (fidelity !== 'summary:medium') {
      const limit = STREAM_CHARS[fidelity] ?? 2_000;
      const out = stream(s.command.stdout, limit);
      // A stdout block is raw text: the list starts again after it.
      lines.push(out === '(empty)' ? `${bullet}Stdout: (empty)` : `${bullet}Stdout:\n${out}`);
      lines.push(`${out === '(empty)' ? bullet : '- '}Stderr: ${blockOrInline(stream(s.command.stderr, limit))}`);
    } else if (s.command.exitCode !== 0) lines.push(`${bullet}Exit code: ${s.command.exitCode}`);
  }
  if (s.gate) lines.push(`${bullet}Chosen: ${s.gate.label}${s.gate.text ? ` — "${s.gate.text}"` : ''}`);
  if (s.branches) for (const b of s.branches) lines.push(`${bullet}Branch ${b.id}: ${b.outcome}`);
  if (s.failure) lines.push(`${bullet}Failure: ${s.failure.class}: ${oneLine(s.failure.detail, VALUE_CHARS)}`);
  return lines.join('\n');
}

function contextLines(ctx: FlowContext): string[] {
  return Object.keys(ctx)
    .filter((k) => !EXCLUDED_PREFIXES.some((p) => k.startsWith(p)) && !SHOWN_WITH_STAGES.has(k))
    .map((k) => `- ${k}: ${value(ctx[k]!)}`);
}

function value(v: ContextValue): string {
  const ptr = parseArtifactPointer(v);
  if (ptr) return artifactNote(ptr);
  return oneLine(typeof v === 'string' ? v : JSON.stringify(v), VALUE_CHARS);
}

function stream(v: ContextValue, limit: number): string {
  const ptr = parseArtifactPointer(v);
  if (ptr) return artifactNote(ptr);
  const text = typeof v === 'string' ? v.replace(/\n+$/, '') : JSON.stringify(v);
  if (text === '') return '(empty)';
  return text.length <= limit ? text : `${text.slice(0, limit)}\n…[${text.length - limit} more characters]`;
}

function blockOrInline(text: string): string {
  return text.includes('\n') ? `\n${text}` : text;
}

function artifactNote(ptr: { ref: string; bytes: number }): string {
  return `[stored artifact ${ptr.ref}, ${(ptr.bytes / 1000).toFixed(1)} KB: read_artifact(${JSON.stringify({ ref: ptr.ref, offset: 0 })})]`;
}

function oneLine(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit)}…`;
}

function tokens(n: number): string {
  return n < 1000 ? String(n) : `${(n / 1000).toFixed(1)}k`;
}
