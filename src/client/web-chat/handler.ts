/**
 * A session behind a web chat: a Web `Request` → `Response` handler that speaks the AI SDK's UI
 * message stream protocol, so the AI SDK's `useChat` drives a durable session (docs/web-chat.md).
 *
 * - POST (useChat's send): the last user message goes to the session (chat id → session id; started
 *   if new); the response streams that message's turn. A POST whose last message is the assistant's,
 *   with tool approvals answered (addToolApprovalResponse), approves or denies them and streams the
 *   rest of the turn from just after the approval request (its offset rides in the approval id).
 * - GET `<api>/<chatId>/stream` (useChat's resumeStream): the running turn again from its first offset,
 *   as the AI SDK expects by default (`resumeStreamIsReplay`: the client starts the message over), or
 *   204 when nothing runs. Part ids come from the stream, so the replayed message is the same message.
 */
import type { Client } from '@temporalio/client';
import type { AgentDefinition } from '../../core/agent';
import { parseSessionId } from '../../core/sessions/ids';
import { parseWith } from '../../core/validate';
import { FabricError } from '../../core/errors';
import { getSession, type SessionHandle, type StartSessionOptions } from '../sessions';
import { turnChunks } from './chunks';
import { approvalResponses, chatRequestSchema, parseApprovalId, replyMessageId, sessionMessageId, type ChatRequest } from './protocol';
import { decide, isPendingApproval, sendWithStart, streamNow, turnStart } from './session-ops';
import { badRequest, errorResponse, sseResponse } from './sse';
import type { LiveBrokerClient } from '../stream/broker-transport';
import { checkSendTimeout, checkStreamOptions } from '../call-options';
import { idleQueueOutside } from '../query-retries';
import { WaitEndedError } from '../session-updates';

export interface SessionChatHandlerOptions {
  client: Client;
  /** The agent a new chat's session runs. */
  agent: AgentDefinition | string;
  taskQueue?: string;
  /**
   * The session id of a chat, and the place to check that the caller may use it: a `Response` (a 403,
   * say) is answered instead. Default: the chat id itself, which must then be a session id (lower-case
   * letters, digits, '-').
   */
  sessionIdFrom?: (chatId: string, request: Request) => string | Response | Promise<string | Response>;
  /** How a new chat's session starts (its settings, title, labels, …). */
  session?: Omit<StartSessionOptions, 'id' | 'taskQueue'>;
  /** How often live deltas are looked for while the model streams (default 100 ms). */
  livePollMs?: number;
  /** Live deltas from the workers' broker instead of Temporal (`liveBroker({ url })`; closing it is the caller's). */
  broker?: LiveBrokerClient;
  /**
   * How long a request waits for the session (default 30 s): a POST for it to take its message or its
   * approval answers, a GET (and a POST after its send) for where its turn stands. Past it the answer is
   * a 503 WAIT_ENDED (naming the task queue when no worker polls it); a message stays in the session, and
   * the same message posted again (useChat's retry) reattaches to it: it runs once.
   */
  sendTimeoutMs?: number;
}

/** How long a POST waits for the session to take its message, unless `sendTimeoutMs` says otherwise. */
const DEFAULT_SEND_TIMEOUT_MS = 30_000;

export interface SessionChatHandler {
  POST(request: Request): Promise<Response>;
  GET(request: Request): Promise<Response>;
}

export function sessionChatHandler(options: SessionChatHandlerOptions): SessionChatHandler {
  const { client } = options;
  // At once, not at the first request.
  checkStreamOptions({ livePollMs: options.livePollMs, broker: options.broker });
  checkSendTimeout(options.sendTimeoutMs);
  const sendTimeoutMs = options.sendTimeoutMs ?? DEFAULT_SEND_TIMEOUT_MS;
  /**
   * `call` bounded by `sendTimeoutMs` (from `deadline`) and by the client going: a session whose worker is
   * down must not hold the request open. runSessionUpdate and runSessionQuery honour the client's call
   * context and end the wait with WAIT_ENDED (a message or decision kept for a later POST).
   */
  const bounded = async <T>(request: Request, session: SessionHandle, deadline: number, call: () => Promise<T>): Promise<T> => {
    const timed = () => client.withDeadline(deadline, call);
    try {
      return await (request.signal ? client.withAbortSignal(request.signal, timed) : timed());
    } catch (err) {
      // A read that is not a session query (the stream's page) ends with the bare gRPC error: named here.
      // A typed answer (WAIT_ENDED already, SESSION_NOT_FOUND, …) stays what it is.
      const why = request.signal?.aborted ? 'aborted' : Date.now() >= deadline ? 'timeout' : undefined;
      if (!why || err instanceof FabricError) throw err;
      throw new WaitEndedError(session.id, why, await idleQueueOutside(client, session.workflow));
    }
  };
  /** The chat's session, or the answer `sessionIdFrom` gave instead. */
  const sessionOf = async (chatId: string, request: Request): Promise<SessionHandle | Response> => {
    const id = options.sessionIdFrom ? await options.sessionIdFrom(chatId, request) : chatId;
    return id instanceof Response ? id : getSession(client, parseSessionId(id));
  };

  /** The turn of `messageId` from offset `from`, as a response that stops reading when the client goes. */
  const streamTurn = (session: SessionHandle, request: Request, messageId: string, replyId: string, from: number, extra: { continuing?: boolean; knownApprovals?: Map<string, string> } = {}): Response => {
    const abort = new AbortController();
    request.signal?.addEventListener('abort', () => abort.abort(), { once: true });
    const events = session.stream({ from, signal: abort.signal, ...(options.livePollMs ? { livePollMs: options.livePollMs } : {}), ...(options.broker ? { broker: options.broker } : {}) });
    const chunks = turnChunks(events, { messageId, replyId, isPending: (callId) => isPendingApproval(session, callId), ...extra });
    return sseResponse(chunks, () => abort.abort());
  };

  async function POST(request: Request): Promise<Response> {
    let raw: unknown;
    try {
      raw = await request.json();
    } catch {
      return badRequest('(body)', 'expected a JSON object');
    }
    try {
      const body = parseWith(chatRequestSchema, raw, 'chat request');
      if (body.trigger === 'regenerate-message') return badRequest('trigger', 'a durable session keeps its replies: regenerate is not supported');
      const session = await sessionOf(body.id, request);
      if (session instanceof Response) return session;
      const index = body.messages.length - 1;
      const last = body.messages[index]!;
      if (last.role === 'assistant') return await answerApprovals(request, session, body, index);
      if (last.role !== 'user') return badRequest(`messages.${index}.role`, 'the last message must be the user\'s (or the assistant\'s, answering approvals)');
      const text = last.parts.flatMap((p) => (p.type === 'text' && typeof p.text === 'string' ? [p.text] : [])).join('\n');
      if (!text.trim()) return badRequest(`messages.${index}.parts`, 'the last user message has no text part');
      const messageId = sessionMessageId(last.id);
      // Sent before anything else asks the session (a query to a run no worker serves waits too).
      const starting = { ...options.session, ...(options.taskQueue ? { taskQueue: options.taskQueue } : {}) };
      await bounded(request, session, Date.now() + sendTimeoutMs, () => sendWithStart(client, options.agent, session.id, text, messageId, starting));
      // Where the stream is, then where the message's turn started, in that order: a turn not started by
      // the second read had not started by the first either, so `from` is never past its start. A retried
      // POST (the update deduplicated, its answer the first one's) finds its turn however far back it is.
      // Bounded too: the worker that took the message may be gone by now.
      const { from, start } = await bounded(request, session, Date.now() + sendTimeoutMs, async () => {
        const now = await streamNow(client, session.id);
        return { from: now, start: await turnStart(client, session.id, messageId) };
      });
      return streamTurn(session, request, messageId, replyMessageId(messageId), start ?? from);
    } catch (err) {
      return errorResponse(err);
    }
  }

  async function answerApprovals(request: Request, session: SessionHandle, body: ChatRequest, index: number): Promise<Response> {
    const last = body.messages[index]!;
    const answers = approvalResponses(last);
    if (!answers.length) return badRequest(`messages.${index}.parts`, 'an assistant message last must answer a tool approval');
    if (!last.id.endsWith('-reply')) return badRequest(`messages.${index}.id`, 'not a reply this handler streamed');
    const messageId = last.id.slice(0, -'-reply'.length);
    const known = new Map<string, string>();
    const deadline = Date.now() + sendTimeoutMs;
    let from = 0;
    for (const a of answers) {
      const at = parseApprovalId(a.approval.id);
      if (!at || at.callId !== a.toolCallId) return badRequest(`messages.${index}.parts`, `approval id '${a.approval.id.slice(0, 60)}' is not one this handler gave`);
      // Bounded as a send is (the update waits for a worker): WAIT_ENDED, the decision not taken.
      await bounded(request, session, deadline, () => decide(session, a.toolCallId, a.approval.approved, a.approval.reason));
      known.set(a.toolCallId, a.approval.id);
      from = Math.max(from, at.offset + 1);
    }
    return streamTurn(session, request, messageId, last.id, from, { continuing: true, knownApprovals: known });
  }

  async function GET(request: Request): Promise<Response> {
    const match = /\/([^/]+)\/stream\/?$/.exec(new URL(request.url).pathname);
    if (!match) return badRequest('id', 'expected a path ending in /<chat id>/stream');
    try {
      const session = await sessionOf(decodeURIComponent(match[1]!), request);
      if (session instanceof Response) return session;
      // Both reads are queries a worker answers: bounded as a POST is, a 503 when none does in time.
      const running = await bounded(request, session, Date.now() + sendTimeoutMs, async () => {
        const info = await session.info().catch((err: unknown) => {
          if (err instanceof FabricError && err.code === 'SESSION_NOT_FOUND') return undefined;
          throw err;
        });
        const messageId = info?.current;
        const start = messageId ? await turnStart(client, session.id, messageId) : undefined;
        return messageId && start !== undefined ? { messageId, start } : undefined;
      });
      if (!running) return new Response(null, { status: 204 });
      const { messageId, start } = running;
      return streamTurn(session, request, messageId, replyMessageId(messageId), start);
    } catch (err) {
      return errorResponse(err);
    }
  }

  return { POST, GET };
}


