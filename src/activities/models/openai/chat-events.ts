/**
 * A Chat Completions stream as the canonical events (../port): the first chunk starts the message;
 * `delta.content` is a text block, each `delta.tool_calls[i]` (by its `index`) a tool_use block with
 * its `arguments` as input JSON; a block stops when the next begins. The stop reason comes with
 * `finish_reason`, the usage with the last chunk (`stream_options.include_usage`), so the message ends
 * when the stream does (`data: [DONE]`). Reasoning text some servers add (`reasoning_content`) is not kept.
 */
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { RawStreamEvent } from '../anthropic/reply-accumulator';
import { blockStart, blockStop, jsonDelta, messageEnd, messageStart, textDelta } from './reply';

const STOP_REASONS: Record<string, string> = {
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  length: 'max_tokens',
  stop: 'end_turn',
  content_filter: 'refusal',
};

/**
 * Chat Completions stream chunks as our canonical stream events.
 *
 * @internal Typed by the `openai` SDK (an optional peer): stripped from the published declarations.
 */
export class ChatTranslator {
  private started = false;
  private next = 0;
  private open: { kind: 'text' | 'tool'; index: number } | undefined;
  /** Our block index by the chunk's tool call `index`. */
  private readonly tools = new Map<number, number>();
  private finish: string | undefined;
  private usage = { input: 0, cached: 0, output: 0 };

  translate(chunk: ChatCompletionChunk): RawStreamEvent[] {
    const out: RawStreamEvent[] = [];
    if (!this.started) {
      this.started = true;
      out.push(messageStart(chunk.id, chunk.model));
    }
    if (chunk.usage) {
      const u = chunk.usage;
      this.usage = { input: u.prompt_tokens ?? 0, cached: u.prompt_tokens_details?.cached_tokens ?? 0, output: u.completion_tokens ?? 0 };
    }
    const choice = chunk.choices?.[0];
    if (!choice) return out;
    const delta = choice.delta ?? {};
    const text = delta.content ?? delta.refusal;
    if (text) {
      if (this.open?.kind !== 'text') out.push(...this.begin('text', { type: 'text', text: '' }));
      out.push(textDelta(this.open!.index, text));
    }
    for (const call of delta.tool_calls ?? []) {
      let index = this.tools.get(call.index);
      if (index === undefined) {
        out.push(...this.begin('tool', { type: 'tool_use', id: call.id ?? `call_${call.index}`, name: call.function?.name ?? '', input: {} }));
        index = this.open!.index;
        this.tools.set(call.index, index);
      }
      if (call.function?.arguments) out.push(jsonDelta(index, call.function.arguments));
    }
    if (choice.finish_reason) this.finish = choice.finish_reason;
    return out;
  }

  /** The end of the stream: the last block's stop, the stop reason and the usage. Undefined: the stream said nothing. */
  end(): RawStreamEvent[] | undefined {
    if (!this.started || this.finish === undefined) return undefined;
    const out: RawStreamEvent[] = this.open ? [blockStop(this.open.index)] : [];
    this.open = undefined;
    // Some servers (older Ollama) finish a tool-calling reply with 'stop'.
    const reason = this.tools.size > 0 && this.finish === 'stop' ? 'tool_use' : (STOP_REASONS[this.finish] ?? 'end_turn');
    return [...out, ...messageEnd(reason, this.usage)];
  }

  private begin(kind: 'text' | 'tool', block: Record<string, unknown>): RawStreamEvent[] {
    const out: RawStreamEvent[] = this.open ? [blockStop(this.open.index)] : [];
    this.open = { kind, index: this.next++ };
    return [...out, blockStart(this.open.index, block)];
  }
}
