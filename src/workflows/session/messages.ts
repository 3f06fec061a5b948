/**
 * The message queue and its replies: a prompt or send queues a message (once per message id), a reply
 * waits for its answer (or answers "continued" when the run continues as new first), a queued message can
 * be cancelled. Replies are remembered in the run and the last ones carried to the next run.
 */
import { condition, currentUpdateInfo } from '@temporalio/workflow';
import { z } from 'zod';
import { utf8Length } from '../../core/bytes';
import { FabricError, PromptTooLargeError } from '../../core/errors';
import { promptTextSchema } from '../../core/session';
import { SessionClosedError, UnknownMessageError } from '../../core/sessions/host-errors';
import { parseWith } from '../../core/validate';
import { encodeFailure, rejectWith } from '../../wire/failures';
import { MAX_PROMPT_BYTES } from '../../wire/messages';
import type { QueuedMessage, SessionPromptRequest, SessionReply, StoredReply } from '../../wire/session-messages';
import { workflowInfo } from '@temporalio/workflow';
import type { SessionCore } from './core';

/** Replies kept in a run: far more than can wait at once (a waiting prompt's reply is read at once). */
const REMEMBERED_REPLIES_IN_RUN = 500;

const promptRequestSchema = z.object({ text: promptTextSchema, messageId: z.string().min(1).max(200).optional() }).strict();

export class MessageQueue {
  constructor(private readonly s: SessionCore) {}

  validatePrompt(req: SessionPromptRequest): void {
    rejectWith(() => {
      const { text } = parseWith(promptRequestSchema, req, 'prompt');
      const bytes = utf8Length(text);
      if (bytes > MAX_PROMPT_BYTES) throw new PromptTooLargeError(bytes, MAX_PROMPT_BYTES);
      if (this.s.closed) throw new SessionClosedError(workflowInfo().workflowId);
    });
  }

  private enqueue(req: SessionPromptRequest): QueuedMessage {
    const s = this.s;
    const id = req.messageId ?? currentUpdateInfo()?.id ?? `m${s.record.messageCount + s.queue.length}`;
    const known = s.queue.find((m) => m.id === id) ?? (s.current?.message.id === id ? s.current.message : undefined);
    if (known) return known; // the same message again (a retried send): queued once
    const message = { id, text: req.text, at: Date.now() };
    if (!s.replies.has(id)) s.queue.push(message);
    return message;
  }

  async prompt(req: SessionPromptRequest): Promise<SessionReply> {
    const message = this.enqueue(req);
    return this.awaitReply(message.id);
  }

  async send(req: SessionPromptRequest): Promise<{ messageId: string; position: number }> {
    const message = this.enqueue(req);
    return { messageId: message.id, position: this.s.queue.indexOf(message) };
  }

  async awaitReply(messageId: string): Promise<SessionReply> {
    await condition(() => this.s.replies.has(messageId) || this.s.continuing);
    const reply = this.s.replies.get(messageId);
    if (!reply) return { messageId, continued: true };
    if ('error' in reply) throw encodeFailure(Object.assign(new FabricError(reply.error.code, reply.error.message)));
    return { messageId, text: reply.text };
  }

  assertKnownMessage(messageId: unknown): void {
    const s = this.s;
    const id = parseWith(z.string().min(1), messageId, 'messageId');
    const known = s.replies.has(id) || s.queue.some((m) => m.id === id) || s.current?.message.id === id ||
      s.start.carried?.suspended?.message.id === id;
    if (!known) throw new UnknownMessageError(id);
  }

  assertQueued(messageId: unknown): void {
    const s = this.s;
    const id = parseWith(z.string().min(1), messageId, 'messageId');
    if (!s.queue.some((m) => m.id === id)) {
      throw new UnknownMessageError(id, s.current?.message.id === id || s.replies.has(id) ? 'it has started already' : undefined);
    }
  }

  cancelMessage(messageId: string): void {
    const i = this.s.queue.findIndex((m) => m.id === messageId);
    if (i < 0) return;
    this.s.queue.splice(i, 1);
    this.answer(messageId, { error: { code: 'MESSAGE_CANCELLED', message: `Message ${messageId} was cancelled before it ran` } });
  }

  /** A reply, kept for clients that ask for it (bounded: replies already delivered drop off). */
  answer(messageId: string, reply: StoredReply): void {
    const replies = this.s.replies;
    replies.set(messageId, reply);
    if (replies.size > REMEMBERED_REPLIES_IN_RUN) replies.delete(replies.keys().next().value as string);
  }
}
