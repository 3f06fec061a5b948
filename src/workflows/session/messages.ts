/**
 * The message queue and its replies: a prompt or send queues a message (once per message id, for the
 * session's whole life), a reply waits for its answer (or answers "continued" when the run continues as
 * new first), a queued message can be cancelled. Replies are remembered in the run, the last ones carried
 * to the next run, and older ones archived in the store by reference (continue-as-new.ts), where a
 * message id the archive's filter may hold is looked up by an activity.
 */
import { condition, currentUpdateInfo, workflowInfo } from '@temporalio/workflow';
import { z } from 'zod';
import { attachmentRefsSchema, checkAttachmentLimits } from '../../core/attachments';
import { utf8Length } from '../../core/bytes';
import { FabricError, PromptTooLargeError } from '../../core/errors';
import { promptTextSchema } from '../../core/conversation';
import { IdempotencyKeyReusedError, SessionClosedError, UnknownMessageError } from '../../core/sessions/host-errors';
import { askedHash, bloomMayHave } from '../../core/sessions/reply-archive';
import { parseWith } from '../../core/validate';
import { encodeFailure, rejectWith } from '../../wire/failures';
import { MAX_PROMPT_BYTES } from '../../wire/messages';
import type { QueuedMessage, SessionPromptRequest, SessionReply, StoredReply } from '../../wire/session-messages';
import type { SessionCore } from './core';
import { lazySchema } from '../../core/lazy-schema';
import { isPromiseLike } from '../../core/pending';

/** A prompt's message as queued, or its reply from the archive when an earlier run answered it. */
type Enqueued = { message: QueuedMessage; archived?: StoredReply };

/**
 * Replies kept in a run before it continues as new (which archives the older ones): far more than can
 * wait at once. The hard cap only guards memory should a run not continue (it always does first).
 */
export const REPLIES_BEFORE_CONTINUING = 500;
const REPLIES_HARD_CAP = 2 * REPLIES_BEFORE_CONTINUING;

const promptRequestSchema = lazySchema(() => z.object({ text: promptTextSchema, messageId: z.string().min(1).max(200).optional(), attachments: attachmentRefsSchema }).strict());

export class MessageQueue {
  constructor(private readonly s: SessionCore) {}

  validatePrompt(req: SessionPromptRequest): void {
    rejectWith(() => {
      const { text, messageId, attachments } = parseWith(promptRequestSchema, req, 'prompt');
      const bytes = utf8Length(text);
      if (bytes > MAX_PROMPT_BYTES) throw new PromptTooLargeError(bytes, MAX_PROMPT_BYTES);
      if (attachments) checkAttachmentLimits(attachments);
      if (this.s.failure) throw new FabricError(this.s.failure.code, this.s.failure.message);
      if (this.s.closed) throw new SessionClosedError(workflowInfo().workflowId);
      // A reused key this run knows is refused before anything is written; an archived one by the handler.
      if (messageId !== undefined) this.assertSameText(messageId, this.askedInRun(messageId), text);
    });
  }

  /** The hash of the text this run knows for message `id` (queued, running, suspended or answered). */
  private askedInRun(id: string): string | undefined {
    const s = this.s;
    const message = s.queue.find((m) => m.id === id) ?? (s.current?.message.id === id ? s.current.message : undefined) ??
      (s.start.carried?.suspended?.message.id === id ? s.start.carried.suspended.message : undefined);
    return message ? askedHash(message.text) : s.replies.get(id)?.asked;
  }

  private assertSameText(id: string, asked: string | undefined, text: string): void {
    if (asked !== undefined && asked !== askedHash(text)) throw new IdempotencyKeyReusedError(id);
  }

  /** Known to this run (queued, running, suspended or answered here or in the carried replies). */
  private knownInRun(id: string): boolean {
    const s = this.s;
    return s.replies.has(id) || s.queue.some((m) => m.id === id) || s.current?.message.id === id || s.start.carried?.suspended?.message.id === id;
  }

  /*
   * A prompt's path before it waits for its reply makes no promise of its own unless the reply archive
   * must be asked (an activity): Temporal's sandbox captures a stack trace for every promise workflow code
   * makes, on every run and every replay (about 0.1 ms each on a session's replay, measured), and the
   * archive is rarely asked. So `archived` and `enqueue` answer at once when they can.
   */

  /** The archived reply to `id`: an activity, only when the archive's filter may hold it; null at once otherwise. */
  private archived(id: string): Promise<StoredReply | null> | null {
    const archive = this.s.replyArchive;
    if (!archive || this.knownInRun(id) || !bloomMayHave(archive.bloom, id)) return null;
    return this.s.acts.fhFindReply({ head: archive.head, messageId: id });
  }

  /** Queues the message once per id; a message answered in an earlier run is not queued again (its reply is returned). */
  private enqueue(req: SessionPromptRequest): Enqueued | Promise<Enqueued> {
    const s = this.s;
    const id = req.messageId ?? currentUpdateInfo()?.id ?? `m${s.record.messageCount + s.queue.length}`;
    const lookup = this.archived(id);
    return lookup ? lookup.then((archived) => this.queued(req, id, archived)) : this.queued(req, id, null);
  }

  private queued(req: SessionPromptRequest, id: string, archived: StoredReply | null): Enqueued {
    const s = this.s;
    if (archived) {
      if (archived.asked !== undefined && archived.asked !== askedHash(req.text)) throw encodeFailure(new IdempotencyKeyReusedError(id));
      return { message: { id, text: req.text, at: Date.now() }, archived };
    }
    const known = s.queue.find((m) => m.id === id) ?? (s.current?.message.id === id ? s.current.message : undefined);
    if (known) {
      // The same message again (a retried send): queued once. The validator refused other text already,
      // unless the first one arrived while this one's lookup ran.
      if (known.text !== req.text) throw encodeFailure(new IdempotencyKeyReusedError(id));
      return { message: known };
    }
    const message: QueuedMessage = { id, text: req.text, at: Date.now(), ...(req.attachments?.length ? { attachments: req.attachments } : {}) };
    if (!s.replies.has(id)) s.queue.push(message);
    return { message };
  }

  async prompt(req: SessionPromptRequest): Promise<SessionReply> {
    const enqueued = this.enqueue(req);
    const { message, archived } = isPromiseLike(enqueued) ? await enqueued : enqueued;
    if (archived) return replyOf(message.id, archived);
    return this.awaitReply(message.id);
  }

  async send(req: SessionPromptRequest): Promise<{ messageId: string; position: number }> {
    const enqueued = this.enqueue(req);
    const { message } = isPromiseLike(enqueued) ? await enqueued : enqueued;
    // -1: answered already (`reply(messageId)` returns the answer).
    return { messageId: message.id, position: this.s.queue.indexOf(message) };
  }

  async awaitReply(messageId: string): Promise<SessionReply> {
    const lookup = this.archived(messageId);
    const archived = lookup && (await lookup);
    if (archived) return replyOf(messageId, archived);
    if (!this.knownInRun(messageId) && this.s.replyArchive) throw encodeFailure(new UnknownMessageError(messageId));
    await condition(() => this.s.replies.has(messageId) || this.s.continuing || this.s.failure !== undefined);
    const reply = this.s.replies.get(messageId) ?? (this.s.failure && { error: this.s.failure });
    if (!reply) return { messageId, continued: true };
    return replyOf(messageId, reply);
  }

  /** The validator of `reply`: refuses at once an id this run does not know and the archive certainly lacks. */
  assertKnownMessage(messageId: unknown): void {
    const id = parseWith(z.string().min(1), messageId, 'messageId');
    const archive = this.s.replyArchive;
    if (!this.knownInRun(id) && !(archive && bloomMayHave(archive.bloom, id))) throw new UnknownMessageError(id);
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
    const [message] = this.s.queue.splice(i, 1);
    this.answer(messageId, { error: { code: 'MESSAGE_CANCELLED', message: `Message ${messageId} was cancelled before it ran` } }, message!.text);
  }

  /** A reply, kept for clients that ask for it (the run continues as new, archiving older ones, long before the cap). */
  answer(messageId: string, reply: StoredReply, askedText?: string): void {
    const replies = this.s.replies;
    replies.set(messageId, askedText === undefined ? reply : { ...reply, asked: askedHash(askedText) });
    if (replies.size > REPLIES_HARD_CAP) replies.delete(replies.keys().next().value as string);
  }
}

function replyOf(messageId: string, reply: StoredReply): SessionReply {
  if ('error' in reply) throw encodeFailure(new FabricError(reply.error.code, reply.error.message));
  return { messageId, text: reply.text };
}
