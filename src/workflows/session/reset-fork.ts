/**
 * A manual reset (in this run, same session id) and the fork point a client forks a new session from.
 */
import { condition, workflowInfo } from '@temporalio/workflow';
import { z } from 'zod';
import type { Entry } from '../../core/entries';
import { InvalidForkPointError, SessionClosedError } from '../../core/sessions/host-errors';
import { parseWith } from '../../core/validate';
import type { ForkPoint, SessionResetResult } from '../../wire/session-messages';
import type { Catalogue } from './catalogue';
import { storeTranscript } from './continue-as-new';
import { errorFields, type SessionCore } from './core';
import { lazySchema } from '../../core/lazy-schema';

const resetRequestSchema = lazySchema(() => z.object({ transferSummary: z.boolean().optional() }).strict());

export function validateReset(s: SessionCore, req: unknown): void {
  parseWith(resetRequestSchema, req ?? {}, 'reset');
  if (s.closed) throw new SessionClosedError(workflowInfo().workflowId);
}

/**
 * A manual reset, in this run (same session id): the old conversation is stored first (it stays in
 * the transcript store, named in the result), then the conversation restarts from a transfer summary
 * and the memory. Waits for a running turn to finish, so a turn is never cut in half.
 */
export async function resetConversation(s: SessionCore, catalogue: Catalogue, req: { transferSummary?: boolean }): Promise<SessionResetResult> {
  await condition(() => s.conversation !== undefined && s.current === undefined && !s.resetting);
  // No turn starts until the reset is done: one started while the old conversation is being stored
  // would be missing from the stored copy and then wiped by the reset.
  s.resetting = true;
  try {
    const session = s.conversation!;
    const previousTranscript = await storeTranscript(s, session);
    const result = await session.reset(req);
    catalogue.upsert();
    return { ...result, previousTranscript };
  } finally {
    s.resetting = false;
  }
}

/** A query's failure reaches clients without its type, so a refusal is answered as a value. */
export function forkPoint(s: SessionCore, index: number): ForkPoint | { error: { code: string; message: string } } {
  const entries = s.conversation?.messages() ?? [];
  if (s.restoring) return { error: { code: 'SESSION_RESTORING', message: 'The session is loading its conversation; try again in a moment' } };
  if (!Number.isInteger(index) || index < 0 || index >= entries.length) return { error: errorFields(new InvalidForkPointError(index, entries.length)) };
  const entry = entries[index]!;
  if (entry.type === 'assistant' && entry.content.some((b) => b.type === 'tool_use')) {
    return { error: errorFields(new InvalidForkPointError(index, entries.length, 'it is a tool call whose results follow it; fork at the results or later')) };
  }
  const count = index + 1;
  const ref = s.transport.storedPrefixWithin(s.conversation!.id, entries, count);
  return {
    agent: s.agent,
    ...(s.start.input !== undefined ? { input: s.start.input } : {}),
    record: { ...s.record },
    transcript: { ref, tail: entries.slice(ref?.count ?? 0, count) as Entry[] },
  };
}
