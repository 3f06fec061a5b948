import { findResetPoint } from '../../src/cli/commands/replay-reset';
import { temporal } from '@temporalio/proto';
import type { History } from '../../src/audit/history-file';

type Event = string | { type: string; [attributes: string]: unknown };
/** A decoded history of these events (names without EVENT_TYPE_, or with attributes), numbered from 1. */
const historyOf = (...events: Event[]): History =>
  ({
    events: events.map((e, i) => {
      const { type, ...attributes } = typeof e === 'string' ? { type: e } : e;
      const eventType = temporal.api.enums.v1.EventType[`EVENT_TYPE_${type}` as keyof typeof temporal.api.enums.v1.EventType];
      if (eventType === undefined) throw new Error(`no event type ${type}`);
      return { eventId: i + 1, eventType, ...attributes };
    }),
  }) as unknown as History;
const TASK = ['WORKFLOW_TASK_SCHEDULED', 'WORKFLOW_TASK_STARTED', 'WORKFLOW_TASK_COMPLETED'];
const admitted = (updateId: string): Event => ({ type: 'WORKFLOW_EXECUTION_UPDATE_ADMITTED', workflowExecutionUpdateAdmittedEventAttributes: { request: { meta: { updateId } } } });
const accepted = (updateId: string): Event => ({ type: 'WORKFLOW_EXECUTION_UPDATE_ACCEPTED', workflowExecutionUpdateAcceptedEventAttributes: { protocolInstanceId: updateId } });

describe('findResetPoint', () => {
  // Tasks completed at events 4, 8, 13 and 18; a signal at 14; update u1 admitted at 15 and accepted at 19.
  const history = historyOf(
    'WORKFLOW_EXECUTION_STARTED', ...TASK, 'ACTIVITY_TASK_SCHEDULED', ...TASK, 'ACTIVITY_TASK_SCHEDULED', 'ACTIVITY_TASK_COMPLETED',
    ...TASK, 'WORKFLOW_EXECUTION_SIGNALED', admitted('u1'), ...TASK, accepted('u1'), 'ACTIVITY_TASK_SCHEDULED',
  );
  const ids = (h: History) => (h.events ?? []).map((e) => Number(e.eventId));

  it('takes the newest task completed before the divergence whose kept history (the events before it) replays', async () => {
    const tried: number[] = [];
    // The code replays no history that holds event 9 (the second activity): the tasks up to event 8 are kept.
    const point = await findResetPoint(history, 21, async (prefix) => (tried.push(ids(prefix).at(-1)!), !ids(prefix).includes(9)));
    expect(point).toEqual({ eventId: 8, reapplied: 2, discarded: 12 });
    // Each try keeps the events before a task completed (its started event last), halving the four candidates.
    expect(tried).toEqual([7, 12]);
  });

  it('counts the signals and updates after the point once each (applied again) and the events dropped', async () => {
    expect(await findResetPoint(history, 21, async () => true)).toEqual({ eventId: 18, reapplied: 1, discarded: 2 });
    expect(await findResetPoint(history, 18, async () => true)).toEqual({ eventId: 13, reapplied: 2, discarded: 7 });
  });

  it('is undefined when no kept history replays, or no task completed before the divergence', async () => {
    expect(await findResetPoint(history, 21, async () => false)).toBeUndefined();
    expect(await findResetPoint(history, 4, async () => true)).toBeUndefined();
  });
});
