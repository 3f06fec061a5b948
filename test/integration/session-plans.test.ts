/**
 * Plans in explore mode: the agent calls submit_plan (the Anthropic fake scripted to), the turn waits
 * durably (across a worker SIGKILL), the user approves with a mode switch or declines with a note, and
 * the model reads the decision as the call's result. Real dev server, real worker processes.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { startSession } from '@fabric-harness/sdk/client';
import { FabricHarnessPlugin, FileTranscriptStore } from '@fabric-harness/sdk/worker';
import { callTools, say, type RecordedRequest } from '@fabric-harness/sdk/testing';
import { auditTranscript } from '@fabric-harness/sdk/audit';
import { assistant } from '../fixtures/session-agents';
import { testBundle } from '../support/bundle';
import { isTitleRequest } from '../support/session-fake';
import { killableWorkers, killHard } from '../support/worker-process-control';
import { rejection, until } from '../support/waiting';

const sid = (p: string) => `${p}-${process.pid}-${Date.now() % 1_000_000}`;
const PLAN = '# Plan\n\n1. Write `plan.txt` with `done`.\n2. Report back.';

type Block = { type: string; tool_use_id?: string; content?: unknown; is_error?: boolean };
const toolNames = (req: RecordedRequest): string[] => ((req.body.tools ?? []) as Array<{ name: string }>).map((t) => t.name);
/** The tool_result block for `id` in a request's last user message. */
function resultFor(req: RecordedRequest, id: string): Block | undefined {
  const msgs = req.body.messages as Array<{ role: string; content: Block[] | string }>;
  const last = msgs[msgs.length - 1]!;
  return Array.isArray(last.content) ? last.content.find((b) => b.type === 'tool_result' && b.tool_use_id === id) : undefined;
}
const text = (b: Block | undefined): string => (typeof b?.content === 'string' ? b.content : JSON.stringify(b?.content));

describe('plans in explore mode', () => {
  const workers = killableWorkers();
  const turnRequests = () => workers.fake.messageRequests().filter((r) => !isTitleRequest(r));

  async function session(prefix: string, mode: 'explore' | 'execute' = 'explore', historyLimit?: number) {
    const taskQueue = sid(prefix);
    const storeDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-store-'));
    const cwd = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-cwd-'));
    const worker = await workers.start({ taskQueue, fakeUrl: workers.fake.url, storeDir });
    const client = new Client({ connection: workers.t.connection, namespace: workers.t.namespace, plugins: [new FabricHarnessPlugin({ store: new FileTranscriptStore(storeDir) })] });
    const s = await startSession(client, assistant, { id: sid(prefix), taskQueue, settings: { permissionMode: mode, workingDirectory: cwd }, ...(historyLimit ? { historyLimit } : {}) });
    return { s, cwd, worker, taskQueue, storeDir };
  }

  it('a plan waits across a worker kill, is approved with a switch to execute, and the next write runs', async () => {
    const { s, cwd, worker, taskQueue, storeDir } = await session('plan-approve');
    const before = turnRequests().length;
    workers.fake.enqueue(
      callTools({ name: 'submit_plan', input: { plan: PLAN } }),
      callTools({ name: 'write_file', input: { path: 'plan.txt', content: 'done' } }),
      say('done as planned'),
    );
    const reply = s.prompt('make plan.txt');
    const plan = await until('the pending plan', async () => (await s.plans()).find((p) => p.status === 'pending'));
    expect(plan.markdown).toBe(PLAN);
    // Offered in explore mode: the first request of the turn names submit_plan beside the agent's tools.
    expect(toolNames(turnRequests()[before]!)).toEqual(expect.arrayContaining(['submit_plan', 'write_file']));
    // It waits as an approval does: workflow state, no activity holding a worker slot.
    expect((await s.pendingApprovals()).map((a) => a.callId)).toEqual([plan.id]);
    expect((await s.workflow.describe()).raw.pendingActivities ?? []).toHaveLength(0);

    await killHard(worker);
    await workers.start({ taskQueue, fakeUrl: workers.fake.url, storeDir });
    expect((await s.plans()).map((p) => [p.id, p.status])).toEqual([[plan.id, 'pending']]);
    const approved = await s.approvePlan(plan.id, { mode: 'execute' });
    expect(approved).toMatchObject({ id: plan.id, status: 'approved', mode: 'execute' });

    expect(await reply).toBe('done as planned');
    // The write ran in the new mode (explore would have refused it).
    expect(await fs.readFile(path.join(cwd, 'plan.txt'), 'utf8')).toBe('done');
    const reqs = turnRequests().slice(before);
    const planResult = resultFor(reqs[1]!, plan.id);
    expect(planResult?.is_error).toBeUndefined();
    expect(text(planResult)).toContain('The user approved your plan');
    expect(text(planResult)).toContain(PLAN.split('\n')[2]!);
    expect(toolNames(reqs[1]!)).not.toContain('submit_plan');
    expect((await s.info()).settings.permissionMode).toBe('execute');

    // Deciding it again, or an unknown plan: typed errors naming planId; the session goes on.
    const twice = await rejection(s.approvePlan(plan.id));
    expect(twice).toMatchObject({ code: 'ALREADY_DECIDED' });
    expect(twice.message).toMatch(/^planId: /);
    const unknown = await rejection(s.declinePlan('toolu_nope', { note: 'x' }));
    expect(unknown).toMatchObject({ code: 'UNKNOWN_PLAN' });
    expect(unknown.message).toMatch(/^planId: no plan toolu_nope/);
    const badMode = await rejection(s.approvePlan(plan.id, { mode: 'explore' as never }));
    expect(badMode).toMatchObject({ code: 'INVALID_INPUT' });
    expect(badMode.message).toContain('mode');
    workers.fake.enqueue(say('still here'));
    expect(await s.prompt('are you there?')).toBe('still here');
    expect((await s.plans()).map((p) => p.status)).toEqual(['approved']);

    // Recorded in history: the audit shows the decision update with its mode.
    // (the run that has the decision: the session never continued as new here)
    const audit = await auditTranscript(await s.workflow.fetchHistory());
    const updates = audit.json.records.filter((r) => r.type === 'update' && r.name === 'fh.session.plan');
    expect(JSON.stringify(updates[0])).toContain('"mode":"execute"');
    await s.end();
    // …and the history replays: the plan's wait, its decision and the mode switch are deterministic.
    const history = await s.workflow.fetchHistory();
    await expect(Worker.runReplayHistory({ workflowBundle: await testBundle(), plugins: [new FabricHarnessPlugin()], replayName: 'plan-replay' }, history, s.id)).resolves.toBeUndefined();
  });

  it('a plan waiting across a continue-as-new is carried, and approved in the next run with a switch to ask', async () => {
    const { s } = await session('plan-can', 'explore', 20);
    workers.fake.enqueue(callTools({ name: 'submit_plan', input: { plan: PLAN } }), callTools({ name: 'bash', input: { command: 'echo hi' } }), say('asked'));
    const reply = s.prompt('plan then run');
    const plan = await until('the pending plan', async () => (await s.plans()).find((p) => p.status === 'pending'));
    const runBefore = (await s.info()).runId;
    // Queued messages grow the history past the limit while the plan waits: the run continues as new.
    const queued: string[] = [];
    for (let i = 0; i < 8; i++) queued.push((await s.send(`queued ${i}`)).messageId);
    const moved = await until('a continue-as-new while the plan waits', async () => {
      const i = await s.info();
      return i.runId !== runBefore ? i : undefined;
    });
    expect(moved.pendingApprovals.map((a) => a.callId)).toEqual([plan.id]);
    // The same record, carried (a resumed turn asking again would make a new one, submitted now).
    expect((await s.plans()).map((p) => [p.id, p.status, p.markdown, p.submittedAt])).toEqual([[plan.id, 'pending', PLAN, plan.submittedAt]]);
    expect(await s.approvePlan(plan.id, { mode: 'ask' })).toMatchObject({ status: 'approved', mode: 'ask' });
    // In ask mode the bash call waits for its own approval (explore would have refused it outright).
    const bash = await until('the bash approval', async () => (await s.pendingApprovals()).find((a) => a.tool === 'bash'));
    for (let i = 0; i < 8; i++) workers.fake.enqueue(say(`q${i}`));
    await s.approve(bash.callId);
    expect(await reply).toBe('asked');
    // Every queued message answered before the end (the fake's script is shared by this file's tests).
    for (const [i, id] of queued.entries()) expect(await s.reply(id)).toBe(`q${i}`);
    expect((await s.info()).settings.permissionMode).toBe('ask');
    await s.end();
  });

  it('a decline sends the note back to the model and the session stays in explore mode', async () => {
    const { s, cwd } = await session('plan-decline');
    const before = turnRequests().length;
    workers.fake.enqueue(callTools({ name: 'submit_plan', input: { plan: PLAN } }), callTools({ name: 'write_file', input: { path: 'plan.txt', content: 'x' } }), say('understood'));
    const reply = s.prompt('make plan.txt');
    const plan = await until('the pending plan', async () => (await s.plans()).find((p) => p.status === 'pending'));
    await s.declinePlan(plan.id, { note: 'do it on a branch first' });
    expect(await reply).toBe('understood');
    const reqs = turnRequests().slice(before);
    const declined = resultFor(reqs[1]!, plan.id);
    expect(declined?.is_error).toBe(true);
    expect(text(declined)).toContain('The user said: do it on a branch first');
    // Still explore: the write was refused, and submit_plan is still offered.
    expect(toolNames(reqs[2]!)).toContain('submit_plan');
    await expect(fs.access(path.join(cwd, 'plan.txt'))).rejects.toThrow();
    expect((await s.plans())[0]).toMatchObject({ status: 'declined', note: 'do it on a branch first' });
    expect((await s.info()).settings.permissionMode).toBe('explore');
    await s.end();
  });

  it('interrupting the turn a plan waits in declines the plan; deciding it then is ALREADY_DECIDED', async () => {
    const { s } = await session('plan-interrupt');
    workers.fake.enqueue(callTools({ name: 'submit_plan', input: { plan: PLAN } }));
    const reply = s.prompt('plan it');
    const plan = await until('the pending plan', async () => (await s.plans()).find((p) => p.status === 'pending'));
    expect(await s.interrupt()).toMatchObject({ interrupted: true });
    expect(await rejection(reply)).toMatchObject({ code: 'INTERRUPTED' });
    expect((await s.plans())[0]).toMatchObject({ id: plan.id, status: 'declined', note: 'the turn was interrupted' });
    expect(await rejection(s.approvePlan(plan.id, { mode: 'execute' }))).toMatchObject({ code: 'ALREADY_DECIDED' });
    expect((await s.info()).settings.permissionMode).toBe('explore');
    await s.end();
  });

  it('an oversized plan is answered PLAN_TOO_LARGE and kept nowhere; other modes do not offer submit_plan', async () => {
    const { s } = await session('plan-large');
    const before = turnRequests().length;
    workers.fake.enqueue(callTools({ name: 'submit_plan', input: { plan: 'x'.repeat(20_001) } }), say('shortened'));
    expect(await s.prompt('plan it')).toBe('shortened');
    const reqs = turnRequests().slice(before);
    const callId = ((reqs[1]!.body.messages as Array<{ content: Array<{ type: string; id?: string }> }>).at(-2)!.content.find((b) => b.type === 'tool_use')!).id!;
    expect(text(resultFor(reqs[1]!, callId))).toMatch(/^PLAN_TOO_LARGE: plan: 20001 characters/);
    expect(await s.plans()).toEqual([]);
    await s.end();

    const exec = await session('plan-exec', 'execute');
    const first = turnRequests().length;
    workers.fake.enqueue(say('hello'));
    expect(await exec.s.prompt('hi')).toBe('hello');
    expect(toolNames(turnRequests()[first]!)).not.toContain('submit_plan');
    await exec.s.end();
  });
});
