/**
 * What every `fh session` subcommand is made with: the subcommand shape with the shared options, its
 * positionals, the connection with its timeout and "no worker polls" messages, and the output switch.
 */
import type { SessionHandle } from '../client/sessions';
import { flag, int, JSON_OPTION, type Options, type Parsed } from './args';
import { asCliError, connect, printJson, STORE_OPTION, type Command, type Connected, type Io } from './context';
import { CliError, EXIT, failure, usage } from './errors';
import { isUnansweredRead, noWorkerMessage, workerPolls } from './waiting';
/* eslint-disable @typescript-eslint/no-require-imports */
// The client modules load @temporalio/client: only when a command runs (help stays instant).
export const sessions = () => require('../client/sessions') as typeof import('../client/sessions');
export const sessionsList = () => require('../client/sessions-list') as typeof import('../client/sessions-list');
/* eslint-enable @typescript-eslint/no-require-imports */

export const TIMEOUT_OPTION: Options = {
  timeout: { type: 'string', value: '<seconds>', help: 'how long to wait for the session (a worker) to answer', default: '30' },
};
export const COMMON: Options = { ...TIMEOUT_OPTION, ...JSON_OPTION, ...STORE_OPTION };
export const NOTE_OPTION: Options = { note: { type: 'string', value: '<text>', help: 'a note for the model with the decision' } };

/** `fh session <sub>` as a Command: name, usage with the `session` prefix, and the shared connection options. */
export function sub(
  name: string,
  spec: { summary: string; usage: string; description?: string; options?: Options; examples: string[]; run: (p: Parsed, io: Io) => Promise<number> },
): Command {
  return {
    name: `session ${name}`,
    summary: spec.summary,
    usage: [`session ${spec.usage}`],
    ...(spec.description ? { description: spec.description } : {}),
    options: { ...spec.options, ...COMMON },
    connects: true,
    examples: spec.examples,
    run: spec.run,
  };
}

// ---------------------------------------------------------------------------------------------------------
// Shared plumbing

/** Positionals after the subcommand: `need` required ones (named for the message), the rest as `rest`. */
export function args(p: Parsed, command: string, names: string[], opts: { rest?: string; restRequired?: boolean } = {}): { named: string[]; rest: string[] } {
  const named = p.positionals.slice(0, names.length);
  if (named.length < names.length) {
    throw usage(`fh ${command} needs ${names.slice(named.length).map((n) => `<${n}>`).join(' ')}: fh ${command} ${names.map((n) => `<${n}>`).join(' ')}${opts.rest ? ` <${opts.rest}…>` : ''}`);
  }
  const rest = p.positionals.slice(names.length);
  if (!opts.rest && rest.length > 0) throw usage(`unexpected argument '${rest[0]}' (fh ${command})`);
  if (opts.rest && opts.restRequired && rest.length === 0) throw usage(`fh ${command} needs <${opts.rest}>: fh ${command} ${names.map((n) => `<${n}>`).join(' ')} <${opts.rest}…>`);
  return { named, rest };
}

export function timeoutMs(p: Parsed): number {
  return int(p, 'timeout', 30, 1) * 1000;
}

/**
 * Runs `fn` with a connection, bounded by --timeout: a session only answers through a worker, so a call
 * nobody answers ends with what to do instead of hanging. Errors become one line with their exit code.
 */
export async function withClient(
  p: Parsed,
  fn: (conn: Connected) => Promise<number>,
  bounded = true,
  opts: { needsWorkerFor?: string } = {},
): Promise<number> {
  const conn = await connect(p);
  const ms = timeoutMs(p);
  try {
    // A call a worker must answer, on a running session nobody polls for: say so now, not after --timeout.
    if (opts.needsWorkerFor) {
      const idle = await idleTaskQueue(conn, opts.needsWorkerFor);
      if (idle) throw failure(`session ${opts.needsWorkerFor} is running, but ${noWorkerMessage(idle)}`);
    }
    return await (bounded ? conn.client.connection.withDeadline(Date.now() + ms, () => fn(conn)) : fn(conn));
  } catch (err) {
    if (err instanceof CliError) throw err;
    if (isUnansweredRead(err)) {
      const idle = p.positionals[0] ? await idleTaskQueue(conn, p.positionals[0]).catch(() => undefined) : undefined;
      if (idle) throw failure(`no answer: ${noWorkerMessage(idle)}`);
      throw failure(
        `no answer within ${ms / 1000} s: sessions answer through a worker, so start one for the session's task queue with \`fh worker --agents <module>\` (or raise --timeout)`,
      );
    }
    throw asCliError(err, { settings: conn.settings });
  } finally {
    await conn.close().catch(() => undefined);
  }
}

/** The task queue of a running session (workflow) that no worker polls; undefined otherwise or when unknown. */
export async function idleTaskQueue(conn: Connected, id: string): Promise<string | undefined> {
  const described = await conn.client.workflow
    .getHandle(id)
    .describe()
    .catch(() => undefined);
  if (!described || described.status.name !== 'RUNNING') return undefined;
  return (await workerPolls(conn.client, conn.settings.namespace, described.taskQueue)) === false ? described.taskQueue : undefined;
}

export function handleOf(conn: Connected, id: string): SessionHandle {
  return sessions().getSession(conn.client, id);
}

export function out(io: Io, p: Parsed, json: unknown, text: string): number {
  if (flag(p, 'json')) printJson(io, json);
  else io.out(text);
  return EXIT.OK;
}

