/** Session statuses: the configured list, the automatic transitions, and statuses set by hand. */
import { InvalidInputError } from '../../src/core/errors';
import {
  CLOSED_STATUSES,
  DEFAULT_STATUSES,
  InvalidStatusError,
  autoTransition,
  initialStatus,
  isClosedStatus,
  resolveStatuses,
  setStatus,
  type StatusEvent,
  type StatusState,
} from '../../src/core/sessions';

const DEFAULTS = ['todo', 'in-progress', 'needs-review', 'done', 'cancelled'];

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
}

describe('resolveStatuses', () => {
  it('is the defaults, then the custom statuses in order', () => {
    expect([...DEFAULT_STATUSES]).toEqual(DEFAULTS);
    expect(CLOSED_STATUSES).toEqual(['done', 'cancelled']);
    expect(resolveStatuses()).toEqual(DEFAULTS);
    expect(resolveStatuses([])).toEqual(DEFAULTS);
    expect(resolveStatuses(['blocked', 'waiting-on-ci', '2nd-pass'])).toEqual([...DEFAULTS, 'blocked', 'waiting-on-ci', '2nd-pass']);
    expect(resolveStatuses(['x'.repeat(40)])).toHaveLength(6);
  });

  it('returns a new array each time (the defaults cannot be changed through it)', () => {
    resolveStatuses().push('mutated');
    expect(resolveStatuses()).toEqual(DEFAULTS);
  });

  it.each([
    [['Blocked'], 'statuses[0]'],
    [['ok', 'todo'], 'statuses[1]'],
    [['x', 'y', 'x'], 'statuses[2]'],
    [['-x'], 'statuses[0]'],
    [['has space'], 'statuses[0]'],
    [['under_score'], 'statuses[0]'],
    [['x'.repeat(41)], 'statuses[0]'],
    [[''], 'statuses[0]'],
    [['ok', 42], 'statuses[1]'],
    ['blocked', 'statuses'],
  ])('refuses %j with INVALID_INPUT naming %s', (custom, field) => {
    const error = thrown(() => resolveStatuses(custom as string[]));
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error).toMatchObject({ code: 'INVALID_INPUT', field });
  });
});

describe('automatic transitions', () => {
  it('a new session is todo, not manual (a fresh object each time)', () => {
    expect(initialStatus()).toEqual({ status: 'todo', manual: false });
    expect(initialStatus()).not.toBe(initialStatus());
  });

  // Every status × event for automatic (not manual) states. Anything not listed here stays put.
  const moves: Record<string, Partial<Record<StatusEvent, string>>> = {
    todo: { 'user-message': 'in-progress' },
    'in-progress': { 'turn-done': 'needs-review' },
    'needs-review': { 'user-message': 'in-progress' },
    done: {},
    cancelled: {},
    blocked: {}, // a custom status has no automatic rules
  };
  const events: StatusEvent[] = ['user-message', 'turn-done'];
  const cases = Object.keys(moves).flatMap((status) => events.map((event) => [status, event] as const));

  it.each(cases)('%s + %s (automatic)', (status, event) => {
    const state: StatusState = { status, manual: false };
    const next = autoTransition(state, event);
    const to = moves[status]![event];
    if (to) {
      expect(next).toEqual({ status: to, manual: false });
    } else {
      expect(next).toBe(state); // unchanged: the same object, so callers can skip recording it
    }
    expect(state).toEqual({ status, manual: false }); // never mutated
  });

  it.each(cases)('%s + %s (set by hand): unchanged', (status, event) => {
    const state: StatusState = { status, manual: true };
    expect(autoTransition(state, event)).toBe(state);
  });

  it('follows a conversation: todo → in-progress → needs-review → in-progress → needs-review', () => {
    const seen: string[] = [];
    let state = initialStatus();
    for (const event of ['user-message', 'user-message', 'turn-done', 'turn-done', 'user-message', 'turn-done'] as StatusEvent[]) {
      state = autoTransition(state, event);
      seen.push(state.status);
    }
    expect(seen).toEqual(['in-progress', 'in-progress', 'needs-review', 'needs-review', 'in-progress', 'needs-review']);
  });
});

describe('setStatus', () => {
  const known = resolveStatuses(['blocked']);

  it('sets any known status by hand, which stops automatic transitions', () => {
    const state = setStatus(initialStatus(), 'needs-review', known);
    expect(state).toEqual({ status: 'needs-review', manual: true });
    expect(autoTransition(state, 'user-message')).toBe(state);
    expect(setStatus(state, 'blocked', known)).toEqual({ status: 'blocked', manual: true });
  });

  it('closes and reopens by hand (only activity cannot reopen)', () => {
    const done = setStatus(initialStatus(), 'done', known);
    expect(autoTransition({ ...done, manual: false }, 'user-message').status).toBe('done');
    expect(setStatus(done, 'todo', known)).toEqual({ status: 'todo', manual: true });
  });

  it.each([['unknown'], ['TODO'], [''], [42], [null], [undefined]])('refuses %j with INVALID_STATUS listing the known statuses', (status) => {
    const error = thrown(() => setStatus(initialStatus(), status, known));
    expect(error).toBeInstanceOf(InvalidStatusError);
    expect(error).toMatchObject({ code: 'INVALID_STATUS', field: 'status', known });
    expect((error as Error).message).toContain('todo, in-progress, needs-review, done, cancelled, blocked');
  });

  it('refuses a custom status the session was not configured with', () => {
    expect(() => setStatus(initialStatus(), 'blocked', resolveStatuses())).toThrow(InvalidStatusError);
  });
});

describe('isClosedStatus', () => {
  it('is true for done and cancelled only', () => {
    expect(DEFAULTS.filter(isClosedStatus)).toEqual(['done', 'cancelled']);
    expect(isClosedStatus('blocked')).toBe(false);
  });
});
