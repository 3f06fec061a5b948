/**
 * A turn on the stream: turn_started, the turn's events tagged with its message id, turn_ended with
 * the reply or the error. Workflow state only.
 */
import { FabricError } from '../../core/errors';
import { publishStreamEvent, streamMessage } from './publish';

export function turnStarted(messageId: string, text?: string): void {
  streamMessage(messageId);
  publishStreamEvent({ type: 'turn_started', messageId, ...(text !== undefined ? { text } : {}) });
}

export function turnEnded(messageId: string, reply: { text: string } | { error: { code: string; message: string } }): void {
  publishStreamEvent({ type: 'turn_ended', messageId, reply });
  streamMessage(undefined);
}

/** Runs a served agent's prompt as a turn on the stream. */
export async function streamTurn<T>(messageId: string, text: string, run: () => Promise<T>): Promise<T> {
  turnStarted(messageId, text);
  try {
    const result = await run();
    turnEnded(messageId, { text: typeof result === 'string' ? result : JSON.stringify(result) });
    return result;
  } catch (err) {
    const e = err instanceof FabricError ? { code: err.code, message: err.message } : { code: 'FAILED', message: err instanceof Error ? err.message : String(err) };
    turnEnded(messageId, { error: e });
    throw err;
  }
}
