import { FabricError } from '../core/errors';

export const SESSION_ID_PATTERN = /^[a-z0-9][a-z0-9-]{0,99}$/;

/** A session id that is not a slug: it would name a file outside the sessions directory, or an odd one. */
export class InvalidSessionIdError extends FabricError {
  readonly field = 'id';
  constructor(readonly id: unknown) {
    super('INVALID_SESSION_ID', `Invalid session id ${JSON.stringify(id)}: id must match ${SESSION_ID_PATTERN} (lower-case letters, digits and '-').`);
  }
}

export class SessionNotFoundError extends FabricError {
  constructor(
    readonly id: string,
    readonly dir: string,
  ) {
    super('SESSION_NOT_FOUND', `No session '${id}' in ${dir}.`);
  }
}

export class SessionExistsError extends FabricError {
  constructor(
    readonly id: string,
    readonly dir: string,
  ) {
    super('SESSION_EXISTS', `A session '${id}' already exists in ${dir}.`);
  }
}

/** A session file that cannot be read back: names the file, the line and what is wrong with it. */
export class SessionFileCorruptError extends FabricError {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly reason: string,
  ) {
    super('SESSION_FILE_CORRUPT', `Session file ${file}, line ${line}: ${reason}`);
  }
}

/** A saved session resumed with another agent than the one that wrote it. */
export class SessionAgentMismatchError extends FabricError {
  readonly field = 'agent';
  constructor(
    readonly id: string,
    readonly savedAgent: string,
    readonly agent: string,
  ) {
    super('SESSION_AGENT_MISMATCH', `Session '${id}' belongs to agent '${savedAgent}'; it cannot be continued by agent '${agent}'.`);
  }
}

/** A header given to create/save that does not fit the header schema. */
export class InvalidSessionHeaderError extends FabricError {
  constructor(
    readonly field: string,
    reason: string,
  ) {
    super('INVALID_SESSION_HEADER', `Invalid session header: ${field || '(root)'}: ${reason}`);
  }
}
