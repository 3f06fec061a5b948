/**
 * The end of every OpenAI call: the canonical events (the Anthropic Messages stream's shape, which
 * ./responses-events and ./chat-events translate each API's stream into) handed to the caller's
 * `onEvent` and to the one ReplyAccumulator, whose final message becomes our entry. So the live
 * publisher, the stream offsets and the reply's assembly are the Anthropic path's, unchanged.
 */
import type { AssistantBlock } from '../../../core/entries';
import type { ModelCallResult } from '../../../core/ports';
import { keptEntry } from '../../../core/replies';
import { ReplyAccumulator, type RawStreamEvent } from '../anthropic/reply-accumulator';

export class CanonicalReply {
  private readonly reply = new ReplyAccumulator();

  constructor(private readonly onEvent?: (event: RawStreamEvent) => void) {}

  emit(event: RawStreamEvent): void {
    this.reply.add(event);
    this.onEvent?.(event);
  }

  /** The reply as our entry, with its usage (input tokens exclusive of the cached ones, as Anthropic counts). */
  result(): ModelCallResult {
    const res = this.reply.final() as unknown as {
      model: string;
      stop_reason: string | null;
      content: Array<Record<string, unknown> & { type: string }>;
      usage: { input_tokens?: number; output_tokens?: number; cache_read_input_tokens?: number | null };
    };
    const content: AssistantBlock[] = [];
    for (const b of res.content) {
      if (b.type === 'text') content.push({ type: 'text', text: b.text as string });
      else if (b.type === 'tool_use') content.push({ type: 'tool_use', id: b.id as string, name: b.name as string, input: b.input });
      else if (b.type === 'redacted_thinking') content.push({ type: 'redacted_thinking', data: b.data as string });
    }
    const usage = {
      inputTokens: res.usage.input_tokens ?? 0,
      outputTokens: res.usage.output_tokens ?? 0,
      cacheReadInputTokens: res.usage.cache_read_input_tokens ?? 0,
      cacheCreationInputTokens: 0,
    };
    const stopReason = res.stop_reason ?? undefined;
    const entry = keptEntry({ type: 'assistant', content, stopReason, model: res.model, usage });
    return { entry, usage, stopReason: res.stop_reason ?? null, model: res.model };
  }
}

/** The `message_start` every translated stream begins with (usage arrives with the end). */
export function messageStart(id: string, model: string): RawStreamEvent {
  return {
    type: 'message_start',
    message: {
      id,
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
    },
  } as unknown as RawStreamEvent;
}

/** `message_delta` then `message_stop`: the stop reason and the whole call's usage. */
export function messageEnd(stopReason: string, usage: { input: number; cached: number; output: number }): RawStreamEvent[] {
  return [
    {
      type: 'message_delta',
      delta: { stop_reason: stopReason, stop_sequence: null },
      // OpenAI counts cached tokens inside the input; ours (Anthropic's) count them apart.
      usage: { input_tokens: Math.max(0, usage.input - usage.cached), output_tokens: usage.output, cache_read_input_tokens: usage.cached },
    } as unknown as RawStreamEvent,
    { type: 'message_stop' } as RawStreamEvent,
  ];
}

export const blockStart = (index: number, content_block: Record<string, unknown>): RawStreamEvent =>
  ({ type: 'content_block_start', index, content_block }) as unknown as RawStreamEvent;
export const textDelta = (index: number, text: string): RawStreamEvent =>
  ({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } }) as unknown as RawStreamEvent;
export const jsonDelta = (index: number, partial_json: string): RawStreamEvent =>
  ({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } }) as unknown as RawStreamEvent;
export const blockStop = (index: number): RawStreamEvent => ({ type: 'content_block_stop', index }) as RawStreamEvent;
