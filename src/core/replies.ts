/**
 * What a model reply means for the turn loop. Pure: given the assistant entry and its stop reason, it
 * says what to do next and what must be kept in the conversation so the next request is one the
 * Messages API accepts.
 *
 * Stop reasons (https://platform.claude.com/docs/en/build-with-claude/handling-stop-reasons):
 * - `end_turn`, `stop_sequence`, no reason: the turn is over; the text is the answer (may be '').
 * - `tool_use`: run the calls. Tool calls under any "finished" stop reason are run too: leaving a
 *   tool_use unanswered would make every later request a 400.
 * - `max_tokens` with text only: the answer, cut short (as before).
 * - `max_tokens` with a tool_use: the last call's input was cut off mid-way, so none of the reply's
 *   calls is run (the reply is one plan; running half of it is worse than asking again). Each is
 *   answered with an error tool_result telling the model its output was cut off, and the turn goes on
 *   within maxTurns, so the model can retry with a smaller call. The conversation stays valid.
 * - `pause_turn`: the API paused a long turn; sending the conversation back (ending in this reply)
 *   lets the model resume. Counts against maxTurns.
 * - `refusal`: the model declined. The prompt ends with {@link ModelRefusalError}; the refused reply is
 *   not kept (the docs advise not resending it), the user's prompt stays in the history.
 * - `model_context_window_exceeded`: the reply filled the context window. Nothing is kept; the turn
 *   loop treats it like the provider's "prompt is too long" (compact once and retry, or fail with
 *   ContextWindowExceededError).
 */
import { FabricError } from './errors';
import { assistantText, toolUses, type AssistantEntry, type ToolResultBlock, type ToolUseBlock } from './entries';

/** The model declined to answer (`stop_reason: "refusal"`). `text` is whatever it said before stopping. */
export class ModelRefusalError extends FabricError {
  constructor(readonly text: string) {
    super('MODEL_REFUSAL', `The model declined to answer (stop_reason "refusal")${text.trim() ? `: ${text.trim().slice(0, 200)}` : '.'}`);
  }
}

export type ReplyAction =
  /** The turn is over: `text` is the answer. */
  | { kind: 'final'; keep: AssistantEntry; text: string }
  /** Run these calls, then call the model again. */
  | { kind: 'tools'; keep: AssistantEntry; calls: ToolUseBlock[] }
  /** The calls were cut off: keep the reply, add these results (none is run), call the model again. */
  | { kind: 'answer'; keep: AssistantEntry; results: ToolResultBlock[] }
  /** Keep the reply and call the model again so it resumes (pause_turn). */
  | { kind: 'continue'; keep: AssistantEntry }
  /** The context window is full; nothing is kept. */
  | { kind: 'overflow'; message: string }
  /** The model refused; nothing is kept. */
  | { kind: 'refusal'; error: ModelRefusalError };

export const TRUNCATED_TOOL_CALL_MESSAGE =
  'Not run: your reply hit the output token limit (max_tokens) while writing this tool call, so its input is incomplete. ' +
  'Call the tool again with a smaller input, or split the work into several calls.';

export function interpretReply(entry: AssistantEntry, stopReason: string | null | undefined): ReplyAction {
  if (stopReason === 'refusal') return { kind: 'refusal', error: new ModelRefusalError(assistantText(entry)) };
  if (stopReason === 'model_context_window_exceeded') {
    return { kind: 'overflow', message: 'the model stopped with model_context_window_exceeded: the reply filled the context window' };
  }
  const keep = keptEntry(entry);
  const calls = toolUses(entry);
  if (stopReason === 'pause_turn') return { kind: 'continue', keep };
  if (calls.length > 0 && stopReason === 'max_tokens') {
    const results = calls.map((c): ToolResultBlock => ({ type: 'tool_result', tool_use_id: c.id, content: TRUNCATED_TOOL_CALL_MESSAGE, is_error: true }));
    return { kind: 'answer', keep, results };
  }
  // Calls under any other stop reason are run: an unanswered tool_use would make the next request a 400.
  if (calls.length > 0) return { kind: 'tools', keep, calls };
  return { kind: 'final', keep, text: assistantText(entry) };
}

/**
 * The entry as it stays in the conversation: text blocks the API would refuse to take back (empty or
 * whitespace-only, which real models do send, e.g. "\n\n" before a tool call) are dropped. The entry
 * may end up with no content; toApiMessages leaves such an entry out of the request. Thinking blocks
 * are kept as they are, object for object: the API verifies their signatures when they come back.
 */
export function keptEntry(entry: AssistantEntry): AssistantEntry {
  const content = entry.content.filter((b) => b.type !== 'text' || b.text.trim().length > 0);
  return content.length === entry.content.length ? entry : { ...entry, content };
}

