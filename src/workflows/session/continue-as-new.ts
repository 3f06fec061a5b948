/**
 * Continue-as-new: when Temporal suggests it (or past `historyLimit`), the run stores what of the
 * conversation is not stored yet, lets every handler finish (waiting prompts answer "continued", their
 * clients ask the next run), and carries the session by reference.
 */
import { allHandlersFinished, condition, continueAsNew, workflowInfo } from '@temporalio/workflow';
import { TRANSCRIPT_STORE_MISS } from '../../activities/contract';
import type { Session } from '../../core/session';
import { innermostApplicationFailure } from '../../wire/failures';
import type { CarriedSession, SessionEnvelope } from '../../wire/session-messages';
import type { SessionCore } from './core';

/** Replies kept for clients that ask again after a continue-as-new; older ones drop off. */
const REMEMBERED_REPLIES = 50;

export function shouldContinue(s: SessionCore): boolean {
  if (s.closed) return false;
  const info = workflowInfo();
  const limit = s.start.historyLimit;
  return info.continueAsNewSuggested || (limit !== undefined && info.historyLength >= limit);
}

export async function continueSessionAsNew(s: SessionCore, session: Session, suspended?: CarriedSession['suspended']): Promise<never> {
  await s.titling;
  const ref = await storeTranscript(s, session);
  s.continuing = true;
  await condition(allHandlersFinished);
  const carried: CarriedSession = {
    record: { ...s.record, continuedRuns: s.record.continuedRuns + 1 },
    transcript: { ref, tail: [] },
    usage: session.usage(),
    queue: s.queue,
    suspended,
    approvals: [...s.approvals.values()],
    replies: [...s.replies.entries()].slice(-REMEMBERED_REPLIES),
    interruptedHint: s.interruptedHint,
    decided: [...s.decided],
  };
  const next: SessionEnvelope = { fhSession: { ...s.start, carried } };
  return continueAsNew(next);
}

/** The conversation as a stored transcript (stores what is not stored yet; all of it for a worker without the rest). */
export async function storeTranscript(s: SessionCore, session: Session): Promise<CarriedSession['transcript']['ref']> {
  const { base, delta } = s.transport.unstored(session.id, session.messages());
  if (delta.length === 0) return base;
  try {
    return await s.acts.fhStoreTranscript({ base, delta });
  } catch (err) {
    if (innermostApplicationFailure(err)?.type !== TRANSCRIPT_STORE_MISS) throw err;
    return s.acts.fhStoreTranscript({ base: null, delta: [...session.messages()] });
  }
}
