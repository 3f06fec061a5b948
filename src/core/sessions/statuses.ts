/**
 * Session statuses and their automatic transitions:
 *   new → todo; a user message → in-progress (from todo or needs-review); a finished turn →
 *   needs-review (from in-progress). A status set by hand stops automatic transitions, and the closed
 *   statuses (done, cancelled) never reopen on activity.
 */
import { InvalidInputError } from '../errors';
import { InvalidStatusError, describeValue } from './errors';

export const DEFAULT_STATUSES = ['todo', 'in-progress', 'needs-review', 'done', 'cancelled'] as const;
export type DefaultStatus = (typeof DEFAULT_STATUSES)[number];
export const CLOSED_STATUSES: readonly string[] = ['done', 'cancelled'];
export const STATUS_NAME_PATTERN = /^[a-z0-9][a-z0-9-]{0,39}$/;

/**
 * The statuses a session may have: the defaults, then the agent's custom ones. A custom name must match
 * STATUS_NAME_PATTERN and appear once (defaults included); else INVALID_INPUT naming `statuses[i]`.
 */
export function resolveStatuses(custom?: readonly string[]): string[] {
  const all: string[] = [...DEFAULT_STATUSES];
  if (custom === undefined) return all;
  if (!Array.isArray(custom)) {
    throw new InvalidInputError('statuses', 'statuses', [{ path: 'statuses', message: `expected an array of status names, got ${describeValue(custom)}` }]);
  }
  custom.forEach((name: unknown, i) => {
    const field = `statuses[${i}]`;
    let message: string | undefined;
    if (typeof name !== 'string') message = `expected a status name (a string), got ${describeValue(name)}`;
    else if (!STATUS_NAME_PATTERN.test(name)) message = `'${name}' must be 1-40 characters of a-z, 0-9 and '-', starting with a letter or digit`;
    else if (all.includes(name)) message = `'${name}' is listed twice (${DEFAULT_STATUSES.includes(name as DefaultStatus) ? 'it is a default status' : 'a duplicate'})`;
    if (message) throw new InvalidInputError('statuses', field, [{ path: field, message }]);
    all.push(name as string);
  });
  return all;
}

export interface StatusState {
  status: string;
  /** Set by hand: automatic transitions leave the session alone from then on. */
  manual: boolean;
}

export type StatusEvent = 'user-message' | 'turn-done';

export function initialStatus(): StatusState {
  return { status: 'todo', manual: false };
}

export function isClosedStatus(status: string): boolean {
  return CLOSED_STATUSES.includes(status);
}

const AUTO_TRANSITIONS: Record<StatusEvent, { from: readonly string[]; to: string }> = {
  'user-message': { from: ['todo', 'needs-review'], to: 'in-progress' },
  'turn-done': { from: ['in-progress'], to: 'needs-review' },
};

/**
 * The status after an event. Returns `state` itself when nothing changes (a manual or closed status, a
 * custom status, or an event that does not apply), so `next !== state` says whether to record a change.
 */
export function autoTransition(state: StatusState, event: StatusEvent): StatusState {
  if (state.manual || isClosedStatus(state.status)) return state;
  const rule = AUTO_TRANSITIONS[event];
  if (!rule || !rule.from.includes(state.status)) return state;
  return { status: rule.to, manual: false };
}

/**
 * A status set by hand (any known status, closed ones included, and reopening a closed one): marks the
 * state manual. An unknown status throws INVALID_STATUS listing the known ones. The previous state does
 * not matter (a person may move a session anywhere); it is a parameter so call sites read as a step.
 */
export function setStatus(state: StatusState, status: unknown, known: readonly string[]): StatusState {
  if (typeof status !== 'string' || !known.includes(status)) throw new InvalidStatusError(status, known);
  return { status, manual: true };
}
