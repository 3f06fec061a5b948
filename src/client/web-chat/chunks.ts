/**
 * One turn of a session's stream as UI message stream chunks. Part ids come from the stream itself
 * (a text part is `<model call id>:<block index>`), so the same turn read again from its first offset
 * (a resume after a reload) produces the same message with the same parts: nothing lost, nothing twice.
 * A model call's later attempt voids what the earlier one streamed: `reset-step` drops it in the client.
 */
import type { StreamEnvelope, StreamEvent } from '../../wire/stream';
import { approvalId, type UIMessageChunk } from './protocol';

export interface TurnChunksOptions {
  /** The session message the turn answers (events of other messages are skipped). */
  messageId: string;
  /** The assistant UI message id (sent in `start`). */
  replyId: string;
  /**
   * Whether tool call `callId` still waits for a decision: the stream then ends (the client shows
   * the request; its answer comes as the next POST). One that was decided meanwhile is streamed past.
   */
  isPending(callId: string): Promise<boolean>;
  /** The stream starts inside a step the client has (a continuation after an approval): no start-step. */
  continuing?: boolean;
  /** Approval ids the client already has, by tool call id (a continuation's approvals were requested before it). */
  knownApprovals?: ReadonlyMap<string, string>;
}

/** A chunk and the stream offset of the event it came from (the SSE `id`). */
export interface OffsetChunk {
  offset?: number;
  chunk: UIMessageChunk;
}

type Block = { kind: 'text' | 'reasoning' | 'tool'; id: string };

/** Maps the turn's events to chunks; ends at the turn's end or at an approval the user must give. */
export async function* turnChunks(events: AsyncIterable<StreamEnvelope>, options: TurnChunksOptions): AsyncGenerator<OffsetChunk> {
  const state = new TurnState(options);
  yield { chunk: { type: 'start', messageId: options.replyId } };
  for await (const env of events) {
    const e = env.event;
    // A sub-agent's events answer the same message but are not this reply's parts.
    if (e.messageId !== options.messageId || env.subAgent !== undefined) continue;
    for (const chunk of state.map(e, env.offset)) yield { offset: env.offset, chunk };
    if (e.type === 'approval_requested' && (await options.isPending(e.callId ?? ''))) {
      yield* state.close('tool-calls');
      return;
    }
    if (e.type === 'turn_ended') {
      if ('error' in e.reply) yield { chunk: { type: 'error', errorText: `${e.reply.error.code}: ${e.reply.error.message}` } };
      yield* state.close('error' in e.reply ? 'error' : state.interrupted ? 'interrupted' : 'stop');
      return;
    }
  }
}

class TurnState {
  /** Open content blocks by `<call id>:<index>`. */
  private readonly blocks = new Map<string, Block>();
  /** Tool calls whose input the client has (tool-input-available sent). */
  private readonly inputs = new Set<string>();
  private readonly approvals: Map<string, string>;
  private readonly denied = new Set<string>();
  /** Model calls seen, with the attempt last seen. */
  private readonly attempts = new Map<string, number>();
  private inStep: boolean;
  interrupted = false;

  constructor(options: TurnChunksOptions) {
    this.approvals = new Map(options.knownApprovals ?? []);
    this.inStep = options.continuing === true;
  }

  *map(e: StreamEvent, offset: number): Generator<UIMessageChunk> {
    const callId = e.callId ?? '';
    switch (e.type) {
      case 'attempt_started': {
        if (e.kind !== 'model') return;
        const seen = this.attempts.get(callId);
        this.attempts.set(callId, e.attempt ?? 1);
        if (seen !== undefined) {
          // A retry: what the failed attempt streamed is void.
          yield* this.closeBlocks(callId, false);
          yield { type: 'reset-step' };
          return;
        }
        if (this.inStep) yield { type: 'finish-step' };
        this.inStep = true;
        yield { type: 'start-step' };
        return;
      }
      case 'block_started': {
        const key = `${callId}:${e.index}`;
        if (e.block.type === 'text') {
          this.blocks.set(key, { kind: 'text', id: key });
          yield { type: 'text-start', id: key };
        } else if (e.block.type === 'thinking') {
          this.blocks.set(key, { kind: 'reasoning', id: key });
          yield { type: 'reasoning-start', id: key };
        } else if (e.block.type === 'tool_use') {
          this.blocks.set(key, { kind: 'tool', id: e.block.id });
          yield { type: 'tool-input-start', toolCallId: e.block.id, toolName: e.block.name, dynamic: true };
        }
        return;
      }
      case 'text_delta':
      case 'thinking_delta':
      case 'tool_input_delta': {
        const block = this.blocks.get(`${callId}:${e.index}`);
        if (!block) return; // a block whose start this reader did not see
        if (e.type === 'text_delta' && block.kind === 'text') yield { type: 'text-delta', id: block.id, delta: e.text };
        if (e.type === 'thinking_delta' && block.kind === 'reasoning') yield { type: 'reasoning-delta', id: block.id, delta: e.thinking };
        if (e.type === 'tool_input_delta' && block.kind === 'tool') yield { type: 'tool-input-delta', toolCallId: block.id, inputTextDelta: e.partialJson };
        return;
      }
      case 'block_stopped': {
        const key = `${callId}:${e.index}`;
        const block = this.blocks.get(key);
        if (block) yield* this.endBlock(key, block);
        return;
      }
      case 'message_end': {
        yield* this.closeBlocks(callId, true);
        // The reply as history holds it: every tool call's input, complete.
        for (const b of e.content) if (b.type === 'tool_use') yield* this.input(b.id, b.name, b.input);
        return;
      }
      case 'tool_started':
        yield* this.input(callId, e.name, e.input);
        return;
      case 'approval_requested': {
        yield* this.input(callId, e.name, e.input);
        const id = approvalId(offset, callId);
        this.approvals.set(callId, id);
        yield { type: 'tool-approval-request', approvalId: id, toolCallId: callId };
        return;
      }
      case 'approval_decided': {
        const id = this.approvals.get(callId);
        if (id) yield { type: 'tool-approval-response', approvalId: id, approved: e.approved, ...(e.note !== undefined ? { reason: e.note } : {}) };
        if (!e.approved) {
          this.denied.add(callId);
          yield { type: 'tool-output-denied', toolCallId: callId };
        }
        return;
      }
      case 'tool_ended':
        if (this.denied.has(callId)) return; // the part says denied already
        yield* this.input(callId, e.name, undefined);
        yield e.isError ? { type: 'tool-output-error', toolCallId: callId, errorText: e.content, dynamic: true } : { type: 'tool-output-available', toolCallId: callId, output: e.content, dynamic: true };
        return;
      case 'interrupted':
        this.interrupted = true;
        return;
      default:
        return;
    }
  }

  /** Ends what is open and the message. */
  *close(finishReason: 'stop' | 'tool-calls' | 'error' | 'interrupted'): Generator<OffsetChunk> {
    for (const chunk of this.closeBlocks(undefined, true)) yield { chunk };
    if (this.inStep) yield { chunk: { type: 'finish-step' } };
    this.inStep = false;
    yield { chunk: { type: 'finish', finishReason } };
  }

  private *input(toolCallId: string, toolName: string, input: unknown): Generator<UIMessageChunk> {
    if (this.inputs.has(toolCallId)) return;
    this.inputs.add(toolCallId);
    yield { type: 'tool-input-available', toolCallId, toolName, input: input ?? {}, dynamic: true };
  }

  /** Ends the open blocks of `callId` (all calls: undefined); `withEnds` false just forgets them (a reset drops them). */
  private *closeBlocks(callId: string | undefined, withEnds: boolean): Generator<UIMessageChunk> {
    for (const [key, block] of [...this.blocks]) {
      if (callId !== undefined && !key.startsWith(`${callId}:`)) continue;
      if (withEnds) yield* this.endBlock(key, block);
      else this.blocks.delete(key);
    }
  }

  private *endBlock(key: string, block: Block): Generator<UIMessageChunk> {
    this.blocks.delete(key);
    if (block.kind === 'text') yield { type: 'text-end', id: block.id };
    if (block.kind === 'reasoning') yield { type: 'reasoning-end', id: block.id };
  }
}
