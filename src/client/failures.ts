/**
 * What a failed run failed of, in one line. A workflow failure from @temporalio/client is a chain:
 * WorkflowFailedError → (ActivityFailure → …) → ApplicationFailure { type: 'MODEL_AUTHENTICATION' }.
 * The generic wrappers ("Activity task failed") say nothing a user can act on; the innermost failure
 * with a `type` (our error codes) does. `describeFailure` finds it.
 */

/** A failure reduced to what a person (or a script) needs. */
export interface FailureDescription {
  /** The error code (ApplicationFailure type), e.g. MODEL_AUTHENTICATION, MISSING_API_KEY; undefined when none. */
  code?: string;
  /** The message of the failure that carries the code (else of the innermost failure). */
  message: string;
  /** What wrapped it, outermost first, e.g. ["Activity task failed (activity fhResolveModel)"]. */
  via: string[];
  /** Whether Temporal would retry it (ApplicationFailure.nonRetryable inverted); undefined when not said. */
  retryable?: boolean;
}

interface FailureLike {
  name?: string;
  message?: string;
  type?: string | null;
  nonRetryable?: boolean;
  activityType?: string;
  cause?: unknown;
}

/** Wrapper names that only say "something below failed". */
const WRAPPERS = new Set(['WorkflowFailedError', 'ActivityFailure', 'ChildWorkflowFailure', 'WorkflowUpdateFailedError']);
const MAX_DEPTH = 10;

/**
 * Finds the innermost failure with a type (an ApplicationFailure carrying one of our error codes)
 * in an error's cause chain; without one, the innermost failure that is not a mere wrapper.
 */
export function describeFailure(err: unknown): FailureDescription {
  const chain: FailureLike[] = [];
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < MAX_DEPTH; e = (e as FailureLike).cause, depth++) {
    chain.push(e as FailureLike);
  }
  if (chain.length === 0) return { message: String(err), via: [] };
  let typedAt = -1;
  for (let i = chain.length - 1; i >= 0; i--) {
    if (chain[i]!.type) {
      typedAt = i;
      break;
    }
  }
  let at = typedAt;
  if (at < 0) {
    at = chain.length - 1;
    while (at > 0 && WRAPPERS.has(chain[at]!.name ?? '')) at--;
  }
  const found = chain[at]!;
  const via = chain.slice(0, at).map(wrapperText).filter((s): s is string => s !== undefined);
  return {
    ...(found.type ? { code: found.type } : {}),
    message: found.message || found.name || 'failed',
    via,
    ...(typeof found.nonRetryable === 'boolean' ? { retryable: !found.nonRetryable } : {}),
  };
}

/**
 * "Anthropic API 401: invalid x-api-key [MODEL_AUTHENTICATION] (in activity fhResolveModel)": the
 * same "message [type]" shape as the audit's failure lines.
 */
export function failureLine(d: FailureDescription): string {
  const first = (d.message.split('\n').find((l) => l.trim()) ?? d.message).trim().replace(/\.$/, '');
  const activity = d.via.map((v) => /\(activity (\w+)\)$/.exec(v)?.[1]).find(Boolean);
  return `${first}${d.code ? ` [${d.code}]` : ''}${activity ? ` (in activity ${activity})` : ''}`;
}

function wrapperText(e: FailureLike): string | undefined {
  if (e.name === 'WorkflowFailedError') return undefined; // the run itself: the caller says which
  const what = e.activityType ? ` (activity ${e.activityType})` : '';
  return `${e.message ?? e.name ?? 'failed'}${what}`;
}
