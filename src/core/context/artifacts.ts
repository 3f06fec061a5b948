/**
 * Artifact offloading: a tool output over a size threshold is kept out
 * of the conversation. The runtime stores it by content hash and the model gets a short reference
 * instead (size, line count, the first lines), with the tool that reads it back a page at a time:
 * `read_artifact`. The same tool reads back the full output of a capped result (./cap.ts).
 *
 * Pure and deterministic: the settings, the reference text and the page text. Storing and reading are
 * the runtime's (the tool activity on Temporal, the inline ports in process).
 */
import { z } from 'zod';
import { utf8Length } from '../bytes';
import type { ToolDefinition } from '../tools';
import { lazySchema } from '../lazy-schema';
import { plural } from '../plural';

/** The built-in tool that reads a stored output back, named in every reference and capped-result marker. */
export const READ_ARTIFACT = 'read_artifact';
/**
 * Its name in 0.3.0 (`read_tool_result`). Still answered, so running workflows and histories recorded
 * by 0.3.0 (whose model called it) keep working; never offered to the model.
 */
export const READ_ARTIFACT_ALIAS = 'read_tool_result';

/** The default threshold on the default entry (the seed's 100 KB). */
export const DEFAULT_OFFLOAD_BYTES = 100_000;
/** Below this the reference (with its preview) would be a good share of the output it replaces. */
export const MIN_OFFLOAD_BYTES = 4_096;
/** The preview in a reference: whole first lines up to this many UTF-8 bytes. */
export const PREVIEW_BYTES = 1_024;
/** How much of the first argument a reference quotes (a long heredoc is not a name). */
const ARG_CHARS = 80;

export const artifactSettingsSchema = lazySchema(() => z
  .object({
    /** Default: on with the default entry (unless `compaction.enabled` is false), off with the strict one. */
    enabled: z.boolean().optional(),
    /** Offload tool outputs over this many UTF-8 bytes (default 100,000). Setting it turns offloading on. */
    offloadBytes: z.number().int().min(MIN_OFFLOAD_BYTES).optional(),
  })
  .strict());

export type ArtifactSettings = z.infer<typeof artifactSettingsSchema>;

/** The part of the compaction settings (../settings) the offload threshold reads. */
export interface OffloadInputs {
  enabled?: boolean;
  artifacts?: ArtifactSettings;
}

/**
 * The threshold a session's tool calls carry (undefined: no offloading). Explicit settings win; else
 * the default entry offloads at 100 KB unless compaction was turned off (an untouched conversation
 * was asked for), and the strict entry (`defaultOn` false) offloads nothing.
 */
export function resolveOffloadBytes(compaction: OffloadInputs | undefined, defaultOn: boolean): number | undefined {
  const a = compaction?.artifacts;
  const enabled = a?.enabled ?? (a?.offloadBytes !== undefined ? true : defaultOn && compaction?.enabled !== false);
  return enabled ? (a?.offloadBytes ?? DEFAULT_OFFLOAD_BYTES) : undefined;
}

/** Whether `content` goes to the artifact store under this threshold. */
export function shouldOffload(content: string, offloadBytes: number | undefined): boolean {
  // Cheap first: a string of n UTF-16 units is at most 3n bytes, and at least n.
  if (offloadBytes === undefined || content.length * 3 <= offloadBytes) return false;
  return content.length > offloadBytes || utf8Length(content) > offloadBytes;
}

export interface ArtifactSource {
  /** The tool that produced the output, and its input (its first string argument is quoted). */
  tool: string;
  input: unknown;
}

/** What the model sees instead of an offloaded output. */
export function artifactReference(content: string, ref: string, source: ArtifactSource): string {
  const bytes = utf8Length(content);
  const lines = countLines(content);
  const call = `${source.tool}(${firstArg(source.input) ?? ''})`;
  return (
    `[artifact ${ref}: ${formatBytes(bytes)} of output from ${call} — ${plural(lines, 'line', 'lines')}; first lines:\n` +
    `${preview(content)}\n` +
    `Read it with ${READ_ARTIFACT}(${JSON.stringify({ ref, offset: 0 })})]`
  );
}

/** One page of a stored output, with where the next one starts. */
export function artifactPage(text: string, ref: string, offset: number, maxChars: number): string {
  let start = Math.min(offset, text.length);
  let end = Math.min(text.length, start + maxChars);
  // Never split a surrogate pair: a lone half is not valid text for the API.
  if (start > 0 && start < text.length && isLowSurrogate(text.charCodeAt(start))) start++;
  if (end < text.length && end > start && isHighSurrogate(text.charCodeAt(end - 1))) end--;
  const more = end < text.length ? ` More: ${READ_ARTIFACT}(${JSON.stringify({ ref, offset: end })}).` : '';
  return `[characters ${start}-${end} of ${text.length}.${more}]\n${text.slice(start, end)}`;
}

/**
 * The session's tools by name, with the 0.3.0 name of the read-back tool answering as the current one:
 * a recorded reply that calls `read_tool_result` must schedule the same tool activity on replay.
 */
export function toolsByNameWithAliases(tools: readonly ToolDefinition[]): Map<string, ToolDefinition> {
  const byName = new Map(tools.map((t) => [t.name, t]));
  const reader = byName.get(READ_ARTIFACT);
  if (reader && !byName.has(READ_ARTIFACT_ALIAS)) byName.set(READ_ARTIFACT_ALIAS, reader);
  return byName;
}

export function isReadArtifact(name: string): boolean {
  return name === READ_ARTIFACT || name === READ_ARTIFACT_ALIAS;
}

/** Whole lines from the start up to PREVIEW_BYTES (a first line longer than that is cut). */
function preview(content: string): string {
  let bytes = 0;
  let end = 0;
  let lastNl = -1;
  while (end < content.length) {
    const c = content.charCodeAt(end);
    const width = c < 0x80 ? 1 : c < 0x800 ? 2 : isHighSurrogate(c) ? 4 : 3;
    if (bytes + width > PREVIEW_BYTES) break;
    bytes += width;
    end += width === 4 ? 2 : 1;
    if (c === 0x0a) lastNl = end - 1;
  }
  if (end >= content.length) return content.replace(/\n$/, '');
  return content.slice(0, lastNl > 0 ? lastNl : end);
}

function countLines(content: string): number {
  if (content.length === 0) return 0;
  let n = 1;
  for (let i = content.indexOf('\n'); i >= 0 && i < content.length - 1; i = content.indexOf('\n', i + 1)) n++;
  return n;
}

/** The call's first argument as JSON (its command or path when it has one), shortened. */
function firstArg(input: unknown): string | undefined {
  let arg: unknown = input;
  if (input !== null && typeof input === 'object' && !Array.isArray(input)) {
    const o = input as Record<string, unknown>;
    arg = ['command', 'path'].map((k) => o[k]).find((v) => typeof v === 'string') ?? Object.values(o).find(isScalar);
  }
  if (!isScalar(arg)) return undefined;
  const s = typeof arg === 'string' && arg.length > ARG_CHARS ? `${arg.slice(0, ARG_CHARS)}…` : arg;
  return JSON.stringify(s);
}

function isScalar(v: unknown): v is string | number | boolean {
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}

function formatBytes(bytes: number): string {
  if (bytes < 1_000_000) return `${(bytes / 1000).toFixed(1)} KB`;
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}
