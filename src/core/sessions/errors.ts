/**
 * Typed errors of the session catalogue. Plain classes (no Node or Temporal APIs) so workflow code can
 * throw them and the wire codec can carry their code and fields to clients.
 */
import { FabricError } from '../errors';

/** A status the session's agent does not know (the known ones are listed, in the message and `known`). */
export class InvalidStatusError extends FabricError {
  declare readonly code: 'INVALID_STATUS';
  readonly field = 'status';
  /** What was given, as text (a non-string is described, so the error stays serialisable). */
  readonly status: string;
  readonly known: string[];

  constructor(status: unknown, known: readonly string[]) {
    const given = typeof status === 'string' ? status : describeValue(status);
    const problem =
      typeof status === 'string' ? `'${given}' is not a status of this session` : `expected a status name (a string), got ${given}`;
    super('INVALID_STATUS', `Invalid status: ${problem}. Known statuses: ${known.length ? known.join(', ') : '(none)'}.`);
    this.status = given;
    this.known = [...known];
  }
}

/** A label whose name or value breaks the label rules; `field` says which (`label` or `label.value`). */
export class InvalidLabelError extends FabricError {
  declare readonly code: 'INVALID_LABEL';
  readonly field: 'label' | 'label.value';
  /** The label's name, when it was a string. */
  readonly label?: string;

  constructor(field: 'label' | 'label.value', problem: string, label?: string) {
    super('INVALID_LABEL', `Invalid ${field === 'label' ? 'label' : `value for label '${label}'`}: ${problem}`);
    this.field = field;
    if (label !== undefined) this.label = label;
  }
}

/** A setting that can no longer change once the session has had its first message (the connection has its own: ConnectionLockedError). */
export class SettingLockedError extends FabricError {
  declare readonly code: 'SETTING_LOCKED';
  readonly field: string;
  readonly current: string;
  readonly requested: string;

  constructor(field: string, current: string, requested: string) {
    super(
      'SETTING_LOCKED',
      `The ${field} setting is locked after the session's first message: it is '${current}' and cannot change to '${requested}'. ` +
        `Start a new session (or fork this one) to use '${requested}'.`,
    );
    this.field = field;
    this.current = current;
    this.requested = requested;
  }
}

/** A session's model connection is fixed at its first message (the model within it can change). */
export class ConnectionLockedError extends FabricError {
  declare readonly code: 'CONNECTION_LOCKED';
  readonly current: string;
  readonly requested: string;

  constructor(current: string, requested: string) {
    super(
      'CONNECTION_LOCKED',
      `settings.connection: the session's connection is locked after its first message: it is '${current}' and cannot change to '${requested}'. ` +
        `The model can change within '${current}'; start a new session to use '${requested}'.`,
    );
    this.current = current;
    this.requested = requested;
  }
}

/** A short, safe description of a value of the wrong type, for messages. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `'${value.length > 40 ? `${value.slice(0, 40)}…` : value}'`;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return `${typeof value} ${String(value)}`;
  return typeof value === 'object' ? 'an object' : typeof value;
}
