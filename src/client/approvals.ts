/**
 * Approvals as events: `for await (const req of session.approvals())`, each tool call waiting for a
 * person handed over once, with `req.approve()` / `req.deny(reason)`. Built on the run's durable stream
 * (its `approval_requested` events wake the iterator) and the run's own list of waiting calls (what is
 * waiting, with its input, is read from the workflow, never guessed from the stream), so:
 * - a call already waiting when the iterator starts is yielded first (nothing is lost between `send()`
 *   and the loop: the stream position is taken before the list is read, so a call asked for in between
 *   is in one or the other);
 * - a call is yielded at most once per iterator (by call id: a call carried across continue-as-new, or
 *   seen again after a worker restart, is the same call);
 * - a call decided elsewhere (another client, `fh`, the board) before the iterator reaches it is not
 *   yielded: the list is read again before each yield. One decided between the yield and `approve()`
 *   makes that call reject with ALREADY_DECIDED.
 * The iterator ends when `signal` aborts, when the consumer leaves the loop, or when the run ends.
 */
import type { Client } from '@temporalio/client';
import type { StreamEnvelope } from '../wire/stream';
import { onAbort } from './abort-listeners';
import { underSignal } from './wait-bounds';
import { streamOf, streamPosition, type ErrorMapper } from './stream/handles';
import type { DecisionOptions } from './call-options';

/** A tool call waiting for a decision, as `approvals()` hands it over. */
export interface ApprovalRequest {
  /** The tool call's id (the model's tool_use id): `approve(callId)` / `deny(callId)` on the handle take it too. */
  readonly callId: string;
  /** The tool's name. */
  readonly tool: string;
  /** The tool call's input, as the model wrote it (untrusted: shown to a person, escape it). */
  readonly input: unknown;
  /** The message whose turn made the call (sessions; a plain agent run has none). */
  readonly messageId?: string;
  /** Epoch ms when the call started to wait (workflow time). */
  readonly requestedAt: number;
  /**
   * Lets the call run: `options` is the note kept with the decision, or `{ note, timeoutMs, signal }` (how
   * long to wait for the run to take it: WAIT_ENDED at the bound, as the handle's `approve`). Rejects
   * ALREADY_DECIDED when it was decided meanwhile.
   */
  approve(options?: string | DecisionOptions): Promise<void>;
  /** Refuses the call: it does not run, and the model reads the note (the reason). Rejects ALREADY_DECIDED when it was decided meanwhile. */
  deny(options?: string | DecisionOptions): Promise<void>;
}

export interface ApprovalsOptions {
  /** Ends the iterator (promptly, also while it waits for the next request). */
  signal?: AbortSignal;
}

/** A waiting call as a run lists it (a session's PendingApproval, an agent run's RunApproval). */
export interface WaitingCall {
  callId: string;
  tool: string;
  input: unknown;
  requestedAt: number;
  messageId?: string;
}

/** What approvals() needs of a handle. */
export interface ApprovalSource {
  /** Where the run's stream is now; `signal` (the iterator's) cancels the read. */
  position(signal: AbortSignal): Promise<number>;
  /** The calls waiting for a decision now, oldest first; `signal` (the iterator's) cancels the read. */
  pending(signal: AbortSignal): Promise<WaitingCall[]>;
  /** The run's stream from `from` (across continue-as-new), ending when the run ends or `signal` aborts. */
  stream(from: number, signal: AbortSignal): AsyncIterable<StreamEnvelope>;
  decide(callId: string, approved: boolean, options?: string | DecisionOptions): Promise<void>;
}

/** What a handle (SessionHandle, AgentHandle) decides and lists with. */
interface DecidingHandle {
  pendingApprovals(): Promise<WaitingCall[]>;
  approve(callId: string, options?: string | DecisionOptions): Promise<void>;
  deny(callId: string, options?: string | DecisionOptions): Promise<void>;
}

/** Only durable events matter here: the open call's live deltas are looked at less often than a viewer's 100 ms. */
const LIVE_POLL_MS = 250;

/**
 * The source of a handle on workflow `workflowId` (its stream through Temporal, its own list and decisions).
 * `read` is the handle's own query loop, so the stream position fails as the handle's reads do (NO_WORKER
 * with no worker, not a bare "Failed to query Workflow"). Both reads run under the iterator's signal: with
 * no worker they wait up to the server's ~30 s, and an abort ends them (and the iterator) at once.
 */
export function approvalSource(
  handle: DecidingHandle,
  client: Client,
  workflowId: string,
  typed?: ErrorMapper,
  read: <T>(ask: () => Promise<T>) => Promise<T> = (ask) => ask(),
): ApprovalSource {
  return {
    // The handle's own error names (a session that does not exist: SESSION_NOT_FOUND), as its stream() has.
    position: (signal) =>
      underSignal(client, signal, () => read(() => streamPosition({ client, id: workflowId }))).catch((err: unknown) => Promise.reject(typed ? typed(err) : err)),
    pending: (signal) => underSignal(client, signal, () => handle.pendingApprovals()),
    stream: (from, signal) => streamOf(client, workflowId, { from, signal, livePollMs: LIVE_POLL_MS }, typed),
    decide: (callId, approved, options) => (approved ? handle.approve(callId, options) : handle.deny(callId, options)),
  };
}

export function approvalRequests(source: ApprovalSource, options: ApprovalsOptions = {}): AsyncIterable<ApprovalRequest> {
  return { [Symbol.asyncIterator]: () => follow(source, options.signal) };
}

async function* follow(source: ApprovalSource, outer: AbortSignal | undefined): AsyncGenerator<ApprovalRequest> {
  if (outer?.aborted) return;
  // Our own signal: leaving the loop (break) stops the stream read as an abort does.
  const stop = new AbortController();
  const off = outer ? onAbort(outer, () => stop.abort()) : () => undefined;
  const yielded = new Set<string>();
  const request = (c: WaitingCall): ApprovalRequest => ({
    callId: c.callId,
    tool: c.tool,
    input: c.input,
    ...(c.messageId ? { messageId: c.messageId } : {}),
    requestedAt: c.requestedAt,
    approve: (options) => source.decide(c.callId, true, options),
    deny: (options) => source.decide(c.callId, false, options),
  });
  /** The next waiting call not yielded yet, read afresh (one decided elsewhere meanwhile is gone from the list). */
  const next = async (): Promise<WaitingCall | undefined> => (await source.pending(stop.signal)).find((c) => !yielded.has(c.callId));
  try {
    // The position first: a call asked for after it is in the stream, one asked for before it is in the list.
    const from = await source.position(stop.signal);
    for (let c = await next(); c && !stop.signal.aborted; c = await next()) {
      yielded.add(c.callId);
      yield request(c);
    }
    for await (const env of source.stream(from, stop.signal)) {
      // A call that still waits holds its turn, so its event cannot drop off the stream's kept window
      // before the reader reaches it. A sub-agent's approval is its own run's to decide (its handle), not this one's.
      if (env.subAgent || env.event.type !== 'approval_requested' || yielded.has(env.event.callId ?? '')) continue;
      for (let c = await next(); c && !stop.signal.aborted; c = await next()) {
        yielded.add(c.callId);
        yield request(c);
      }
    }
  } catch (err) {
    // A read the abort cut short (its WAIT_ENDED, a cancelled call) ends the iterator, as the abort means.
    if (stop.signal.aborted) return;
    throw err;
  } finally {
    off();
    stop.abort();
  }
}
