/**
 * A prompt whose wait is cut by the server or the network (not answered by the session) may already be in
 * the session, and runs there when a worker takes it: `fh session prompt` then names the message id, so
 * the same command with `--message-id` gets its answer once instead of queueing it a second time.
 */
import { randomUUID } from 'node:crypto';
import { FabricError } from '../core/errors';
import type { ConnectionSettings } from '../client/connection';
import { asCliError } from './context';
import { CliError } from './errors';

/** The id the message is sent with: the user's, or one made here so it can be named if the wait is cut. */
export function messageIdFor(given: string | undefined): string {
  return given ?? randomUUID();
}

/** `err` as the CLI prints it, naming the message id to reattach with when the session did not answer. */
export function withReattachHint(err: unknown, sessionId: string, messageId: string, settings: ConnectionSettings): CliError {
  // A typed error is the session's (or the SDK's) own answer: the message was refused, or the wait says what to do.
  if (err instanceof CliError || err instanceof FabricError) return asCliError(err, { settings });
  const cli = asCliError(err, { settings });
  return new CliError(
    cli.exitCode,
    `${cli.message.replace(/\.$/, '')}. Message ${messageId} may already be in session ${sessionId} and runs when a worker takes it: ` +
      `to get its answer without running it twice, send it again with \`fh session prompt ${sessionId} --message-id ${messageId}\` and the same text`,
  );
}
