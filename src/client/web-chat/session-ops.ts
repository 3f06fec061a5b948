/**
 * What the handler asks of a session: send a message (starting the session if it does not exist, in
 * one update-with-start), find where a message's turn starts in the stream, and decide approvals.
 */
import { WithStartWorkflowOperation, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { AgentDefinition } from '../../core/agent';
import { FabricError } from '../../core/errors';
import { sessionSendUpdate } from '../../wire/session-messages';
import { missingSearchAttributes } from '../search-attribute-errors';
import { runSessionUpdate, typedSessionError } from '../session-updates';
import { messageUpdateId, sessionStartPlan, type SessionHandle, type StartSessionOptions } from '../sessions';
import { TemporalStreamTransport } from '../stream/transport';

/**
 * Sends `text` as message `messageId` to session `id` (started now if it does not exist), through
 * runSessionUpdate: a deadline or abort signal in the client's call context ends the wait with
 * WAIT_ENDED (with no worker polling, the update-with-start would wait for ever); the message stays in
 * the session, and the same message sent again reattaches.
 */
export async function sendWithStart(
  client: Client,
  agent: AgentDefinition | string,
  id: string,
  text: string,
  messageId: string,
  options: StartSessionOptions,
): Promise<{ position: number }> {
  const plan = sessionStartPlan(agent, options, undefined);
  const start = new WithStartWorkflowOperation(plan.agent, { ...plan.options, workflowId: id, workflowIdConflictPolicy: 'USE_EXISTING' });
  const args: [{ text: string; messageId: string }] = [{ text, messageId }];
  // The update id comes from the message id and text: a retried POST reattaches to the same update.
  const updateId = messageUpdateId('send', messageId, text);
  try {
    return await runSessionUpdate({
      client,
      handle: client.workflow.getHandle(id),
      sessionId: id,
      def: sessionSendUpdate,
      args,
      updateId,
      messageId,
      first: () => client.workflow.executeUpdateWithStart(sessionSendUpdate, { args, updateId, startWorkflowOperation: start }),
    });
  } catch (err) {
    throw missingSearchAttributes(err, client.options.namespace, 'started with') ?? typedSessionError(err, id);
  }
}

/** Where the session's stream is now (0: no session yet). */
export async function streamNow(client: Client, id: string): Promise<number> {
  try {
    return (await new TemporalStreamTransport(client, id).snapshot(Number.MAX_SAFE_INTEGER)).page.next;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return 0;
    throw err;
  }
}

/** How many stream pages a search for a turn reads at most (the run's kept events, page by page). */
const MAX_PAGES = 200;

/** The offset of message `messageId`'s turn_started in the current run's stream, if it is there. */
export async function turnStart(client: Client, id: string, messageId: string): Promise<number | undefined> {
  const transport = new TemporalStreamTransport(client, id);
  let pos = 0;
  for (let i = 0; i < MAX_PAGES; i++) {
    const { page } = await transport.snapshot(pos);
    const hit = page.events.find((e) => e.event.type === 'turn_started' && e.event.messageId === messageId);
    if (hit) return hit.offset;
    const last = page.events.at(-1);
    if (!last || last.offset < pos) return undefined;
    pos = last.offset + 1;
  }
  return undefined;
}

/** Approves or denies tool call `callId`; one decided already (a retried POST) is left as it is. */
export async function decide(session: SessionHandle, callId: string, approved: boolean, reason: string | undefined): Promise<void> {
  try {
    await (approved ? session.approve(callId, reason) : session.deny(callId, reason));
  } catch (err) {
    if (err instanceof FabricError && err.code === 'ALREADY_DECIDED') return;
    throw err;
  }
}

/** Whether tool call `callId` still waits for a decision. */
export async function isPendingApproval(session: SessionHandle, callId: string): Promise<boolean> {
  return (await session.pendingApprovals()).some((p) => p.callId === callId);
}
