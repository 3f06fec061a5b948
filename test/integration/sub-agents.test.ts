/**
 * Sub-agents as child workflows on the real dev server: the child has its own history, the parent's
 * model reads its result, its events are nested in the parent's, cancelling the parent cancels it,
 * a worktree per sub-agent (the result names the branch; the worktree is gone after), and the depth cap.
 */
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { auditTranscript, startAgent, startSession } from '@fabric-harness/sdk/client';
import { callTools, FakeAnthropicServer, say, type RecordedRequest } from '@fabric-harness/sdk/testing';
import type { AgentEvent } from '@fabric-harness/sdk';
import { delegatingSession, delegator, recursive, worktreeDelegator } from '../fixtures/ecosystem-agents';
import { startTestWorker, type TestWorker } from '../support/test-worker';

type Block = { type: string; content?: unknown; is_error?: boolean };
const lastToolResult = (req: RecordedRequest): { content: string; isError: boolean } => {
  const last = (req.body.messages as Array<{ content: Block[] | string }>).at(-1)!;
  const b = (Array.isArray(last.content) ? last.content : []).find((x) => x.type === 'tool_result')!;
  return { content: String(b.content), isError: b.is_error === true };
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('sub-agents as child workflows', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;
  let dir: string;

  beforeAll(async () => {
    fake = await FakeAnthropicServer.start();
    w = await startTestWorker({ name: 'sub-agents', baseURL: fake.url });
  });
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-sub-'));
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  it('runs the sub-agent as a child workflow with its own history; its result and events reach the parent', async () => {
    fake.enqueue(
      callTools({ name: 'eco-helper', input: { task: 'say what 6 times 7 is' } }), // the parent hands over
      say('42'), // the child
      say('The helper says 42.'), // the parent
    );
    const start = fake.messageRequests().length;
    const handle = await startAgent(w.client, delegator, { task: 'ask the helper', dir }, { workflowId: `sub-${Date.now()}`, taskQueue: w.taskQueue });
    expect(await handle.result()).toBe('The helper says 42.');
    const requests = fake.messageRequests().slice(start);
    // The child's model call saw only its task; the parent's next call read the child's answer.
    expect(requests[1]!.body.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'say what 6 times 7 is' }] }]);
    expect(lastToolResult(requests[2]!)).toEqual({ content: '42', isError: false });

    const history = await handle.fetchHistory();
    const started = history.events!.filter((e) => e.startChildWorkflowExecutionInitiatedEventAttributes);
    expect(started).toHaveLength(1);
    const childId = started[0]!.startChildWorkflowExecutionInitiatedEventAttributes!.workflowId!;
    expect((await w.client.workflow.getHandle(childId).describe()).raw.workflowExecutionInfo?.parentExecution?.workflowId).toBe(handle.workflowId);
    // Its own history, with its own model call.
    const childHistory = await w.client.workflow.getHandle(childId).fetchHistory();
    expect(childHistory.events!.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'fhModel')).toHaveLength(1);
    expect(history.events!.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'fhModel')).toHaveLength(2);

    // Nested in the parent's events under the child's id.
    const events = (await handle.events()) as AgentEvent[];
    const types = events.map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(['subagent_started', 'subagent_event', 'subagent_finished']));
    const nested = events.filter((e): e is Extract<AgentEvent, { type: 'subagent_event' }> => e.type === 'subagent_event');
    expect(nested.every((e) => e.data.childId === childId)).toBe(true);
    expect(nested.map((e) => e.data.event.type)).toContain('model_call');
    expect(events.find((e) => e.type === 'subagent_finished')!.data).toMatchObject({ childId, agent: 'eco-helper', ok: true });

    // And in the parent's audit: one sub_agent record with the child's events nested.
    const audit = await auditTranscript(history);
    const sub = audit.json.records.filter((r) => r.type === 'sub_agent');
    expect(sub).toHaveLength(1);
    expect(sub[0]).toMatchObject({ childId, agent: 'eco-helper', status: 'completed', result: '42', input: { task: 'say what 6 times 7 is' }, depth: 1 });
    expect((sub[0] as { events: AgentEvent[] }).events.map((e) => e.type)).toContain('model_call');
    expect(audit.markdown).toContain('Sub-agent eco-helper');
  });

  it('cancelling the parent cancels the child', async () => {
    fake.enqueue(callTools({ name: 'wait_for_it', input: { task: 'wait' } }));
    const handle = await startAgent(w.client, delegator, { task: 'wait', dir }, { workflowId: `sub-cancel-${Date.now()}`, taskQueue: w.taskQueue });
    let childId: string | undefined;
    for (let i = 0; !childId && i < 200; i++) {
      await sleep(100);
      const h = await handle.fetchHistory();
      childId = h.events!.find((e) => e.childWorkflowExecutionStartedEventAttributes)?.childWorkflowExecutionStartedEventAttributes?.workflowExecution?.workflowId ?? undefined;
    }
    expect(childId).toBeDefined();
    const child = w.client.workflow.getHandle(childId!);
    expect((await child.describe()).status.name).toBe('RUNNING');
    const parent = w.client.workflow.getHandle(handle.workflowId);
    await parent.cancel();
    await expect(handle.result()).rejects.toThrow();
    let status = '';
    for (let i = 0; i < 100 && status !== 'CANCELLED'; i++) {
      status = (await child.describe()).status.name;
      if (status !== 'CANCELLED') await sleep(100);
    }
    expect(status).toBe('CANCELLED');
    expect((await parent.describe()).status.name).toBe('CANCELLED');
  });

  it("interrupting a session's turn cancels its sub-agent; the session goes on", async () => {
    fake.enqueue(callTools({ name: 'wait_for_it', input: { task: 'wait' } }));
    const session = await startSession(w.client, delegatingSession, { taskQueue: w.taskQueue, title: 'Delegating' });
    const { messageId } = await session.send('hand it over');
    let childId: string | undefined;
    for (let i = 0; !childId && i < 200; i++) {
      await sleep(100);
      const h = await session.workflow.fetchHistory();
      childId = h.events!.find((e) => e.childWorkflowExecutionStartedEventAttributes)?.childWorkflowExecutionStartedEventAttributes?.workflowExecution?.workflowId ?? undefined;
    }
    expect(childId).toBeDefined();
    const child = w.client.workflow.getHandle(childId!);
    expect((await child.describe()).status.name).toBe('RUNNING');
    expect(await session.interrupt()).toMatchObject({ interrupted: true, messageId });
    await expect(session.reply(messageId)).rejects.toMatchObject({ code: 'INTERRUPTED' });
    let status = '';
    for (let i = 0; i < 100 && status !== 'CANCELLED'; i++) {
      status = (await child.describe()).status.name;
      if (status !== 'CANCELLED') await sleep(100);
    }
    expect(status).toBe('CANCELLED');
    fake.enqueue(say('still here'));
    expect(await session.prompt('are you there?')).toBe('still here');
    await session.end();
  });

  it('a worktree per sub-agent: its changes land on its branch, the parent directory is untouched, the worktree is removed', async () => {
    const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: dir, encoding: 'utf8' }).trim();
    git('init', '-q', '-b', 'main');
    await fs.writeFile(path.join(dir, 'README'), 'base\n');
    git('add', '-A');
    git('commit', '-q', '-m', 'base');
    fake.enqueue(
      callTools({ name: 'eco-helper', input: { task: 'write child.txt' } }),
      callTools({ name: 'write_file', input: { path: 'child.txt', content: 'from the child' } }),
      say('written'),
      say('The helper wrote it.'),
    );
    const start = fake.messageRequests().length;
    const handle = await startAgent(w.client, worktreeDelegator, { task: 'delegate', dir }, { workflowId: `sub-wt-${Date.now()}`, taskQueue: w.taskQueue });
    expect(await handle.result()).toBe('The helper wrote it.');
    const result = lastToolResult(fake.messageRequests()[start + 3]!);
    const branch = /committed on branch (fh\/[^\s]+) \(commit [0-9a-f]{12}\)/.exec(result.content)?.[1];
    expect(result.content.startsWith('written')).toBe(true);
    expect(branch).toBeDefined();
    expect(git('show', `${branch}:child.txt`)).toBe('from the child');
    await expect(fs.stat(path.join(dir, 'child.txt'))).rejects.toThrow();
    expect(git('worktree', 'list').split('\n')).toHaveLength(1);
  });

  it('depth is capped: a sub-agent past maxDepth is an error result, and the run goes on', async () => {
    fake.enqueue(
      callTools({ name: 'again', input: { task: 'level 1' } }), // depth 0 hands over
      callTools({ name: 'again', input: { task: 'level 2' } }), // depth 1 tries again: refused
      say('stopped at one level'), // depth 1 reads the refusal
      say('done'), // depth 0
    );
    const start = fake.messageRequests().length;
    const handle = await startAgent(w.client, recursive, { task: 'recurse' }, { workflowId: `sub-depth-${Date.now()}`, taskQueue: w.taskQueue });
    expect(await handle.result()).toBe('done');
    const refusal = lastToolResult(fake.messageRequests()[start + 2]!);
    expect(refusal.isError).toBe(true);
    expect(refusal.content).toMatch(/past the limit of 1/);
    expect(lastToolResult(fake.messageRequests()[start + 3]!)).toEqual({ content: 'stopped at one level', isError: false });
  });
});
