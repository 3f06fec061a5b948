import { RuntimeUnavailableError } from './errors';

/**
 * Inline sessions inside a workflow bundle: they run an agent in this process and write files, which
 * workflow code cannot. On Temporal a session is a workflow of its own (start it from a client).
 */
function unavailable(what: string): never {
  throw new RuntimeUnavailableError(`${what}() runs an inline session (in-process, with files); workflow code cannot. On Temporal, start the session from a client.`);
}

export async function openSession(..._args: unknown[]): Promise<never> {
  return unavailable('openSession');
}

export async function listInlineSessions(..._args: unknown[]): Promise<never> {
  return unavailable('listInlineSessions');
}
