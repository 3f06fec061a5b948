/**
 * A prompt that streams: its events as they come (only those of this message), ending with its
 * turn_ended, and `reply`, the reply as the session answers it. The stream starts at the offset the
 * run had before the prompt was sent, so nothing of the turn is missed.
 */
import type { StreamEnvelope } from '../../wire/stream';
import { CallAssembly } from './assembler';

export interface PromptStream extends AsyncIterable<StreamEnvelope> {
  readonly messageId: string;
  /** The reply (rejects as the prompt would, with our typed error). */
  readonly reply: Promise<string>;
  /** The text of the turn's latest model call as assembled from its deltas (a failed attempt's dropped): the reply, once it ended. */
  text(): string;
}

export function promptStream(
  messageId: string,
  reply: Promise<string>,
  events: (signal: AbortSignal) => AsyncIterable<StreamEnvelope>,
): PromptStream {
  const calls: CallAssembly[] = [];
  const byId = new Map<string, CallAssembly>();
  // The reply settles on its own; iterating is optional.
  reply.catch(() => undefined);
  return {
    messageId,
    reply,
    text: () => calls[calls.length - 1]?.text() ?? '',
    async *[Symbol.asyncIterator]() {
      const abort = new AbortController();
      // A refused or failed prompt may never have a turn on the stream: its rejection ends the iteration.
      const ended = reply.then(
        () => undefined,
        () => abort.abort(),
      );
      try {
        for await (const env of events(abort.signal)) {
          const e = env.event;
          if (e.messageId !== messageId) continue;
          const modelEvent = e.type === 'attempt_started' ? e.kind === 'model' : ['block_started', 'text_delta', 'thinking_delta', 'tool_input_delta', 'block_stopped'].includes(e.type);
          // A sub-agent's events are the turn's too (they answer this message), but not its reply.
          const own = env.subAgent === undefined;
          if (e.callId && modelEvent && own) {
            let a = byId.get(e.callId);
            if (!a) {
              byId.set(e.callId, (a = new CallAssembly()));
              calls.push(a);
            }
            a.apply(e);
          }
          yield env;
          if (e.type === 'turn_ended' && own) return;
        }
      } finally {
        abort.abort();
        void ended;
      }
    },
  };
}
