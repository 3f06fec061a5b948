/**
 * Exit codes and the one-line error messages of `fh`. Every error a user can cause or meet says what
 * happened and what to do next, on one line.
 */
import { errorCodeInfo } from '../core/error-codes';

export const EXIT = {
  /** Success (replay: the code matches the history). */
  OK: 0,
  /** The run failed, a replay diverged, a query got no answer, the server refused the request. */
  FAILURE: 1,
  /** Unknown command or option, a missing argument, bad --input JSON, a malformed history file. */
  USAGE: 2,
  /** No such workflow, session, namespace or file. */
  NOT_FOUND: 3,
  /** The Temporal server cannot be reached. */
  UNREACHABLE: 4,
  /** `fh audit verify`: a part, event or reference of the bundle does not match (BUNDLE_TAMPERED, BUNDLE_INCOMPLETE, BUNDLE_INVALID). */
  BUNDLE_TAMPERED: 10,
  /** `fh audit verify`: the signature does not verify, is missing, or is another key's (BUNDLE_SIGNATURE_INVALID). */
  BUNDLE_SIGNATURE: 11,
  /** `fh audit verify --agents`: a history does not replay against the code (BUNDLE_REPLAY_DIVERGED). */
  BUNDLE_REPLAY: 12,
  /** Interrupted (Ctrl-C). */
  INTERRUPTED: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export const EXIT_CODES_HELP = [
  'Exit status:',
  '  0    success (replay: the current code makes the same decisions as the recorded run)',
  '  1    failure: the run failed, replay found a divergence, a query got no answer from a worker',
  '  2    usage error: unknown command or option, missing argument, bad --input JSON, malformed history file, invalid status/label/setting',
  '  3    not found: no such workflow, session, namespace or file',
  '  4    the Temporal server cannot be reached (check --address / TEMPORAL_ADDRESS, or start one with `fh server`)',
  '  10   fh audit verify: the bundle was altered or is incomplete (a part, event or reference does not match)',
  '  11   fh audit verify: the signature does not verify, is missing, or is not the given key\'s',
  '  12   fh audit verify --agents: a history does not replay against the code',
  '  130  interrupted (Ctrl-C)',
].join('\n');

/** An error with its exit code; `message` is the one line printed after `fh: `. */
export class CliError extends Error {
  constructor(
    readonly exitCode: ExitCode,
    message: string,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

export const usage = (message: string): CliError => new CliError(EXIT.USAGE, message);
export const notFound = (message: string): CliError => new CliError(EXIT.NOT_FOUND, message);
export const failure = (message: string): CliError => new CliError(EXIT.FAILURE, message);

/** gRPC status codes seen from the server. */
export const GRPC = { DEADLINE_EXCEEDED: 4, NOT_FOUND: 5, PERMISSION_DENIED: 7, FAILED_PRECONDITION: 9, UNAVAILABLE: 14, UNAUTHENTICATED: 16 } as const;

/** The gRPC status code of an error from @temporalio/client (directly or as its cause), if any. */
export function grpcCode(err: unknown): number | undefined {
  for (let e: any = err, depth = 0; e && depth < 4; e = e.cause, depth++) {
    if (typeof e.code === 'number') return e.code;
  }
  return undefined;
}

/**
 * The server's own reason under a client error that says only what failed ("Failed to query Workflow"):
 * the gRPC status details of its cause, if they add anything.
 */
export function serverReason(err: unknown): string | undefined {
  const details = grpcDetails(err);
  return details && !String((err as Error).message ?? '').includes(details) ? details : undefined;
}

/** The gRPC status details under a client error (its cause's), trimmed; '' when it has none. */
export function grpcDetails(err: unknown): string {
  const details = (err as { cause?: { details?: unknown } } | undefined)?.cause?.details;
  return typeof details === 'string' ? details.trim() : '';
}

/** Makes an error one line: the first line, trimmed, without a trailing period. */
export function oneLine(message: string): string {
  const line = message.split('\n').find((l) => l.trim()) ?? message;
  return line.trim().replace(/\s+/g, ' ');
}

/**
 * Exit status of a typed SDK error by its code, as the one registry of codes says (core/error-codes):
 * bad values a user typed are usage errors, a missing session is "not found", anything else (a closed
 * session, an interrupted turn) a failure.
 */
export function fabricErrorExit(code: string): { exitCode: ExitCode; hint?: string } {
  const info = errorCodeInfo(code);
  const exitCode = info?.exit === 'usage' ? EXIT.USAGE : info?.exit === 'not-found' ? EXIT.NOT_FOUND : EXIT.FAILURE;
  return info?.hint ? { exitCode, hint: info.hint } : { exitCode };
}
