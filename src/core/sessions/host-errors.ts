import { FabricError } from '../errors';
import { plural } from '../plural';

/** The session has ended (closed or deleted): it takes no more messages. */
export class SessionClosedError extends FabricError {
  constructor(readonly sessionId: string) {
    super('SESSION_CLOSED', `Session ${sessionId} has ended and takes no more messages; start a new one or fork this one`);
  }
}

/** No session has this id (never started, or deleted). */
export class SessionNotFoundError extends FabricError {
  constructor(readonly sessionId: string) {
    super('SESSION_NOT_FOUND', `No session with id ${sessionId} (it was never started, or it was deleted)`);
  }
}

export class UnknownMessageError extends FabricError {
  constructor(
    readonly messageId: string,
    why?: string,
  ) {
    super('UNKNOWN_MESSAGE', `messageId: no queued message ${messageId}${why ? ` (${why})` : ''}`);
  }
}

/** A message id (an idempotency key) sent again with other text: refused, never taken for the first message. */
export class IdempotencyKeyReusedError extends FabricError {
  constructor(readonly messageId: string) {
    super('IDEMPOTENCY_KEY_REUSED', `messageId: ${messageId} was sent before with other text; a message id names one message (send the new text with a new id)`);
  }
}

/** An approval for a tool call that is not waiting for one. */
export class UnknownToolCallError extends FabricError {
  constructor(
    readonly callId: string,
    readonly alreadyDecided: boolean,
    readonly pending: string[],
  ) {
    super(
      alreadyDecided ? 'ALREADY_DECIDED' : 'UNKNOWN_TOOL_CALL',
      alreadyDecided
        ? `callId: tool call ${callId} was already approved or denied`
        : `callId: no tool call ${callId} waits for approval (pending: ${pending.length ? pending.join(', ') : 'none'})`,
    );
  }
}

export class InvalidForkPointError extends FabricError {
  constructor(
    readonly atMessage: number,
    readonly messages: number,
    why?: string,
  ) {
    super(
      'INVALID_FORK_POINT',
      `atMessage: cannot fork at message ${atMessage}: ${why ?? `the session has ${plural(messages, 'message', 'messages')} (0-${Math.max(messages - 1, 0)})`}`,
    );
  }
}

/** A run named a model connection that the worker (or the inline process) does not have. */
export class UnknownConnectionError extends FabricError {
  /** `known`: the connections where it was looked up (the worker's own). */
  constructor(
    readonly connection: string,
    readonly known: readonly string[],
    field = 'connection',
  ) {
    super('UNKNOWN_CONNECTION', `${field}: no connection '${connection}'; this worker has: ${known.join(', ')} (a worker's connections are its \`connections\` option: docs/models.md)`);
  }
}
