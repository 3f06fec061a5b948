/**
 * The one codec between our typed errors and Temporal failures. Activities and workflow code encode a
 * FabricError as an ApplicationFailure whose `type` is the error's `code` and whose details carry its
 * fields; workflow code and clients decode it back into the same class, wherever it sits in a cause
 * chain (WorkflowFailedError → ActivityFailure → ApplicationFailure, WorkflowUpdateFailedError → …).
 * Workflow-safe: imports only @temporalio/common.
 */
import { ApplicationFailure, TemporalFailure, TerminatedFailure } from '@temporalio/common';
import { errorCodeInfo } from '../core/error-codes';
import { FabricError, ModelCallError, RETRYABLE_MODEL_ERRORS, type ModelErrorKind } from '../core/errors';

type Fields = Record<string, unknown>;

function fieldsOf(err: FabricError): Fields {
  return Object.fromEntries(Object.entries(err).filter(([k]) => k !== 'message' && k !== 'stack' && k !== 'cause'));
}

/** Codes of transient conditions, retried like a retryable model error (a store that did not answer). */
const RETRYABLE_CODES: readonly string[] = ['STORE_UNREACHABLE'];

/**
 * A FabricError as an ApplicationFailure (other values pass through unchanged). Retryable model errors
 * stay retryable, with the provider's `retry-after` as the next retry delay, and so does STORE_UNREACHABLE;
 * everything else is final.
 */
export function encodeFailure(err: unknown): unknown {
  if (!(err instanceof FabricError)) return err;
  const retryable = (err instanceof ModelCallError && err.retryable) || RETRYABLE_CODES.includes(err.code);
  return ApplicationFailure.create({
    type: err.code,
    message: err.message,
    nonRetryable: !retryable,
    nextRetryDelay: err instanceof ModelCallError && retryable && err.retryAfterMs !== undefined ? err.retryAfterMs : undefined,
    details: [{ ...fieldsOf(err), name: err.name }],
  });
}

/**
 * Runs an update validator's checks: our typed errors leave it as failures the client can decode
 * (validators reject by throwing, and a plain error would say nothing typed).
 */
export function rejectWith(check: () => void): void {
  try {
    check();
  } catch (err) {
    throw encodeFailure(err);
  }
}

/** The error a client sees for a Temporal failure: the FabricError it carries (with the failure as its cause), else itself. */
export function typedFailure(err: unknown): unknown {
  const fabric = decodeFailure(err);
  if (!fabric) return err;
  (fabric as { cause?: unknown }).cause = err;
  return fabric;
}

/** The innermost ApplicationFailure in a failure's cause chain (the one that says what went wrong). */
export function innermostApplicationFailure(err: unknown): ApplicationFailure | undefined {
  let found: ApplicationFailure | undefined;
  for (let cur: unknown = err, depth = 0; cur && depth < 20; depth++) {
    if (cur instanceof ApplicationFailure) found = cur;
    cur = cur instanceof TemporalFailure || cur instanceof Error ? (cur as { cause?: unknown }).cause : undefined;
  }
  return found;
}

/**
 * The FabricError a failure carries, rebuilt as its class where the class matters to callers (model
 * errors: the session reasons about their kind), else a FabricError with the same code, message and
 * fields. undefined when the chain holds none of ours.
 */
export function decodeFailure(err: unknown): FabricError | undefined {
  if (err instanceof FabricError) return err;
  const failure = innermostApplicationFailure(err);
  if (!failure) return terminatedRun(err);
  if (!failure.type || !/^[A-Z][A-Z0-9_]*$/.test(failure.type)) return undefined;
  const fields = (failure.details?.[0] ?? {}) as Fields;
  const kind = fields.kind as ModelErrorKind | undefined;
  if (failure.type.startsWith('MODEL_') && kind && isModelErrorKind(kind)) {
    return new ModelCallError(kind, failure.message, numberOr(fields.status), numberOr(fields.retryAfterMs));
  }
  const revived = new FabricError(failure.type, failure.message);
  const { name, ...rest } = fields;
  Object.assign(revived, rest);
  if (typeof name === 'string') revived.name = name;
  return revived;
}

/**
 * A run terminated with a reason that starts with one of our codes (`STORE_BLOB_MISSING: …`, as the
 * worker's missing-blob reaper ends a run): that error. A termination carries only its reason, so the
 * code is read from there. Only a client's WorkflowFailedError whose cause is the termination counts:
 * workflow code (a child's termination) decodes as before, so no run takes another path on replay.
 */
function terminatedRun(err: unknown): FabricError | undefined {
  if (!(err instanceof Error) || err.name !== 'WorkflowFailedError') return undefined;
  const cause = (err as { cause?: unknown }).cause;
  return cause instanceof TerminatedFailure ? errorOfTermination(cause.message) : undefined;
}

/** The error a termination reason names (`CODE: …`, CODE registered), else undefined. */
export function errorOfTermination(reason: string | null | undefined): FabricError | undefined {
  const code = /^([A-Z][A-Z0-9_]*):/.exec(reason ?? '')?.[1];
  if (!code || !errorCodeInfo(code)) return undefined;
  const revived = new FabricError(code, reason!);
  const key = /payloads\/[0-9a-f]{64}/.exec(reason!)?.[0];
  if (key) Object.assign(revived, { key });
  return revived;
}

function isModelErrorKind(kind: string): kind is ModelErrorKind {
  return (
    (RETRYABLE_MODEL_ERRORS as readonly string[]).includes(kind) ||
    ['context_overflow', 'invalid_request', 'authentication', 'permission', 'not_found'].includes(kind)
  );
}

function numberOr(v: unknown): number | undefined {
  return typeof v === 'number' ? v : undefined;
}
