/**
 * Capping an oversized tool result: keep its head and tail, put a
 * `[truncated, N tokens omitted]` marker between them, and say where the full output can be read back.
 * Pure and deterministic (workflow code): sizes are the estimates of ../tokens.
 */
import { DENSE_MIN_CHARS, estimateToolResultTokens } from '../tokens';
import { InvalidToolResultOptionsError } from './errors';
import { MIN_CAP_TOKENS } from './tool-result-settings';
import { READ_ARTIFACT } from './artifacts';

export interface CapOptions {
  /** The capped result's estimated tokens stay at or below this (marker included). */
  maxTokens: number;
  /**
   * Where the full output was stored (on Temporal the tool activity stores results by content hash):
   * named in the marker with the tool that reads it back (read_artifact).
   */
  ref?: string;
}

export interface CappedToolResult {
  content: string;
  truncated: boolean;
  /** Estimated tokens of the part left out (0 when not truncated). */
  omittedTokens: number;
}

/**
 * Share of the kept characters that is the head. Less than all of it: a command's verdict (a test
 * summary, a compiler's last error) is at the end of its output.
 */
const HEAD_SHARE = 0.6;
/** A cut moves to a line boundary when one lies within this share of its side's length. */
const SNAP_SHARE = 0.25;
/** Characters per token of the densest content the estimator knows (base64): a size that always fits. */
const DENSEST_CHARS_PER_TOKEN = 1.5;
const CHARS_PER_TOKEN = 4;

export function truncationMarker(omittedTokens: number, ref?: string): string {
  const readBack = ref !== undefined ? `\n[full output: ${READ_ARTIFACT}(${JSON.stringify({ ref, offset: 0 })})]` : '';
  return `\n[truncated, ${omittedTokens} tokens omitted]${readBack}\n`;
}

export function capToolResult(content: string, options: CapOptions): CappedToolResult {
  const { maxTokens, ref } = options;
  if (!Number.isInteger(maxTokens) || maxTokens < MIN_CAP_TOKENS) {
    throw new InvalidToolResultOptionsError('maxTokens', `must be an integer of at least ${MIN_CAP_TOKENS}, got ${maxTokens}`);
  }
  const total = estimateToolResultTokens(content);
  if (total <= maxTokens) return { content, truncated: false, omittedTokens: 0 };
  // Sized with the largest N the marker can carry; the real one is no longer.
  const markerChars = truncationMarker(total, ref).length;
  // Most output estimates at 4 characters a token; base64-heavy output at 1.5 once it is long
  // (../tokens). Try the prose size, then one just short of where the dense estimate starts, then the
  // dense size, which fits whatever the content is.
  const sizes = [Math.floor(maxTokens * CHARS_PER_TOKEN), Math.min(Math.floor(maxTokens * CHARS_PER_TOKEN), DENSE_MIN_CHARS - 1), Math.floor(maxTokens * DENSEST_CHARS_PER_TOKEN)];
  for (const size of sizes) {
    const keepChars = size - markerChars;
    if (keepChars <= 0 || keepChars + markerChars >= content.length) continue;
    const capped = split(content, keepChars, ref);
    if (estimateToolResultTokens(capped.content) <= maxTokens) return capped;
  }
  // Only a reference longer than the budget gets here: the marker alone.
  return split(content, 0, ref);
}

function split(content: string, keepChars: number, ref: string | undefined): CappedToolResult {
  let headEnd = Math.floor(keepChars * HEAD_SHARE);
  let tailStart = content.length - (keepChars - headEnd);
  // Whole lines where a boundary is near: a half line reads as corruption.
  const nl = content.lastIndexOf('\n', headEnd - 1);
  if (nl >= 0 && nl + 1 >= headEnd - Math.floor(headEnd * SNAP_SHARE)) headEnd = nl + 1;
  const tailLen = content.length - tailStart;
  const nextNl = content.indexOf('\n', tailStart);
  if (nextNl >= 0 && nextNl + 1 <= tailStart + Math.floor(tailLen * SNAP_SHARE)) tailStart = nextNl + 1;
  // Never split a surrogate pair (a lone surrogate is not valid text for the API).
  if (headEnd > 0 && isHighSurrogate(content.charCodeAt(headEnd - 1))) headEnd--;
  if (tailStart < content.length && isLowSurrogate(content.charCodeAt(tailStart))) tailStart++;
  const head = content.slice(0, headEnd);
  const tail = content.slice(tailStart);
  const omittedTokens = estimateToolResultTokens(content.slice(headEnd, tailStart));
  const body = head.endsWith('\n') ? head.slice(0, -1) : head;
  return { content: body + truncationMarker(omittedTokens, ref) + tail, truncated: true, omittedTokens };
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

