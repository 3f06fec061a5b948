/**
 * Token estimates. Pure and deterministic (workflow sandbox): no tokenizer, just character heuristics,
 * refined by the model's own reported usage when available (`anchoredEstimate`).
 */
import { attachmentPlaceholder, attachmentTokens } from './attachments';
import { renderSummaryEntry, type Entry, type Usage } from './entries';

/** Fixed per-message cost (role, separators) added to every entry. */
export const MESSAGE_OVERHEAD_TOKENS = 4;
const CHARS_PER_TOKEN = 4;

/** Base64-heavy tool results tokenize far worse than prose: ~1.5 chars per token. */
export const DENSE_MIN_CHARS = 20_000;
export const DENSE_MIN_RATIO = 0.7;
export const DENSE_MIN_RUN = 64;
const DENSE_CHARS_PER_TOKEN = 1.5;

export function estimateTextTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

function isBase64Char(c: number): boolean {
  return (
    (c >= 65 && c <= 90) || // A-Z
    (c >= 97 && c <= 122) || // a-z
    (c >= 48 && c <= 57) || // 0-9
    c === 43 || // +
    c === 47 || // /
    c === 61 // =
  );
}

/** Characters of `s` that sit in unbroken base64 runs of at least `minRun` characters. O(n). */
export function base64RunChars(s: string, minRun = DENSE_MIN_RUN): number {
  let total = 0;
  let run = 0;
  for (let i = 0; i < s.length; i++) {
    if (isBase64Char(s.charCodeAt(i))) {
      run++;
    } else {
      if (run >= minRun) total += run;
      run = 0;
    }
  }
  if (run >= minRun) total += run;
  return total;
}

/**
 * Density-aware: a large tool result that is mostly base64 (an image or binary read as text) counts
 * chars/1.5, so one such read cannot slip past the threshold estimate and overflow the window.
 */
export function estimateToolResultTokens(content: string): number {
  const len = content.length;
  if (len >= DENSE_MIN_CHARS && base64RunChars(content) >= DENSE_MIN_RATIO * len) {
    return Math.ceil(len / DENSE_CHARS_PER_TOKEN);
  }
  return estimateTextTokens(content);
}

function jsonText(value: unknown): string {
  return JSON.stringify(value) ?? '';
}

export function estimateEntryTokens(e: Entry): number {
  let n = MESSAGE_OVERHEAD_TOKENS;
  switch (e.type) {
    case 'user':
      n += estimateTextTokens(e.text);
      for (const a of e.attachments ?? []) n += a.masked ? estimateTextTokens(attachmentPlaceholder(a)) : attachmentTokens(a);
      break;
    case 'assistant':
      for (const b of e.content) {
        if (b.type === 'text') n += estimateTextTokens(b.text);
        else if (b.type === 'tool_use') n += estimateTextTokens(b.name) + estimateTextTokens(jsonText(b.input));
        // The API counts only the latest turn's thinking as input; counting all of it over-estimates, the safe side.
        else if (b.type === 'thinking') n += estimateTextTokens(b.thinking);
        else if (b.type === 'redacted_thinking') n += estimateTextTokens(b.data);
        // The server reads only what follows its summary; counting the summary too is the safe side.
        else n += estimateTextTokens(b.content ?? '');
      }
      break;
    case 'tool_results':
      for (const r of e.results) n += estimateToolResultTokens(r.content);
      break;
    case 'summary':
      n += estimateTextTokens(renderSummaryEntry(e));
      break;
  }
  return n;
}

export interface ToolLike {
  name: string;
  description?: string;
  input_schema: unknown;
}

export function estimateSystemTokens(system: string | undefined): number {
  return system ? estimateTextTokens(system) : 0;
}

export function estimateToolsTokens(tools: readonly ToolLike[] | undefined): number {
  let n = 0;
  for (const t of tools ?? []) {
    n += estimateTextTokens(t.name) + estimateTextTokens(t.description ?? '') + estimateTextTokens(jsonText(t.input_schema));
  }
  return n;
}

export interface ContextTokens {
  system: number;
  tools: number;
  /** Summary entries (compacted history). */
  summaries: number;
  /** Every other entry. */
  history: number;
  total: number;
}

export function estimateContextTokens(input: {
  system?: string;
  tools?: readonly ToolLike[];
  entries: readonly Entry[];
}): ContextTokens {
  const system = estimateSystemTokens(input.system);
  const tools = estimateToolsTokens(input.tools);
  let summaries = 0;
  let history = 0;
  for (const e of input.entries) {
    if (e.type === 'summary') summaries += estimateEntryTokens(e);
    else history += estimateEntryTokens(e);
  }
  return { system, tools, summaries, history, total: system + tools + summaries + history };
}

/**
 * The model's reported usage for the request that contained the first `entryCount` entries; its
 * response is entry `entryCount`. `inputTokens` must be the FULL prompt size: with prompt caching,
 * Anthropic's `input_tokens` excludes cached tokens — build anchors with `usageAnchor`.
 */
export interface UsageAnchor {
  inputTokens: number;
  outputTokens: number;
  entryCount: number;
}

/** An anchor from a response's usage, counting cache reads/writes as prompt tokens. */
export function usageAnchor(usage: Usage, entryCount: number): UsageAnchor {
  return {
    inputTokens: usage.inputTokens + (usage.cacheReadInputTokens ?? 0) + (usage.cacheCreationInputTokens ?? 0),
    outputTokens: usage.outputTokens,
    entryCount,
  };
}

export type EstimateMethod = 'heuristic' | 'usage-anchored';

/** True when the anchor can describe `entries`: its response entry still exists and is a model response. */
export function anchorFits(anchor: UsageAnchor | undefined, entries: readonly Entry[]): anchor is UsageAnchor {
  if (!anchor) return false;
  const k = anchor.entryCount;
  return Number.isInteger(k) && k >= 0 && k < entries.length && entries[k]!.type === 'assistant';
}

/**
 * Real usage beats the heuristic: inputTokens + outputTokens cover everything up to and including the
 * response entry (system and tools too), so only entries added after it are estimated. Falls back to
 * the heuristic when there is no anchor or it does not fit (history was compacted or rewritten since;
 * callers must drop the anchor after a compaction).
 */
export function anchoredEstimate(input: {
  anchor: UsageAnchor | undefined;
  entries: readonly Entry[];
  system?: string;
  tools?: readonly ToolLike[];
}): { total: number; method: EstimateMethod } {
  const { anchor, entries } = input;
  if (!anchorFits(anchor, entries)) {
    return { total: estimateContextTokens(input).total, method: 'heuristic' };
  }
  let total = anchor.inputTokens + anchor.outputTokens;
  for (let i = anchor.entryCount + 1; i < entries.length; i++) total += estimateEntryTokens(entries[i]!);
  return { total, method: 'usage-anchored' };
}
