/**
 * A session history recorded under a CI load average of 16 (the first 33 events of one run of the
 * three-clients test in sessions-continuity): a workflow task timed out while reply updates waited, and
 * its retry recorded the activity its first activation scheduled (event 16) before the updates the next
 * one accepted (17 on). A replay accepts a task's updates first, so no replay reproduces that history.
 * This pins down what we say about it: the replay's explanation names the order, a plain Temporal
 * workflow of the same shape fails on it the same way (the order is Temporal's, not our workflow code's),
 * and `fh replay --reset` would reset the run to that task, whose kept history replays.
 */
import * as path from 'node:path';
import { Worker } from '@temporalio/worker';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { replayHistory } from '@fabric-harness/sdk/audit';
import { bundleAgents } from '@fabric-harness/sdk/worker';
import { parseHistoryJSON, type History } from '../../src/audit/history-file';
import { findResetPoint } from '../../src/cli/commands/replay-reset';
import sessionJson from '../fixtures/recorded-order-session.json';

/** The history decoded, as `fh replay` reads one. */
const sessionHistory = parseHistoryJSON(sessionJson);

const AGENTS = [path.resolve(__dirname, '../fixtures/session-agents.ts')];
const PLAIN = require.resolve('../fixtures/recorded-order-plain.js');

type JsonEvent = Record<string, any> & { eventId: string };

/** The session history with the plain workflow's names: the same events, the same order. */
function asPlainHistory(swap16and17 = false): unknown {
  const json = (v: unknown) => ({ metadata: { encoding: Buffer.from('json/plain').toString('base64') }, data: Buffer.from(JSON.stringify(v)).toString('base64') });
  const events = (JSON.parse(JSON.stringify(sessionJson)) as { events: JsonEvent[] }).events.slice(0, 17);
  for (const e of events) {
    const started = e.workflowExecutionStartedEventAttributes;
    if (started) Object.assign(started, { workflowType: { name: 'plainSession' }, input: { payloads: [] } });
    const scheduled = e.activityTaskScheduledEventAttributes;
    if (scheduled) (scheduled.activityType = { name: scheduled.activityId === '1' ? 'first' : 'second' }), (scheduled.input = { payloads: [] }), delete e.userMetadata;
    const completed = e.activityTaskCompletedEventAttributes;
    if (completed) completed.result = { payloads: [json(null)] };
    const accepted = e.workflowExecutionUpdateAcceptedEventAttributes;
    if (accepted) {
      const input = accepted.acceptedRequest.input;
      Object.assign(input, { name: input.name === 'fh.session.send' ? 'send' : 'reply', args: { payloads: [json('m')] } });
    }
    const updated = e.workflowExecutionUpdateCompletedEventAttributes;
    if (updated) updated.outcome = { success: { payloads: [json(null)] } };
  }
  if (swap16and17) [events[15], events[16]] = [{ ...events[16]!, eventId: '16' }, { ...events[15]!, eventId: '17' }];
  return { events };
}

describe('a history Temporal recorded in an order no replay makes', () => {
  it('the replay names the order, not a code change', async () => {
    const r = await replayHistory(sessionHistory, { agents: AGENTS, workflowId: 'three-clients' });
    expect(r).toMatchObject({ ok: false, kind: 'nondeterminism', eventId: 16, recorded: { kind: 'activity', name: 'fhLoadTranscript' } });
    expect(r.ok || r.explanation).toMatch(
      /^The recorded run and the code issue the same commands in one workflow task, in another order: the recorded run has an activity \(activity fhLoadTranscript\) at event 16 and accepts an update after it \(event 17\), where a replay accepts the task's updates first\..*fh replay <id> --agents <module> --reset/,
    );
  });

  it('a plain Temporal workflow of the same shape fails on it the same way, and replays it in the order a replay makes', async () => {
    const replay = (history: unknown) => Worker.runReplayHistory({ workflowsPath: PLAIN }, historyFromJSON(history), 'plain-session');
    await expect(replay(asPlainHistory())).rejects.toThrow(/Update machine does not handle this event: HistoryEvent\(id: 16, ActivityTaskScheduled\)/);
    await expect(replay(asPlainHistory(true))).resolves.toBeUndefined();
  });

  it('fh replay --reset would reset the run to that workflow task: the history before it replays', async () => {
    const workflowBundle = await bundleAgents(AGENTS);
    const replays = async (prefix: History) => (await replayHistory(prefix, { agents: AGENTS, workflowBundle, workflowId: 'three-clients' })).ok;
    // The task completed at event 15 ran again; the ten updates accepted after it (to event 33) applied again.
    // No model or tool call among the events dropped (the run had only loaded its transcript by then).
    expect(await findResetPoint(sessionHistory, 16, replays)).toEqual({ eventId: 15, reapplied: 10, discarded: 18, again: { modelCalls: 0, toolCalls: [] } });
  });
});
