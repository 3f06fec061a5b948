/**
 * A Responses API stream as the canonical events (../port): `response.created` starts the message;
 * each output text part is a text block (`response.output_text.delta` its deltas), each function call
 * a tool_use block (`response.function_call_arguments.delta` its input JSON), each reasoning item that
 * carries encrypted content a redacted_thinking block whose data round-trips; `response.completed` /
 * `response.incomplete` end it with the stop reason and usage; `error` / `response.failed` throw.
 * Reasoning summaries are not asked for, and reasoning text is not shown (OpenAI sends none unencrypted).
 */
import type { ResponseStreamEvent, Response as OpenAIResponse } from 'openai/resources/responses/responses';
import type { RawStreamEvent } from '../anthropic/reply-accumulator';
import { streamedError } from './errors';
import { blockStart, blockStop, jsonDelta, messageEnd, messageStart, textDelta } from './reply';
import { sealReasoning } from './reasoning';

/**
 * Responses API stream events as our canonical stream events.
 *
 * @internal Typed by the `openai` SDK (an optional peer): stripped from the published declarations.
 */
export class ResponsesTranslator {
  private next = 0;
  /** Our block index by the API's output item (and content part, for text). */
  private readonly blocks = new Map<string, number>();
  private sawToolCall = false;
  private refused = false;
  private ended = false;

  constructor(private readonly label: string) {}

  /** The canonical events one API event becomes (often none). Throws the classified error of a failed stream. */
  translate(event: ResponseStreamEvent): RawStreamEvent[] {
    switch (event.type) {
      case 'response.created':
        return [messageStart(event.response.id, event.response.model)];
      case 'response.content_part.added': {
        if (event.part.type !== 'output_text' && event.part.type !== 'refusal') return [];
        if (event.part.type === 'refusal') this.refused = true;
        return [blockStart(this.open(`${event.output_index}:${event.content_index}`), { type: 'text', text: '' })];
      }
      case 'response.output_text.delta':
      case 'response.refusal.delta': {
        const index = this.blocks.get(`${event.output_index}:${event.content_index}`);
        return index === undefined || !event.delta ? [] : [textDelta(index, event.delta)];
      }
      case 'response.content_part.done': {
        const index = this.blocks.get(`${event.output_index}:${event.content_index}`);
        return index === undefined ? [] : [blockStop(index)];
      }
      case 'response.output_item.added': {
        if (event.item.type !== 'function_call') return [];
        this.sawToolCall = true;
        const index = this.open(`${event.output_index}`);
        return [blockStart(index, { type: 'tool_use', id: event.item.call_id, name: event.item.name, input: {} })];
      }
      case 'response.function_call_arguments.delta': {
        const index = this.blocks.get(`${event.output_index}`);
        return index === undefined || !event.delta ? [] : [jsonDelta(index, event.delta)];
      }
      case 'response.output_item.done': {
        const item = event.item;
        if (item.type === 'function_call') {
          const index = this.blocks.get(`${event.output_index}`);
          return index === undefined ? [] : [blockStop(index)];
        }
        if (item.type === 'reasoning' && item.encrypted_content) {
          const index = this.open(`${event.output_index}`);
          return [blockStart(index, { type: 'redacted_thinking', data: sealReasoning({ id: item.id, encrypted_content: item.encrypted_content }) }), blockStop(index)];
        }
        return [];
      }
      case 'response.completed':
      case 'response.incomplete':
        this.ended = true;
        return messageEnd(this.stopReason(event.response), usageOf(event.response));
      case 'response.failed':
        throw streamedError(this.label, event.response.error);
      case 'error':
        throw streamedError(this.label, { code: event.code, message: event.message });
      default:
        return [];
    }
  }

  /** Whether the stream reached its end event (a stream cut before it is a network failure). */
  get complete(): boolean {
    return this.ended;
  }

  private open(key: string): number {
    const index = this.next++;
    this.blocks.set(key, index);
    return index;
  }

  private stopReason(response: OpenAIResponse): string {
    const reason = response.incomplete_details?.reason;
    if (response.status === 'incomplete' && reason === 'max_output_tokens') return 'max_tokens';
    if (response.status === 'incomplete' && reason === 'content_filter') return 'refusal';
    if (this.sawToolCall) return 'tool_use';
    if (this.refused) return 'refusal';
    return 'end_turn';
  }
}

function usageOf(response: OpenAIResponse): { input: number; cached: number; output: number } {
  const u = response.usage;
  return { input: u?.input_tokens ?? 0, cached: u?.input_tokens_details?.cached_tokens ?? 0, output: u?.output_tokens ?? 0 };
}
