/**
 * Model connection names: what a run calls a provider and its credentials (configured on the worker
 * or given to invoke by name; see ./connection-route for how a session's calls carry one).
 */
import { z } from 'zod';
import { lazySchema } from './lazy-schema';

/** The connection a run uses when it names none: Anthropic direct. */
export const DEFAULT_CONNECTION = 'anthropic';

/** A connection's name: what a worker's `connections` option may be keyed by. */
export const connectionNameSchema = lazySchema(() => z
  .string()
  .regex(/^[a-z0-9][a-z0-9_.-]{0,63}$/i, 'must be a connection name (letters, digits, _ . -), e.g. anthropic'));

/** A connection as a request names it: absent for the default one. */
export function namedConnection(connection: string | undefined): string | undefined {
  return connection === undefined || connection === DEFAULT_CONNECTION ? undefined : connection;
}
