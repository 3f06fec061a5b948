/**
 * Per-tool approval (`needsApproval`) in a plain agent run on Temporal: the call waits in workflow state
 * (no activity runs) until a client decides it; approve runs the tool once, deny gives the model the
 * note; a decision for a call that does not wait is refused at once (UNKNOWN_TOOL_CALL / ALREADY_DECIDED).
 */
import { startAgent, startSession } from '@fabric-harness/sdk/client';
import { FakeAnthropicServer, callTools, say } from '@fabric-harness/sdk/testing';
import { gatekeeper } from '../fixtures/agents';
import { startTestWorker, type TestWorker } from '../support/test-worker';
import { rejection, until } from '../support/waiting';

describe('needsApproval on Temporal', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;
  let n = 0;
  const wid = (p: string) => `${p}-${Date.now()}-${n++}`;

  beforeAll(async () => {
    fake = await FakeAnthropicServer.start();
    w = await startTestWorker({ name: 'approvals', baseURL: fake.url });
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  it('waits for a client: approve runs the tool once; deny gives the model the note; stray decisions are refused', async () => {
    fake.enqueue(callTools({ name: 'deploy', input: { service: 'api' } }, { name: 'refund', input: { amount: 500 } }), say('Deployed; no refund.'));
    const handle = await startAgent(w.client, gatekeeper, { task: 'deploy and refund' }, { workflowId: wid('gate'), taskQueue: w.taskQueue });
    const pending = await until('both calls to wait', async () => {
      const p = await handle.pendingApprovals();
      return p.length === 2 ? p : undefined;
    });
    expect(pending.map((p) => [p.tool, p.input])).toEqual([
      ['deploy', { service: 'api' }],
      ['refund', { amount: 500 }],
    ]);
    // Nothing ran while they waited: no tool activity was scheduled.
    const scheduled = (await handle.fetchHistory()).events!.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'fhTool');
    expect(scheduled).toHaveLength(0);

    expect(await rejection(handle.approve('no-such-call'))).toMatchObject({ code: 'UNKNOWN_TOOL_CALL' });
    const [deploy, refund] = pending;
    await handle.approve(deploy!.callId);
    expect(await rejection(handle.approve(deploy!.callId))).toMatchObject({ code: expect.stringMatching(/ALREADY_DECIDED|UNKNOWN_TOOL_CALL/) });
    await handle.deny(refund!.callId, 'too large');
    expect(await handle.result()).toEqual({ reply: 'Deployed; no refund.' });

    const results = (fake.messageRequests().at(-1)!.body.messages as Array<{ content: Array<{ type: string; content?: string }> }>)
      .at(-1)!
      .content.filter((b) => b.type === 'tool_result')
      .map((b) => b.content);
    expect(results).toEqual(['deployed api', expect.stringContaining('denied the call to refund: too large')]);
    const events = await handle.events(100);
    expect(events.filter((e) => e.type === 'approval_decided').map((e) => e.data)).toEqual([
      { id: deploy!.callId, name: 'deploy', approved: true },
      { id: refund!.callId, name: 'refund', approved: false, note: 'too large' },
    ]);
  });

  it('in a session, a tool with needsApproval waits for approval even in permission mode execute', async () => {
    fake.enqueue(callTools({ name: 'deploy', input: { service: 'web' } }), say('Web is deployed.'));
    const session = await startSession(w.client, 'gated-assistant', { title: 'Gated', settings: { permissionMode: 'execute' }, taskQueue: w.taskQueue });
    const { messageId } = await session.send('deploy web');
    const [waiting] = await until('the deploy call to wait', async () => {
      const p = await session.pendingApprovals();
      return p.length ? p : undefined;
    });
    expect(waiting).toMatchObject({ tool: 'deploy', input: { service: 'web' } });
    await session.approve(waiting!.callId);
    expect(await session.reply(messageId)).toBe('Web is deployed.');
    await session.end();
  });
});
