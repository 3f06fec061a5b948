/**
 * Gemini's stream (GenerateContentResponse chunks: candidates[0].content.parts, usageMetadata,
 * finishReason on the last) told as the Anthropic Messages stream's events (../port), so the live
 * publisher and the reply accumulator stay one:
 *
 * - text parts -> a text block (consecutive chunks extend it);
 * - thought parts (`thought: true`) -> a thinking block, its signature by signature_delta;
 * - a functionCall part (whole in one chunk) -> a tool_use block with one input_json_delta;
 * - a thoughtSignature on a text or functionCall part -> a redacted_thinking block right before that
 *   part's block (its `data` the signature), which ./request sends back on the same part;
 * - the finish reason and usage -> message_delta, then message_stop.
 */
import { randomUUID } from 'node:crypto';
import type { RawStreamEvent } from '../port';
import { SYNTHETIC_CALL_ID_PREFIX, type GeminiPart } from './request';

/** One streamed chunk (the SDK's GenerateContentResponse, as far as we read it). */
export interface GeminiChunk {
  candidates?: Array<{ content?: { parts?: GeminiPart[] }; finishReason?: string }>;
  usageMetadata?: GeminiUsage;
  modelVersion?: string;
  responseId?: string;
  promptFeedback?: { blockReason?: string };
}

export interface GeminiUsage {
  promptTokenCount?: number;
  cachedContentTokenCount?: number;
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
}

/** Finish reasons that mean the model (or its filters) would not answer. */
const REFUSALS = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', 'LANGUAGE']);

/** Our stop reason for Gemini's finish reason (STOP with function calls is a tool_use turn). */
export function stopReasonOf(finishReason: string | undefined, calledTools: boolean, blocked: boolean): string {
  if (blocked || (finishReason !== undefined && REFUSALS.has(finishReason))) return 'refusal';
  if (finishReason === 'MAX_TOKENS') return 'max_tokens';
  return calledTools ? 'tool_use' : 'end_turn';
}

/** Our usage from Gemini's: implicit-cache reads apart from the rest of the prompt; thoughts are output. */
export function usageOf(u: GeminiUsage | undefined): { input_tokens: number; output_tokens: number; cache_read_input_tokens: number; cache_creation_input_tokens: number } {
  const cached = u?.cachedContentTokenCount ?? 0;
  return {
    input_tokens: Math.max(0, (u?.promptTokenCount ?? 0) - cached),
    output_tokens: (u?.candidatesTokenCount ?? 0) + (u?.thoughtsTokenCount ?? 0),
    cache_read_input_tokens: cached,
    cache_creation_input_tokens: 0,
  };
}

type Open = { index: number; kind: 'text' | 'thinking' };

export class GeminiStreamTranslator {
  private started = false;
  private open: Open | undefined;
  private next = 0;
  private calledTools = false;
  private blocked = false;
  private finishReason: string | undefined;
  private usage: GeminiUsage | undefined;

  constructor(private readonly requestedModel: string) {}

  /** The events one chunk makes, in order. */
  add(chunk: GeminiChunk): RawStreamEvent[] {
    const out: unknown[] = [];
    if (chunk.usageMetadata) this.usage = chunk.usageMetadata;
    if (!this.started) this.start(chunk, out);
    if (chunk.promptFeedback?.blockReason) this.blocked = true;
    const candidate = chunk.candidates?.[0];
    for (const part of candidate?.content?.parts ?? []) this.part(part, out);
    if (candidate?.finishReason) this.finishReason = candidate.finishReason;
    return out as RawStreamEvent[];
  }

  /** The events that close the reply once the stream ended. */
  finish(): RawStreamEvent[] {
    const out: unknown[] = [];
    if (!this.started) this.start({}, out);
    this.close(out);
    const usage = usageOf(this.usage);
    out.push({
      type: 'message_delta',
      delta: { stop_reason: stopReasonOf(this.finishReason, this.calledTools, this.blocked), stop_sequence: null },
      usage: { output_tokens: usage.output_tokens, input_tokens: usage.input_tokens, cache_read_input_tokens: usage.cache_read_input_tokens },
    });
    out.push({ type: 'message_stop' });
    return out as RawStreamEvent[];
  }

  private start(chunk: GeminiChunk, out: unknown[]): void {
    this.started = true;
    const usage = usageOf(chunk.usageMetadata);
    out.push({
      type: 'message_start',
      message: {
        id: chunk.responseId ?? `gemini_${randomUUID()}`,
        type: 'message',
        role: 'assistant',
        model: chunk.modelVersion ?? this.requestedModel,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 0 },
      },
    });
  }

  private part(part: GeminiPart, out: unknown[]): void {
    if (part.thought) {
      const index = this.ensure('thinking', out);
      if (part.text) out.push({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: part.text } });
      if (part.thoughtSignature) out.push({ type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: part.thoughtSignature } });
      return;
    }
    if (part.functionCall) {
      this.close(out);
      if (part.thoughtSignature) this.signature(part.thoughtSignature, out);
      const index = this.next++;
      const call = part.functionCall;
      const id = call.id || `${SYNTHETIC_CALL_ID_PREFIX}${randomUUID()}`;
      out.push({ type: 'content_block_start', index, content_block: { type: 'tool_use', id, name: call.name, input: {} } });
      out.push({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(call.args ?? {}) } });
      out.push({ type: 'content_block_stop', index });
      this.calledTools = true;
      return;
    }
    if (typeof part.text !== 'string') return; // parts we do not use (inline data, code execution)
    if (part.thoughtSignature) {
      // The signature belongs to this part: a block of its own before it, and the text starts anew.
      this.close(out);
      this.signature(part.thoughtSignature, out);
    }
    if (!part.text) return;
    const index = this.ensure('text', out);
    out.push({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: part.text } });
  }

  private signature(data: string, out: unknown[]): void {
    const index = this.next++;
    out.push({ type: 'content_block_start', index, content_block: { type: 'redacted_thinking', data } });
    out.push({ type: 'content_block_stop', index });
  }

  /** The open block of this kind (another kind open is closed first). */
  private ensure(kind: Open['kind'], out: unknown[]): number {
    if (this.open?.kind === kind) return this.open.index;
    this.close(out);
    const index = this.next++;
    const block = kind === 'text' ? { type: 'text', text: '', citations: null } : { type: 'thinking', thinking: '', signature: '' };
    out.push({ type: 'content_block_start', index, content_block: block });
    this.open = { index, kind };
    return index;
  }

  private close(out: unknown[]): void {
    if (!this.open) return;
    out.push({ type: 'content_block_stop', index: this.open.index });
    this.open = undefined;
  }
}
