/**
 * One turn: status transitions, the first message's title, the turn in its own CancellationScope (so
 * `interrupt` cancels it), a pause when the run should continue as new while the turn waits only for
 * approvals, and the reply.
 */
import { CancellationScope, condition, isCancellation } from '@temporalio/workflow';
import { FabricError, InterruptedError, TurnSuspendedError } from '../../core/errors';
import { decodeFailure } from '../../wire/failures';
import type { QueuedMessage } from '../../wire/session-messages';
import type { Catalogue } from './catalogue';
import { continueSessionAsNew, shouldContinue } from './continue-as-new';
import { errorFields, type SessionCore } from './core';
import type { MessageQueue } from './messages';
import { turnEnded, turnStarted } from '../stream/turns';

const INTERRUPTED_HINT = '[The user interrupted the previous turn before it finished.]';

export class Turns {
  constructor(
    private readonly s: SessionCore,
    private readonly catalogue: Catalogue,
    private readonly messages: MessageQueue,
  ) {}

  async run(message: QueuedMessage, turn: () => Promise<string>, resumed = false): Promise<void> {
    const s = this.s;
    const first = s.record.messageCount === 0;
    s.turnStarted = true;
    turnStarted(message.id, message.text);
    if (!resumed) s.record.messageCount += 1;
    this.catalogue.transition('user-message');
    s.record.lastMessageAt = Date.now();
    s.record.lastUsedAt = s.record.lastMessageAt;
    this.catalogue.upsert();
    if (first && s.record.titleSource === undefined) s.titling = this.catalogue.generateTitle(message.text);
    const scope = new CancellationScope();
    s.current = { message, scope };
    const outcome = scope.run(turn);
    // While the turn runs: if the run should continue as new and the turn only waits for approvals,
    // pause it (the next run resumes it). `settled` is set first thing when the outcome settles, where a
    // `then` of its own would be one more promise a turn for Temporal's sandbox to trace.
    let settled = false;
    void condition(() => settled || (shouldContinue(s) && s.approvals.size > 0 && s.activitiesRunning === 0)).then(() => {
      if (!settled) s.suspending = true;
    });
    try {
      let text: string;
      try {
        text = await outcome;
      } finally {
        settled = true;
      }
      this.messages.answer(message.id, { text }, message.text);
      turnEnded(message.id, { text });
      s.interruptedHint = false;
    } catch (err) {
      if (err instanceof TurnSuspendedError) {
        await continueSessionAsNew(s, s.conversation!, { message, turn: s.conversation!.suspendedTurn()! });
      }
      const typed = err instanceof FabricError ? err : decodeFailure(err);
      if (!typed && !isCancellation(err)) throw err; // a bug: fail the workflow task, so a fix can resume it
      const error = typed ?? new InterruptedError();
      if (error.code === 'INTERRUPTED') s.interruptedHint = true;
      this.messages.answer(message.id, { error: errorFields(error) }, message.text);
      turnEnded(message.id, { error: errorFields(error) });
    } finally {
      s.current = undefined;
      s.suspending = false;
    }
    this.catalogue.transition('turn-done');
    s.record.lastUsedAt = Date.now();
    this.catalogue.upsert();
  }

  withHint(text: string): string {
    return this.s.interruptedHint ? `${INTERRUPTED_HINT}\n\n${text}` : text;
  }

  interrupt(): { interrupted: boolean; messageId?: string } {
    const s = this.s;
    if (!s.current) return { interrupted: false };
    const during = s.toolsRunning > 0 ? 'tool' : s.activitiesRunning > 0 ? 'model' : s.approvals.size > 0 ? 'approval' : 'model';
    s.emit('interrupted', { during });
    s.current.scope.cancel();
    return { interrupted: true, messageId: s.current.message.id };
  }
}
