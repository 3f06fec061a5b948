/**
 * The pure parts of audit replay: reading history files, and explaining a replay failure in words
 * (the replays themselves run in test/integration/cli.test.ts).
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { historyToJSONString, HistoryFormatError, parseHistoryJSON, type History } from '../../src/audit/history-file';
import { describeCommand, explainReplayFailure, recordedCommands } from '../../src/audit/replay-explain';
import { UnknownAgentError } from '../../src/core/errors';

// Histories recorded by release 0.1.0 (the figures below are theirs).
const HISTORIES = path.resolve(__dirname, '../histories/0.1.0');

async function calculator(): Promise<History> {
  return parseHistoryJSON(await fs.readFile(path.join(HISTORIES, 'calculator-tools.json'), 'utf8'));
}

/** The message Worker.runReplayHistory's DeterminismViolationError carries for this core error. */
function determinismError(coreMessage: string): Error {
  const err = new Error(
    'Replay failed with a nondeterminism error. This means that the workflow code as written is not compatible with the history that was fed in. ' +
      `Details: Workflow activation completion failed: Failure { failure: Some(Failure { message: "[TMPRL1100] Nondeterminism error: ${coreMessage}", source: "", stack_trace: "" }) }`,
  );
  err.name = 'DeterminismViolationError';
  return err;
}

describe('history files', () => {
  it('round-trips through Temporal proto-JSON', async () => {
    const h = await calculator();
    const again = parseHistoryJSON(historyToJSONString(h));
    expect(again.events).toHaveLength(h.events!.length);
    expect(JSON.parse(historyToJSONString(again))).toEqual(JSON.parse(historyToJSONString(h)));
  });

  it('accepts the gRPC response shape ({ history: { events } }) and the old enum spellings', async () => {
    const raw = JSON.parse(await fs.readFile(path.join(HISTORIES, 'calculator-tools.json'), 'utf8'));
    expect(parseHistoryJSON({ history: raw }).events).toHaveLength(raw.events.length);
    const old = { events: raw.events.map((e: any) => ({ ...e, eventType: e.eventType.replace(/^EVENT_TYPE_/, '').toLowerCase().replace(/(^|_)(\w)/g, (_: string, __: string, c: string) => c.toUpperCase()) })) };
    expect(old.events[0].eventType).toBe('WorkflowExecutionStarted');
    expect(parseHistoryJSON(old).events).toHaveLength(raw.events.length);
  });

  it.each([
    ['not JSON', '{"events": [', /^f\.json is not JSON \(/],
    ['no events array', '{"foo": 1}', /^f\.json is not a workflow history: expected a JSON object with an "events" array$/],
    ['no events', '{"events": []}', /^f\.json is not a workflow history: it has no events$/],
    ['an event without attributes', '{"events": [{"eventId": "1"}]}', /^f\.json is not a valid workflow history: Missing attributes/],
    [
      'a history that does not start with WorkflowExecutionStarted',
      '{"events": [{"eventId": "1", "eventType": "EVENT_TYPE_TIMER_FIRED", "timerFiredEventAttributes": {"timerId": "1"}}]}',
      /first event is not WorkflowExecutionStarted/,
    ],
  ])('rejects %s with a one-line HistoryFormatError', (_what, text, message) => {
    let err: unknown;
    try {
      parseHistoryJSON(text, 'f.json');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(HistoryFormatError);
    expect((err as Error).message).toMatch(message);
    expect((err as Error).message).not.toContain('\n');
  });
});

describe('recorded commands', () => {
  it('lists the commands history recorded, with activity ids as sequence numbers', async () => {
    const cmds = recordedCommands(await calculator());
    expect(cmds.map((c) => [c.kind, c.name, c.detail])).toEqual([
      ['activity', 'fhResolveModel', undefined],
      ['activity', 'fhModel', undefined],
      ['activity', 'fhTool', 'add'],
      ['activity', 'fhModel', undefined],
      ['activity', 'fhTool', 'write_file'],
      ['activity', 'fhModel', undefined],
      ['complete', undefined, undefined],
    ]);
    expect(cmds.filter((c) => c.kind === 'activity').map((c) => c.seq)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('describes commands in plain words', () => {
    expect(describeCommand({ kind: 'activity', name: 'fhModel' })).toBe('a model call (activity fhModel)');
    expect(describeCommand({ kind: 'activity', name: 'fhTool', detail: 'add' })).toBe("a tool call 'add' (activity fhTool)");
    expect(describeCommand({ kind: 'local_activity', name: 'fhDecideCompaction' })).toBe('a compaction decision (local activity fhDecideCompaction)');
    expect(describeCommand({ kind: 'timer', seq: 1, detail: '1 ms' })).toBe('a timer (1 ms)');
    expect(describeCommand({ kind: 'activity', name: 'sendEmail' })).toBe('an activity (activity sendEmail)');
  });
});

describe('explaining a replay failure', () => {
  it('names the event and both sides from the command trace', async () => {
    const h = await calculator();
    const modelEvent = recordedCommands(h).find((c) => c.name === 'fhModel')!.eventId;
    const trace = [
      { kind: 'activity' as const, seq: 1, name: 'fhResolveModel' },
      { kind: 'local_activity' as const, seq: 2, name: 'fhDecideCompaction' },
    ];
    const r = explainReplayFailure(determinismError(`No command scheduled for event HistoryEvent(id: ${modelEvent}, ActivityTaskScheduled)`), h, trace);
    expect(r).toMatchObject({
      kind: 'nondeterminism',
      eventId: modelEvent,
      recorded: { kind: 'activity', seq: 2, name: 'fhModel' },
      current: { kind: 'local_activity', seq: 2, name: 'fhDecideCompaction' },
      error: `[TMPRL1100] Nondeterminism error: No command scheduled for event HistoryEvent(id: ${modelEvent}, ActivityTaskScheduled)`,
    });
    expect(r.explanation).toMatch(
      new RegExp(`^The workflow code now issues a different command at event ${modelEvent} than the recorded run did: recorded a model call \\(activity fhModel\\), code now a compaction decision \\(local activity fhDecideCompaction\\)\\. `),
    );
  });

  it('a timer added before everything: recorded the model lookup, code now a timer', async () => {
    const h = await calculator();
    const first = recordedCommands(h)[0]!;
    const r = explainReplayFailure(determinismError(`No command scheduled for event HistoryEvent(id: ${first.eventId}, ActivityTaskScheduled)`), h, [
      { kind: 'timer', seq: 1, detail: '1 ms' },
    ]);
    expect(r.eventId).toBe(first.eventId);
    expect(r.explanation).toContain('recorded a model lookup (activity fhResolveModel), code now a timer (1 ms)');
  });

  it('an update accepted later in the same task than the recorded command: names the order (not a code change) and the repair', async () => {
    const h = await calculator();
    const first = recordedCommands(h)[0]!;
    const index = h.events!.findIndex((e) => Number(e.eventId) === first.eventId);
    const accepted = { eventId: first.eventId + 1, eventType: 'EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED', workflowExecutionUpdateAcceptedEventAttributes: { protocolInstanceId: 'u1' } };
    const renumbered = h.events!.slice(index + 1).map((e) => ({ ...e, eventId: Number(e.eventId) + 1 }));
    const withUpdate = { events: [...h.events!.slice(0, index + 1), accepted, ...renumbered] } as unknown as History;
    const error = determinismError(`Update machine does not handle this event: HistoryEvent(id: ${first.eventId}, ActivityTaskScheduled)`);
    const r = explainReplayFailure(error, withUpdate, []);
    expect(r).toMatchObject({ kind: 'nondeterminism', eventId: first.eventId, recorded: { kind: 'activity', name: 'fhResolveModel' } });
    expect(r.explanation).toMatch(new RegExp(`^The recorded run and the code issue the same commands in one workflow task, in another order: the recorded run has a model lookup \\(activity fhResolveModel\\) at event ${first.eventId} and accepts an update after it \\(event ${first.eventId + 1}\\)`));
    // Without an update accepted later in that task, the same SDK words are a code change.
    expect(explainReplayFailure(error, h, []).explanation).toMatch(/^The workflow code now issues a different command/);
  });

  it('without a trace, uses what the SDK says', async () => {
    const h = await calculator();
    const r = explainReplayFailure(determinismError("Activity type of scheduled event 'fhModel' does not match activity type of activity command 'fhTool'"), h);
    expect(r.recorded).toMatchObject({ kind: 'activity', name: 'fhModel' });
    expect(r.current).toEqual({ kind: 'activity', name: 'fhTool' });
    expect(r.explanation).toContain('recorded a model call (activity fhModel), code now a tool call (activity fhTool)');
  });

  it('an agents module without the run\'s agent: says so, not "a different command"', async () => {
    const h = await calculator();
    const first = recordedCommands(h)[0]!;
    const r = explainReplayFailure(determinismError(`No command scheduled for event HistoryEvent(id: ${first.eventId}, ActivityTaskScheduled)`), h, [
      { kind: 'fail', detail: "Unknown agent 'calculator'. Registered agents: other." },
    ]);
    expect(r.kind).toBe('unknown_agent');
    expect(r.explanation).toBe("The current code does not define this run's agent 'calculator' (it defines other). Replay against the module that defines it (--agents / options.agents).");
  });

  it("an agents module without the run's agent, as a worker's first task fails: the agent and the module's agents, not the worker's advice or a stack", async () => {
    const thrown = new UnknownAgentError('calculator', ['echo', 'planner'], 'fh-agents');
    const err = new Error(`Replay failed due workflow task failure. Details: Workflow activation completion failed: Failure { failure: Some(Failure { message: "${thrown.message}", stack_trace: "UnknownAgentError: ${thrown.message}\n at agent-workflow.ts:100:0" }) }`);
    err.name = 'ReplayError';
    const r = explainReplayFailure(err, await calculator());
    expect(r).toEqual({
      kind: 'unknown_agent',
      error: "Unknown agent 'calculator'",
      explanation: "The current code does not define this run's agent 'calculator' (it defines echo, planner). Replay against the module that defines it (--agents / options.agents).",
    });
  });

  it('a workflow task failure is not a divergence: it says the code failed', async () => {
    const err = new Error('Replay failed due workflow task failure. Details: TypeError: boom\n    at run (agents.js:3:9)');
    err.name = 'ReplayError';
    const r = explainReplayFailure(err, await calculator());
    expect(r.kind).toBe('workflow_task_failure');
    expect(r.explanation).toMatch(/^The workflow code failed while replaying the recorded run: TypeError: boom\. A worker running this code would fail/);
    expect(r.eventId).toBeUndefined();
  });
});
