/**
 * A streamed reply put together from its server-sent events: the SDK's `MessageStream` accumulation
 * (plain and beta), step for step, without the stream object around it. A streamed model call reads
 * the raw events (`messages.create({ stream: true })`) and hands each to this and to the live
 * publisher; `MessageStream` did the same accumulation plus an event emitter, promises per event and
 * tracing around it, which cost a streamed call about 0.7 ms of worker CPU more than the raw stream
 * (docs/benchmarks.md). `test/unit/reply-accumulator.test.ts` checks the result equals
 * `MessageStream.finalMessage()` for every kind of block the fake server streams.
 */
import Anthropic from '@anthropic-ai/sdk';
import { partialParse } from '@anthropic-ai/sdk/_vendor/partial-json-parser/parser';

/** One raw server-sent event of a streamed reply (the SDK's type, plain or beta). */
export type RawStreamEvent = Anthropic.RawMessageStreamEvent | Anthropic.Beta.BetaRawMessageStreamEvent;
type Reply = Anthropic.Message | Anthropic.Beta.BetaMessage;
/** A snapshot's fields, written as the SDK writes them (it mutates its snapshot the same way). */
type Writable = Record<string, unknown> & { content: Array<Record<string, unknown>>; usage: Record<string, unknown> };

/** Blocks whose `input` arrives as JSON deltas (the SDK's `tracksToolInput`). */
const TOOL_INPUT_BLOCKS = new Set(['tool_use', 'server_tool_use', 'mcp_tool_use']);
/** Usage counters a message_delta carries as whole-message totals when they apply (overwritten, never added). */
const DELTA_USAGE = ['input_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens', 'server_tool_use', 'iterations', 'fallback_credit', 'output_tokens_details'];

export class ReplyAccumulator {
  private snapshot: Writable | undefined;
  private stopped = false;
  /** Tool input JSON received so far, by block index (parsed once, when the block stops). */
  private readonly json = new Map<number, string>();

  add(event: RawStreamEvent): void {
    if (event.type === 'message_start') {
      if (this.snapshot) throw new Anthropic.AnthropicError(`Unexpected event order, got ${event.type} before receiving "message_stop"`);
      const start = event.message as unknown as Writable;
      // A copy: the event stays as it arrived (the publisher and listeners see it too).
      this.snapshot = { ...start, content: [...start.content], usage: { ...start.usage } };
      return;
    }
    const m = this.snapshot;
    if (!m) return;
    switch (event.type) {
      case 'message_stop':
        this.stopped = true;
        return;
      case 'message_delta': {
        const e = event as unknown as { delta: Record<string, unknown>; usage: Record<string, unknown>; context_management?: unknown; input_transformations?: unknown };
        m.stop_reason = e.delta.stop_reason;
        m.stop_sequence = e.delta.stop_sequence;
        m.stop_details = e.delta.stop_details;
        m.usage.output_tokens = e.usage.output_tokens;
        if (e.delta.container != null) m.container = e.delta.container;
        if (e.context_management != null) m.context_management = e.context_management;
        if (e.input_transformations != null) m.input_transformations = e.input_transformations;
        for (const k of DELTA_USAGE) if (e.usage[k] != null) m.usage[k] = e.usage[k];
        return;
      }
      case 'content_block_start': {
        const block = { ...(event.content_block as unknown as Record<string, unknown>) };
        m.content.push(block);
        // A fallback block names the model that served the reply (the beta stream relabels the message).
        if (block.type === 'fallback') m.model = (block.to as { model: string }).model;
        return;
      }
      case 'content_block_delta': {
        const block = m.content.at(event.index);
        if (!block) return;
        const d = event.delta as unknown as Record<string, unknown> & { type: string };
        if (d.type === 'text_delta' && block.type === 'text') block.text = ((block.text as string) || '') + (d.text as string);
        else if (d.type === 'citations_delta' && block.type === 'text') block.citations = [...((block.citations as unknown[] | null) ?? []), d.citation];
        else if (d.type === 'input_json_delta' && TOOL_INPUT_BLOCKS.has(block.type as string)) this.json.set(event.index, (this.json.get(event.index) ?? '') + (d.partial_json as string));
        else if (d.type === 'thinking_delta' && block.type === 'thinking') block.thinking = (block.thinking as string) + (d.thinking as string);
        else if (d.type === 'signature_delta' && block.type === 'thinking') block.signature = d.signature;
        else if (d.type === 'compaction_delta' && block.type === 'compaction') {
          // The delta carries the block's final value (null content: a failed compaction).
          block.content = d.content;
          if ('encrypted_content' in d) block.encrypted_content = d.encrypted_content;
        }
        return;
      }
      case 'content_block_stop':
        this.parseInput(event.index);
        return;
      default:
        return; // ping
    }
  }

  /** The reply, once message_stop arrived (as `finalMessage()`: an error when the stream ended without one). */
  final(): Reply {
    if (!this.snapshot || !this.stopped) throw new Anthropic.AnthropicError('stream ended without producing a Message with role=assistant');
    for (const index of [...this.json.keys()]) this.parseInput(index);
    return this.snapshot as unknown as Reply;
  }

  /** A tool block's input from its JSON deltas; partial JSON (a reply cut at max_tokens) parses as far as it goes, as in the SDK. */
  private parseInput(index: number): void {
    const buf = this.json.get(index);
    const block = this.snapshot?.content.at(index);
    if (buf === undefined || !block) return;
    this.json.delete(index);
    try {
      block.input = buf ? partialParse(buf) : {};
    } catch (err) {
      throw new Anthropic.AnthropicError(
        `Unable to parse tool parameter JSON from model. Please retry your request or adjust your prompt. Error: ${String(err)}. JSON: ${buf}`,
      );
    }
  }
}
