/**
 * The session history model. Pure data, JSON-serialisable, runtime-agnostic: the same entries live in
 * an inline session, in workflow state, in the transcript store and in compaction summaries.
 *
 * One entry is one message of the conversation. A tool call and its result are two entries (an
 * `assistant` entry holding `tool_use` blocks, then a `tool_results` entry answering every one of
 * them); compaction treats such a pair as one unit and never splits it.
 */
import type { AttachmentRef } from './attachments';

export interface TextBlock {
  type: 'text';
  text: string;
}

export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
}

/**
 * The model's extended thinking, signed by the provider. Kept exactly as it came and sent back
 * unmodified: the API verifies the signature, and during a tool-use loop it requires the thinking that
 * preceded the calls being answered.
 */
export interface ThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}

/** Thinking the provider encrypted (`data` is opaque); kept and sent back like a thinking block. */
export interface RedactedThinkingBlock {
  type: 'redacted_thinking';
  data: string;
}

export interface ToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content: string;
  is_error?: boolean;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens?: number;
  cacheCreationInputTokens?: number;
}

/**
 * A summary Claude's server-side compaction (compact_20260112) wrote, signed: kept in the reply and sent
 * back verbatim; the server then reads only what follows it.
 */
export interface CompactionBlock {
  type: 'compaction';
  content: string | null;
  encrypted_content?: string | null;
  signature?: string | null;
}

/** A prompt (or correction) a user sent. */
export interface UserEntry {
  type: 'user';
  text: string;
  /** Files sent with it, by reference: their bytes are in the store, never here (./attachments). */
  attachments?: AttachmentRef[];
}

/**
 * An attachment in a request, provider-neutral: its reference, which the worker resolves to the
 * provider's own block (Anthropic's `image` or `document`) with the bytes from the store just before
 * the call. `masked`: shown as its one-line placeholder instead (an old attachment, like an old tool result).
 */
export interface AttachmentBlock extends AttachmentRef {
  type: 'attachment';
}

/** One model response: thinking (first, when enabled), text and/or tool calls. */
export type AssistantBlock = CompactionBlock | ThinkingBlock | RedactedThinkingBlock | TextBlock | ToolUseBlock;

export interface AssistantEntry {
  type: 'assistant';
  content: AssistantBlock[];
  stopReason?: string;
  model?: string;
  usage?: Usage;
}

/** The answers to every tool_use of the assistant entry just before it. */
export interface ToolResultsEntry {
  type: 'tool_results';
  results: ToolResultBlock[];
}

/** Files the agent touched, tracked from tool calls so they survive compaction verbatim. */
export interface FileOperations {
  read: string[];
  modified: string[];
}

/** The single entry that replaces a compacted slice. */
export interface SummaryEntry {
  type: 'summary';
  /** The structured summary text (Goal, Progress, … sections). */
  summary: string;
  /** User messages of the compacted slices, verbatim, newest first. */
  userMessages: string[];
  files: FileOperations;
  /** How many entries this summary stands for, counting earlier summaries' entries too. */
  compactedEntries: number;
  /** True when built without a model (deterministic fallback). */
  fallback: boolean;
  /**
   * Text an afterCompact hook asked to inject after the summary (e.g. a memory file). Shown after the
   * summary in the same user-side message; not carried into the next compaction (its hook injects anew).
   */
  injected?: string;
  /**
   * The facts the compaction gate checked this summary against (../context/compaction/facts), carried
   * so the next compaction checks them again. Absent: a summary made before the gate, or with it off.
   */
  facts?: Fact[];
  /** Text the settings pin (compaction.pinned): never summarised, shown verbatim after every compaction. */
  pinned?: string[];
  /** What the agent was doing and its next step, shown last so the model continues instead of restarting. */
  resume?: string;
}

/** A fact a compaction must keep (see core/context/compaction/facts.ts, which computes them). */
export interface Fact {
  kind: 'rule' | 'error' | 'file' | 'decision' | 'identifier' | 'task' | 'next_step';
  /** Index of the entry it came from in the compacted history (-1: carried from an earlier summary). */
  source: number;
  /** What a summary must contain to keep it. */
  text: string;
  /** Shown beside the text when it is restated (a file's last change, an error's tool). */
  note?: string;
}

export type Entry = UserEntry | AssistantEntry | ToolResultsEntry | SummaryEntry;

/** Messages in the Anthropic Messages API shape, as sent on the wire. */
export type ApiContentBlock = AssistantBlock | ToolResultBlock | AttachmentBlock;
export interface ApiMessage {
  role: 'user' | 'assistant';
  content: ApiContentBlock[];
}

export const SUMMARY_HEADER = '[Context Summary]';

/** Renders a summary entry as the text the model sees. */
export function renderSummaryEntry(entry: SummaryEntry): string {
  const parts = [SUMMARY_HEADER, entry.summary.trim()];
  if (entry.userMessages.length > 0) {
    parts.push(
      '## User Messages (verbatim, newest first)\n' +
        entry.userMessages.map((m) => `- ${m.replace(/\n/g, '\n  ')}`).join('\n'),
    );
  }
  if (entry.files.read.length > 0 || entry.files.modified.length > 0) {
    parts.push(renderFileOperations(entry.files));
  }
  if (entry.pinned && entry.pinned.length > 0) parts.push('## Pinned (verbatim, always in force)\n' + entry.pinned.map((p) => `- ${p.replace(/\n/g, '\n  ')}`).join('\n'));
  if (entry.injected?.trim()) parts.push(entry.injected.trim());
  // Last, so the request ends with where the agent was: it continues instead of restarting.
  if (entry.resume?.trim()) parts.push(entry.resume.trim());
  return parts.join('\n\n');
}

export function renderFileOperations(files: FileOperations): string {
  const lines = ['## File Operations'];
  if (files.read.length > 0) lines.push(`Read: ${files.read.join(', ')}`);
  if (files.modified.length > 0) lines.push(`Modified: ${files.modified.join(', ')}`);
  return lines.join('\n');
}

function entryToMessage(entry: Entry): ApiMessage {
  switch (entry.type) {
    case 'user':
      if (entry.attachments?.length) {
        // Files first, then the words about them: what Anthropic's guide recommends for images and documents.
        return { role: 'user', content: [...entry.attachments.map((a) => ({ type: 'attachment' as const, ...a })), { type: 'text', text: entry.text }] };
      }
      return { role: 'user', content: [{ type: 'text', text: entry.text }] };
    case 'assistant':
      return { role: 'assistant', content: entry.content };
    case 'tool_results':
      return { role: 'user', content: entry.results };
    case 'summary':
      return { role: 'user', content: [{ type: 'text', text: renderSummaryEntry(entry) }] };
  }
}

/**
 * Converts history to API messages. Consecutive messages of one role are merged (a summary followed
 * by a user prompt is one user message) because the API treats them as one turn anyway. Within a merged
 * user message, tool_result blocks come first, as the API requires.
 *
 * Never sends what the Messages API refuses from a resent assistant turn: text blocks that are empty
 * or whitespace-only are dropped ("text content blocks must contain non-whitespace text"); an assistant
 * entry left with no content is left out (only a final assistant message may be empty, and an empty one
 * would be read as a prefill); a final assistant message loses trailing whitespace ("final assistant
 * content cannot end with trailing whitespace"), which matters when a paused turn is sent back.
 */
export function toApiMessages(entries: readonly Entry[]): ApiMessage[] {
  return toApiMessagesWithStarts(entries).messages;
}

/**
 * toApiMessages, and for each message the index of the entry that began it. Only the last message
 * can still grow (a later entry of the same role merges into it) or change (trailing whitespace):
 * the messages before it are final, which is what lets a worker serialise each of them once.
 */
export function toApiMessagesWithStarts(entries: readonly Entry[]): { messages: ApiMessage[]; starts: number[] } {
  const out: ApiMessage[] = [];
  const starts: number[] = [];
  for (const [index, entry] of entries.entries()) {
    const msg = entryToMessage(entry);
    if (msg.role === 'assistant') {
      msg.content = msg.content.filter((b) => b.type !== 'text' || b.text.trim().length > 0);
      if (msg.content.length === 0) continue;
    }
    const last = out[out.length - 1];
    if (last && last.role === msg.role) {
      const merged = [...last.content, ...msg.content];
      if (msg.role === 'user') {
        merged.sort((a, b) => rank(a) - rank(b));
      }
      last.content = merged;
    } else {
      out.push({ role: msg.role, content: [...msg.content] });
      starts.push(index);
    }
  }
  const final = out[out.length - 1];
  const tail = final?.role === 'assistant' ? final.content[final.content.length - 1] : undefined;
  if (final && tail?.type === 'text' && tail.text !== tail.text.trimEnd()) {
    final.content = [...final.content.slice(0, -1), { ...tail, text: tail.text.trimEnd() }];
  }
  return { messages: out, starts };
}

function rank(block: ApiContentBlock): number {
  return block.type === 'tool_result' ? 0 : 1;
}

/** The text of an assistant entry (its text blocks joined). */
export function assistantText(entry: AssistantEntry): string {
  return entry.content
    .filter((b): b is TextBlock => b.type === 'text')
    .map((b) => b.text)
    .join('');
}

export function toolUses(entry: AssistantEntry): ToolUseBlock[] {
  return entry.content.filter((b): b is ToolUseBlock => b.type === 'tool_use');
}
