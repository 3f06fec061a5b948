/**
 * Agent events (what `onEvent` receives) as stream events. `text` and `model_call` have none: the
 * stream's message_end says the same with the reply itself. Pure; used by workflows and inline runs.
 */
import type { AssistantBlock } from '../core/entries';
import type { AgentEvent } from '../core/events';
import { DECISION_KINDS, type DecisionKind, type StreamEvent, type StreamEventOf } from './stream';

type ReplyBlock = StreamEventOf<'message_end'>['content'][number];

/** A reply's blocks as message_end reports them (signatures and encrypted data left out). */
export function replyBlocks(content: readonly AssistantBlock[]): ReplyBlock[] {
  return content.map((b): ReplyBlock => {
    switch (b.type) {
      case 'text':
        return { type: 'text', text: b.text };
      case 'thinking':
        return { type: 'thinking', thinking: b.thinking };
      case 'redacted_thinking':
        return { type: 'redacted_thinking' };
      case 'tool_use':
        return { type: 'tool_use', id: b.id, name: b.name, input: b.input };
      default:
        return { type: 'compaction' };
    }
  });
}

export function streamEventFromAgentEvent(event: AgentEvent): StreamEvent | undefined {
  const at = event.at;
  switch (event.type) {
    case 'tool_call':
      return { type: 'tool_started', callId: event.data.id, name: event.data.name, input: event.data.input, at };
    case 'tool_result':
      return { type: 'tool_ended', callId: event.data.id, name: event.data.name, isError: event.data.isError, content: event.data.content, at };
    case 'approval_requested':
      return { type: 'approval_requested', callId: event.data.id, name: event.data.name, input: event.data.input, at };
    case 'approval_decided': {
      const { id, name, approved, note } = event.data;
      return { type: 'approval_decided', callId: id, name, approved, ...(note !== undefined ? { note } : {}), at };
    }
    case 'interrupted':
      return { type: 'interrupted', during: event.data.during, at };
    case 'warning':
      return { type: 'warning', code: event.data.code, message: event.data.message, at };
    case 'error':
      return { type: 'error', code: event.data.code, message: event.data.message, recoverable: event.data.recoverable, at };
    case 'text':
    case 'model_call':
      return undefined;
    default:
      if ((DECISION_KINDS as readonly string[]).includes(event.type)) {
        return { type: 'decision', kind: event.type as DecisionKind, data: { ...(event.data as object) } as Record<string, unknown>, at };
      }
      return undefined;
  }
}
