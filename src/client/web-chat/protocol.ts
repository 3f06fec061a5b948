/**
 * The AI SDK's UI message stream protocol (v1, as `ai` 7 reads it), in our own small types: the handler
 * speaks it without importing `ai` at run time (the AI SDK is an optional peer, needed only by the
 * browser side). test/unit/web-chat-stream.test.ts feeds what we emit to the AI SDK's own parser.
 */
import { z } from 'zod';

/** The response headers of a UI message stream (the AI SDK's UI_MESSAGE_STREAM_HEADERS). */
export const UI_MESSAGE_STREAM_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-vercel-ai-ui-message-stream': 'v1',
  'x-accel-buffering': 'no',
};

/** The chunks we emit (a subset of the protocol's; every field as its schema names it). */
export type UIMessageChunk =
  | { type: 'start'; messageId: string }
  | { type: 'start-step' }
  | { type: 'finish-step' }
  | { type: 'reset-step' }
  | { type: 'text-start'; id: string }
  | { type: 'text-delta'; id: string; delta: string }
  | { type: 'text-end'; id: string }
  | { type: 'reasoning-start'; id: string }
  | { type: 'reasoning-delta'; id: string; delta: string }
  | { type: 'reasoning-end'; id: string }
  | { type: 'tool-input-start'; toolCallId: string; toolName: string; dynamic: true }
  | { type: 'tool-input-delta'; toolCallId: string; inputTextDelta: string }
  | { type: 'tool-input-available'; toolCallId: string; toolName: string; input: unknown; dynamic: true }
  | { type: 'tool-approval-request'; approvalId: string; toolCallId: string }
  | { type: 'tool-approval-response'; approvalId: string; approved: boolean; reason?: string }
  | { type: 'tool-output-available'; toolCallId: string; output: unknown; dynamic: true }
  | { type: 'tool-output-error'; toolCallId: string; errorText: string; dynamic: true }
  | { type: 'tool-output-denied'; toolCallId: string }
  | { type: 'error'; errorText: string }
  | { type: 'finish'; finishReason?: 'stop' | 'tool-calls' | 'error' | 'interrupted' | 'other' };

/**
 * What useChat POSTs (DefaultChatTransport's body: `{ ...body, id, messages, trigger, messageId }`).
 * Only what we read is checked; other fields pass (a UI message carries metadata we do not use).
 */
const partSchema = z.looseObject({ type: z.string() });
const uiMessageSchema = z.looseObject({
  id: z.string().min(1),
  role: z.enum(['system', 'user', 'assistant']),
  parts: z.array(partSchema),
});
export const chatRequestSchema = z.looseObject({
  id: z.string().min(1),
  messages: z.array(uiMessageSchema).min(1),
  trigger: z.enum(['submit-message', 'regenerate-message']).optional(),
  messageId: z.string().optional(),
});
export type ChatRequest = z.infer<typeof chatRequestSchema>;
export type UIMessageLike = z.infer<typeof uiMessageSchema>;

/** A tool part the user answered with addToolApprovalResponse (state 'approval-responded'). */
const approvalResponseSchema = z.looseObject({
  toolCallId: z.string().min(1),
  state: z.literal('approval-responded'),
  approval: z.looseObject({ id: z.string().min(1), approved: z.boolean(), reason: z.string().optional() }),
});
export type ApprovalResponse = z.infer<typeof approvalResponseSchema>;

/** The approvals an assistant message answers (tool parts: `tool-<name>` or `dynamic-tool`). */
export function approvalResponses(message: UIMessageLike): ApprovalResponse[] {
  const out: ApprovalResponse[] = [];
  for (const part of message.parts) {
    if (part.type !== 'dynamic-tool' && !part.type.startsWith('tool-')) continue;
    const parsed = approvalResponseSchema.safeParse(part);
    if (parsed.success) out.push(parsed.data);
  }
  return out;
}

/**
 * The approval id we give a tool-approval-request: the stream offset of the approval_requested event
 * and the tool call, so the answer (which carries it back) says where the turn's stream goes on.
 */
export function approvalId(offset: number, callId: string): string {
  return `fh:${offset}:${callId}`;
}

export function parseApprovalId(id: string): { offset: number; callId: string } | undefined {
  const m = /^fh:(\d{1,15}):(.+)$/.exec(id);
  return m ? { offset: Number(m[1]), callId: m[2]! } : undefined;
}

/** The assistant UI message id of the reply to session message `messageId` (stable across resumes). */
export function replyMessageId(messageId: string): string {
  return `${messageId}-reply`;
}

/** The session message id of a user UI message: a retried POST (same UI id) is the same message. */
export function sessionMessageId(uiMessageId: string): string {
  return `web-${uiMessageId}`;
}
