/**
 * Observation masking: tool results older than the keep window are replaced by a
 * one-line placeholder naming the call and the size of what it returned, e.g.
 * `[tool: read_file("src/app.ts") → 247 lines, 9812 chars]`. Results that are verification evidence
 * stay verbatim. Only result content changes: every tool_use keeps its tool_result (same id, same
 * is_error), so the history stays valid for the API. Pure and deterministic (workflow code).
 */
import type { Entry, ToolResultBlock, ToolUseBlock } from '../entries';
import { attachmentPlaceholder, attachmentTokens, type AttachmentRef } from '../attachments';
import { estimateTextTokens, estimateToolResultTokens } from '../tokens';
import { findCut } from './compaction/cut';
import { InvalidToolResultOptionsError } from './errors';
import { firstStringArg, isVerificationEvidence, type PreservePredicate } from './evidence';
import { keepCount, type KeepWindow } from './keep-window';
import { plural } from '../plural';

export interface MaskOptions {
  /** Results in the newest entries of this window stay verbatim (entries, tokens, or both: the smaller wins). */
  keepRecent?: KeepWindow;
  /**
   * Or the boundary a recorded decision fixed: results in entries[0..before) are masked. Wins over
   * keepRecent, so a replay masks what the recorded run masked whatever the settings say now.
   */
  before?: number;
  /** Results kept verbatim however old; default isVerificationEvidence. */
  preserve?: PreservePredicate;
  /**
   * Or exactly the results a recorded decision named (by tool_use_id), whatever `preserve` says now:
   * a replay under other evidence rules masks what the recorded run masked.
   */
  ids?: readonly string[];
  /**
   * Attachments kept however old (default: one whose name a later user message mentions, still in use).
   * Masked ones are named in `ids` as `attachment:<hash>`.
   */
  keepAttachment?: (attachment: AttachmentRef, later: readonly Entry[]) => boolean;
}

export interface MaskResult {
  /** A new array (the input is not changed); entries without a masked result are the same objects. */
  entries: Entry[];
  /** Index before which results were considered for masking. */
  before: number;
  masked: number;
  /** The tool_use_ids of the results masked now. */
  ids: string[];
  /** Estimated tokens the placeholders saved. */
  savedTokens: number;
}

/** Longest argument a placeholder quotes. Keeps every placeholder one short line. */
const ARG_CHARS = 80;
const PLACEHOLDER = /^\[tool: [^\n]*\]$/;

export function maskStaleToolResults(entries: readonly Entry[], options: MaskOptions): MaskResult {
  const before = maskBoundary(entries, options);
  const preserve = options.preserve ?? isVerificationEvidence;
  const only = options.ids ? new Set(options.ids) : undefined;
  const keep = (r: ToolResultBlock, call: ToolUseBlock | undefined) => (only ? !only.has(r.tool_use_id) : preserve(r, call));
  const calls = new Map<string, ToolUseBlock>();
  const out: Entry[] = [];
  const ids: string[] = [];
  let masked = 0;
  let savedTokens = 0;
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    if (entry.type === 'assistant') {
      for (const b of entry.content) if (b.type === 'tool_use') calls.set(b.id, b);
    }
    if (i < before && entry.type === 'user' && entry.attachments?.some((a) => !a.masked)) {
      // An old attachment is masked like an old tool result: its one-line placeholder, its bytes no longer sent.
      const keepFile = options.keepAttachment ?? mentionedLater;
      let changed = false;
      const attachments = entry.attachments.map((a): AttachmentRef => {
        const id = attachmentMaskId(a);
        if (a.masked || (only ? !only.has(id) : keepFile(a, entries.slice(i + 1)))) return a;
        changed = true;
        masked += 1;
        ids.push(id);
        savedTokens += Math.max(0, attachmentTokens(a) - estimateTextTokens(attachmentPlaceholder(a)));
        return { ...a, masked: true };
      });
      out.push(changed ? { ...entry, attachments } : entry);
      continue;
    }
    if (i >= before || entry.type !== 'tool_results') {
      out.push(entry);
      continue;
    }
    let changed = false;
    const results = entry.results.map((r): ToolResultBlock => {
      const call = calls.get(r.tool_use_id);
      if (isPlaceholder(r.content) || keep(r, call)) return r;
      const line = toolPlaceholder(r, call);
      const saved = estimateToolResultTokens(r.content) - estimateToolResultTokens(line);
      // A placeholder must save something, or the original says more for the same price.
      if (line.length >= r.content.length) return r;
      changed = true;
      masked += 1;
      ids.push(r.tool_use_id);
      savedTokens += Math.max(0, saved);
      return { ...r, content: line };
    });
    out.push(changed ? { ...entry, results } : entry);
  }
  return { entries: out, before, masked, ids, savedTokens };
}

/** How a masking decision names an attachment it masked. */
export function attachmentMaskId(a: Pick<AttachmentRef, 'hash'>): string {
  return `attachment:${a.hash}`;
}

/** An attachment still in use: a later user message names it. */
function mentionedLater(a: AttachmentRef, later: readonly Entry[]): boolean {
  return later.some((e) => e.type === 'user' && e.text.includes(a.name));
}

/** The one-line stand-in for a result: `[tool: name("first string arg") → N lines, M chars]`. */
export function toolPlaceholder(result: ToolResultBlock, call: ToolUseBlock | undefined): string {
  const name = call?.name ?? 'unknown';
  const arg = firstStringArg(call);
  const quoted = arg === undefined ? '' : JSON.stringify(clip(arg.replace(/\s+/g, ' '), ARG_CHARS));
  const lines = countLines(result.content);
  const size = `${plural(lines, 'line', 'lines')}, ${result.content.length} chars`;
  const outcome = result.is_error ? `error, ${size}: ${JSON.stringify(clip(firstLine(result.content), ARG_CHARS))}` : size;
  return `[tool: ${name}(${quoted}) → ${outcome}]`;
}

export function isPlaceholder(content: string): boolean {
  return content.startsWith('[tool: ') && PLACEHOLDER.test(content);
}

function maskBoundary(entries: readonly Entry[], options: MaskOptions): number {
  if (options.before !== undefined) {
    const b = options.before;
    if (!Number.isInteger(b) || b < 0) throw new InvalidToolResultOptionsError('before', `must be a non-negative integer, got ${b}`);
    return Math.min(b, entries.length);
  }
  const window = options.keepRecent ?? {};
  if (window.entries === undefined && window.tokens === undefined) {
    throw new InvalidToolResultOptionsError('keepRecent', 'give entries, tokens, or a recorded boundary (before)');
  }
  for (const field of ['entries', 'tokens'] as const) {
    const v = window[field];
    if (v !== undefined && (!Number.isInteger(v) || v < 1)) {
      throw new InvalidToolResultOptionsError(`keepRecent.${field}`, `must be a positive integer, got ${v}`);
    }
  }
  // Same boundary rules as a compaction cut: the window never starts at a tool_results entry.
  return findCut(entries, keepCount(entries, window)!);
}

function countLines(text: string): number {
  if (text.length === 0) return 0;
  let n = 1;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) n++;
  return text.endsWith('\n') ? n - 1 : n;
}

function firstLine(text: string): string {
  const nl = text.indexOf('\n');
  return (nl === -1 ? text : text.slice(0, nl)).trim();
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
