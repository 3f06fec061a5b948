/**
 * What an inline session derives on its own: a fresh id, a title from the first message (the no-model
 * fallback), and the automatic status transitions, from the same rules the Temporal session host uses.
 */
import { randomInt } from 'node:crypto';
import { sessionSlug as slug } from '../core/sessions/ids';
import { autoTransition, type StatusEvent } from '../core/sessions/statuses';

export { fallbackTitle } from '../core/sessions/titles';
export type { StatusEvent } from '../core/sessions/statuses';

/** new → todo; a user message → in-progress (from todo or needs-review); turn done → needs-review (from in-progress). */
export function statusAfter(status: string, event: StatusEvent): string {
  return autoTransition({ status, manual: false }, event).status;
}

/** `YYMMDD-adjective-noun` (UTC date); callers retry on a collision. */
export function sessionSlug(now: number): string {
  return slug(now, () => randomInt(2 ** 31) / 2 ** 31);
}
