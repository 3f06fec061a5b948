import { describeReset, findResetPoint, type ResetPoint } from '../../src/cli/commands/replay-reset';
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
const json = (value: unknown) => ({ metadata: { encoding: new TextEncoder().encode('json/plain') }, data: new TextEncoder().encode(JSON.stringify(value)) });
/** An activity scheduled: a model call, or a tool call with its tool's name in its input. */
const scheduled = (activity: 'fhModel' | 'fhTool', tool?: string): Event => ({
  type: 'ACTIVITY_TASK_SCHEDULED',
  activityTaskScheduledEventAttributes: { activityType: { name: activity }, activityId: '1', input: { payloads: tool ? [json({ name: tool, input: {} })] : [] } },
});

describe('findResetPoint', () => {
  // Tasks completed at events 4, 8, 13 and 18; a signal at 14; update u1 admitted at 15 and accepted at 19.
  const history = historyOf(
    'WORKFLOW_EXECUTION_STARTED', ...TASK, scheduled('fhModel'), ...TASK, scheduled('fhTool', 'add'), 'ACTIVITY_TASK_COMPLETED',
    ...TASK, 'WORKFLOW_EXECUTION_SIGNALED', admitted('u1'), ...TASK, accepted('u1'), scheduled('fhModel'),
  );
  const ids = (h: History) => (h.events ?? []).map((e) => Number(e.eventId));

  it('takes the newest task completed before the divergence whose kept history (the events before it) replays', async () => {
    const tried: number[] = [];
    // The code replays no history that holds event 9 (the second activity): the tasks up to event 8 are kept.
    const point = await findResetPoint(history, 21, async (prefix) => (tried.push(ids(prefix).at(-1)!), !ids(prefix).includes(9)));
    expect(point).toEqual({ eventId: 8, reapplied: 2, discarded: 12, again: { modelCalls: 1, toolCalls: ['add'] } });
    // Each try keeps the events before a task completed (its started event last), halving the four candidates.
    expect(tried).toEqual([7, 12]);
  });

  it('counts the signals and updates after the point once each (applied again), the events dropped, and the model and tool calls among them', async () => {
    expect(await findResetPoint(history, 21, async () => true)).toEqual({ eventId: 18, reapplied: 1, discarded: 2, again: { modelCalls: 1, toolCalls: [] } });
    expect(await findResetPoint(history, 18, async () => true)).toEqual({ eventId: 13, reapplied: 2, discarded: 7, again: { modelCalls: 1, toolCalls: [] } });
    expect(await findResetPoint(history, 8, async () => true)).toEqual({ eventId: 4, reapplied: 2, discarded: 16, again: { modelCalls: 2, toolCalls: ['add'] } });
  });

  it('is undefined when no kept history replays, or no task completed before the divergence', async () => {
    expect(await findResetPoint(history, 21, async () => false)).toBeUndefined();
    expect(await findResetPoint(history, 4, async () => true)).toBeUndefined();
  });
});

describe('describeReset', () => {
  const point: ResetPoint = { eventId: 8, reapplied: 1, discarded: 12, again: { modelCalls: 2, toolCalls: ['add', 'add', 'deploy'] } };

  it('says where the run was reset, what is applied again, and which model and tool calls run again', () => {
    expect(describeReset('s1', point, 'r2')).toBe(
      'reset s1: new run r2 keeps the history before the workflow task completed at event 8 (the latest the current code replays) and runs the current code from there; ' +
        '1 signal or update sent after it is applied again; 12 later events of the old run are dropped, among them 2 model calls and 3 tool calls (add, deploy), which run again',
    );
  });

  it('--dry-run: the same, as what a reset would do, and that nothing changed', () => {
    expect(describeReset('s1', { ...point, reapplied: 0, discarded: 1, again: { modelCalls: 0, toolCalls: [] } })).toBe(
      'would reset s1 (--dry-run: nothing changed): a new run would keep the history before the workflow task completed at event 8 (the latest the current code replays) and run the current code from there; ' +
        '0 signals and updates sent after it would be applied again; 1 later event of the old run would be dropped, not a model or tool call',
    );
  });
});
