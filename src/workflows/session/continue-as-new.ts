/**
 * Continue-as-new: when Temporal suggests it (or past `historyLimit`), the run stores what of the
 * conversation is not stored yet, lets every handler finish (waiting prompts answer "continued", their
 * clients ask the next run), and carries the session by reference.
 */
import { allHandlersFinished, condition, continueAsNew, makeContinueAsNewFunc, patched, workflowInfo } from '@temporalio/workflow';
import { TRANSCRIPT_STORE_MISS } from '../../wire/activity-contract';
import type { Session } from '../../core/conversation';
import { bloomAdd } from '../../core/sessions/reply-archive';
import { innermostApplicationFailure } from '../../wire/failures';
import { SESSION_APPROVALS_MEMO_KEY, type CarriedSession, type ReplyArchiveIndex, type SessionEnvelope, type StoredReply } from '../../wire/session-messages';
import { APPROVALS_MEMO_PATCH } from './approvals';
import type { SessionCore } from './core';
import { REPLIES_BEFORE_CONTINUING } from './messages';
import { streamLog } from '../stream/publish';

/** Replies carried by value to the next run; older ones are archived by reference (or, before that patch, dropped). */
const REMEMBERED_REPLIES = 50;
/**
 * Since this patch a continue-as-new archives the replies it does not carry (one activity), so a reply
 * and a message id stay known for the session's whole life; runs recorded before it dropped them.
 */
const REPLY_ARCHIVE_PATCH = 'fh-session-reply-archive';
/**
 * Since this patch `historyLimit` ends a run only once a turn has started in it. A run's start-up (the
 * conversation restored, the model resolved, each MCP server pinned and listed) can itself pass a low
 * limit; before, such a run continued as new before serving anything, and so did the next, forever.
 */
export const HISTORY_LIMIT_AFTER_TURN_PATCH = 'fh-session-limit-after-turn';

export function shouldContinue(s: SessionCore): boolean {
  if (s.closed) return false;
  const info = workflowInfo();
  const limit = s.start.historyLimit;
  const pastLimit = limit !== undefined && info.historyLength >= limit && (s.turnStarted || !s.limitWaitsForTurn);
  return info.continueAsNewSuggested || pastLimit || s.replies.size > REPLIES_BEFORE_CONTINUING;
}

/**
 * Read once per run, where serving starts (a fixed point of the run's code, never inside a condition),
 * and only for a session with a limit: runs recorded before the patch keep the old rule on replay.
 */
export function readLimitRule(s: SessionCore): void {
  s.limitWaitsForTurn = s.start.historyLimit !== undefined && patched(HISTORY_LIMIT_AFTER_TURN_PATCH);
}

export async function continueSessionAsNew(s: SessionCore, session: Session, suspended?: CarriedSession['suspended']): Promise<never> {
  await s.titling;
  const ref = await storeTranscript(s, session);
  const archived = await archiveOlderReplies(s);
  s.continuing = true;
  await condition(allHandlersFinished);
  // A reply added while the archive was stored (a cancelled message) is carried, never dropped.
  const all = [...s.replies.entries()];
  const replies = all.filter(([id], i) => i >= all.length - REMEMBERED_REPLIES || (archived !== undefined && !archived.ids.has(id)));
  const carried: CarriedSession = {
    record: { ...s.record, continuedRuns: s.record.continuedRuns + 1 },
    transcript: { ref, tail: [] },
    usage: session.usage(),
    queue: s.queue,
    suspended,
    approvals: [...s.approvals.values()],
    replies,
    ...(archived ? { replyArchive: archived.index } : s.replyArchive ? { replyArchive: s.replyArchive } : {}),
    interruptedHint: s.interruptedHint,
    decided: [...s.decided],
    streamNext: streamLog().next,
    ...(s.plans.length > 0 ? { plans: s.plans } : {}),
  };
  // The same worker keeps serving a stateful MCP server's connection to this session (mcp-pin.ts).
  const mcpPins = s.mcpPinsNow();
  if (Object.keys(mcpPins).length > 0) carried.mcpPins = mcpPins;
  const next: SessionEnvelope = { fhSession: { ...s.start, carried } };
  // Temporal gives the next run the memo this run started with, not what it upserted since. Where the
  // calls waiting for approval (approvals.ts) are or were in it, the memo as it is now goes: a list never
  // shows a waiting session as not waiting, nor an answered one as waiting.
  const memo = workflowInfo().memo ?? {};
  const waitingInMemo = (m: Readonly<Record<string, unknown>> | undefined) => m?.[SESSION_APPROVALS_MEMO_KEY] !== undefined;
  if ((waitingInMemo(memo) || waitingInMemo(s.startMemo)) && patched(APPROVALS_MEMO_PATCH)) {
    return makeContinueAsNewFunc<(envelope: SessionEnvelope) => Promise<unknown>>({ memo })(next);
  }
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

/**
 * Stores the replies the next run will not carry as one chunk chained to the archive so far, and adds
 * their ids to the archive's filter. Undefined: nothing to archive (or a run recorded before the patch).
 */
async function archiveOlderReplies(s: SessionCore): Promise<{ index: ReplyArchiveIndex; ids: Set<string> } | undefined> {
  const older: Array<[string, StoredReply]> = [...s.replies.entries()].slice(0, -REMEMBERED_REPLIES);
  if (older.length === 0 || !patched(REPLY_ARCHIVE_PATCH)) return undefined;
  const before = s.replyArchive;
  const head = await s.acts.fhArchiveReplies({ prev: before?.head ?? null, replies: older });
  const ids = older.map(([id]) => id);
  return { index: { head, bloom: bloomAdd(before?.bloom, ids), count: (before?.count ?? 0) + ids.length }, ids: new Set(ids) };
}
