/**
 * The stream around one model activity: a block of offsets for its live deltas, and the durable
 * message_end once it returned (the reply as history holds it: what a client's assembled reply is
 * checked against). Workflow state only: no commands.
 */
import type { ModelActivityResult } from '../../wire/activity-contract';
import type { StreamSlot } from '../../wire/stream';
import { replyBlocks } from '../../wire/stream-agent-events';
import { streamLog } from './publish';

/** A slot for the call's deltas, or undefined when this run streams nothing. */
export function openModelStream(): StreamSlot | undefined {
  const log = streamLog();
  return log.enabled ? log.open('model') : undefined;
}

/** A slot for a tool call's output lines (its tool_use id names the block), or undefined. */
export function openToolStream(toolUseId: string): StreamSlot | undefined {
  const log = streamLog();
  return log.enabled ? log.open('tool', toolUseId) : undefined;
}

export function closeToolStream(slot: StreamSlot | undefined): void {
  if (slot) streamLog().close(slot.callId);
}

/** The call returned (or failed: result undefined): its block closes, and its reply goes on the stream. */
export function closeModelStream(slot: StreamSlot | undefined, result: ModelActivityResult | undefined, at: number): void {
  if (!slot) return;
  const log = streamLog();
  log.close(slot.callId);
  if (!result || result.entry === undefined) return;
  log.publish(
    {
      type: 'message_end',
      callId: slot.callId,
      ...(slot.messageId !== undefined ? { messageId: slot.messageId } : {}),
      ...(result.streamed ? { attempt: result.streamed.attempt } : {}),
      model: result.model,
      stopReason: result.stopReason,
      usage: result.usage,
      content: replyBlocks(result.entry.content),
    },
    at,
  );
}
