/**
 * Sessions from the client side: a session is one workflow of its agent, whose id is the session id.
 * startSession / getSession / sendPrompt here; the SessionHandle in session-handle.ts, the options in
 * session-options.ts, how a start is planned in session-plan.ts. Loads no worker code.
 */
import { randomUUID } from 'node:crypto';
import { WithStartWorkflowOperation, type Client } from '@temporalio/client';
import type { AgentDefinition } from '../core/agent';
import { parseSessionId } from '../core/sessions/ids';
import { sessionPromptUpdate, type SessionPromptRequest } from '../wire/session-messages';
import { attachmentStore, storeAttachments } from './attachments';
import { missingSearchAttributes } from './search-attribute-errors';
import { SessionHandle, startSessionWith } from './session-handle';
import { messageUpdateId, runSessionUpdate, typedSessionError } from './session-updates';
import { checkWaitLimits } from './call-options';
import { sessionStartPlan } from './session-plan';
import { SESSION_PROMPT_KEYS, START_SESSION_KEYS, type SessionPromptOptions, type StartSessionOptions } from './session-options';
import { checkKnownKeys } from '../core/validate';

export { SessionExistsError, SessionHandle } from './session-handle';
export { messageUpdateId } from './session-updates';
export { sessionStartPlan } from './session-plan';
export type { DeleteOptions, EndSessionOptions, ForkOptions, SessionPromptOptions, StartSessionOptions } from './session-options';

/** Starts a session of `agent`: a workflow that serves prompts until it is ended or deleted. */
export async function startSession(client: Client, agent: AgentDefinition | string, options: StartSessionOptions = {}): Promise<SessionHandle> {
  checkKnownKeys(options, START_SESSION_KEYS, 'start options');
  return startSessionWith(client, agent, options, undefined);
}

/** A handle on an existing session (no call is made: a wrong id fails at first use with SESSION_NOT_FOUND). */
export function getSession(client: Client, id: string): SessionHandle {
  return new SessionHandle(client, parseSessionId(id));
}

/**
 * Prompts session `id`, starting it first if it does not exist: one round trip (update-with-start),
 * no race between two clients doing the same. Resolves to the reply.
 */
export async function sendPrompt(
  client: Client,
  agent: AgentDefinition | string,
  text: string,
  options: StartSessionOptions & SessionPromptOptions & { id: string },
): Promise<{ session: SessionHandle; reply: string }> {
  checkKnownKeys(options, { ...START_SESSION_KEYS, ...SESSION_PROMPT_KEYS }, 'sendPrompt options');
  const id = parseSessionId(options.id);
  const plan = sessionStartPlan(agent, options, undefined);
  const start = new WithStartWorkflowOperation(plan.agent, {
    ...plan.options,
    workflowId: id,
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
  checkWaitLimits(options, 'wait options'); // before the attachments are stored
  const messageId = options.messageId ?? randomUUID();
  const attachments = await storeAttachments(attachmentStore(client, options.store), options.attachments);
  const args: [SessionPromptRequest] = [attachments ? { text, messageId, attachments } : { text, messageId }];
  const session = new SessionHandle(client, id, plan.agent);
  const updateId = messageUpdateId('prompt', messageId, text, attachments);
  try {
    // As prompt() waits: `timeoutMs` and `signal` end the wait with WAIT_ENDED (the message stays), and an
    // RPC timeout or a continue-as-new is waited through with the same update id.
    const reply = await runSessionUpdate({
      client,
      handle: session.workflow,
      sessionId: id,
      def: sessionPromptUpdate,
      args,
      updateId,
      messageId,
      limits: options,
      first: () => client.workflow.executeUpdateWithStart(sessionPromptUpdate, { args, updateId, startWorkflowOperation: start }),
    });
    return { session, reply: await session.followReply(reply, options) };
  } catch (err) {
    throw missingSearchAttributes(err, client.options.namespace, 'started with') ?? typedSessionError(err, id);
  }
}
