/**
 * Errors users see. Each has a stable `code`; on Temporal the code is also the ApplicationFailure
 * `type`, so a client can tell failures apart without parsing messages.
 */
export class FabricError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** Agent input (or any options object) failed its schema. `field` is the dotted path of the first issue. */
export class InvalidInputError extends FabricError {
  constructor(
    readonly what: string,
    readonly field: string,
    readonly issues: Array<{ path: string; message: string }>,
  ) {
    super(
      'INVALID_INPUT',
      `Invalid ${what}: ${issues.map((i) => `${i.path || '(root)'}: ${i.message}`).join('; ')}`,
    );
  }
}

export class UnknownAgentError extends FabricError {
  constructor(
    readonly agent: string,
    readonly known: string[],
    /** On Temporal: the task queue of the run, whose workers lack the agent. */
    readonly taskQueue?: string,
    /** The client refused the run as it started (startAgent, startSession) and terminated it: nothing waits. */
    readonly refusedAtStart?: boolean,
  ) {
    super(
      'UNKNOWN_AGENT',
      taskQueue === undefined
        ? `Unknown agent '${agent}'. Registered agents: ${known.length ? known.join(', ') : '(none)'}.`
        : refusedAtStart
          ? `Unknown agent '${agent}' on task queue '${taskQueue}': the worker polling it registers ${known.length ? known.join(', ') : '(none)'}. ` +
            `The run was refused as it started (terminated): start one of those, or first a worker that has '${agent}'.`
          : `Unknown agent '${agent}' on task queue '${taskQueue}': this worker registers ${known.length ? known.join(', ') : '(none)'}. ` +
            `The workflow task is retried, so a worker on '${taskQueue}' that has '${agent}' takes the run; start one (or terminate the run).`,
    );
  }
}

export class MissingApiKeyError extends FabricError {
  constructor() {
    super(
      'MISSING_API_KEY',
      'No Anthropic API key: set ANTHROPIC_API_KEY (on the worker, for Temporal runs) or pass { apiKey } to invoke()/createWorker().',
    );
  }
}

/**
 * One prompt took more steps (tool rounds) than maxSteps. The code and the `maxTurns` field keep their
 * 0.4.0 names: they travel in Temporal failures, which clients of either release decode.
 */
export class MaxStepsExceededError extends FabricError {
  constructor(readonly maxTurns: number) {
    super('MAX_TURNS_EXCEEDED', `The model kept calling tools past maxSteps (${maxTurns}); raise maxSteps or give it a clearer task.`);
  }
  get maxSteps(): number {
    return this.maxTurns;
  }
}

/** @deprecated since 0.5.0: MaxStepsExceededError (a tool round is a step; a turn is a whole prompt). */
export { MaxStepsExceededError as MaxTurnsExceededError };

export class OutputParseError extends FabricError {
  constructor(message: string) {
    super('OUTPUT_PARSE', message);
  }
}

/** Kinds of model-call failure, decided once where the provider's error is seen. */
export type ModelErrorKind =
  | 'context_overflow'
  | 'invalid_request'
  | 'authentication'
  | 'permission'
  | 'not_found'
  | 'rate_limited'
  | 'overloaded'
  | 'server'
  | 'network';

export const RETRYABLE_MODEL_ERRORS: readonly ModelErrorKind[] = ['rate_limited', 'overloaded', 'server', 'network'];

export class ModelCallError extends FabricError {
  constructor(
    readonly kind: ModelErrorKind,
    message: string,
    readonly status?: number,
    readonly retryAfterMs?: number,
  ) {
    super(`MODEL_${kind.toUpperCase()}`, message);
  }
  get retryable(): boolean {
    return RETRYABLE_MODEL_ERRORS.includes(this.kind);
  }
}

export class ToolNotRegisteredError extends FabricError {
  constructor(
    readonly tool: string,
    readonly where: 'worker' | 'inline' = 'worker',
  ) {
    super(
      'TOOL_NOT_REGISTERED',
      where === 'worker'
        ? `Tool '${tool}' is declared by an agent but this worker has no implementation for it. Export implement(<its declaration>, execute) ` +
            `from a module the worker loads (createWorker({ tools: ['./tools'] }), FabricHarnessPlugin({ tools }), fh worker --tools <module>), ` +
            `or give the tool an execute and export it from the agent module (or list it in agent({ tools })).`
        : `Tool '${tool}' is a declaration without code: pass its implementation to invoke(input, { tools: [implement(<its declaration>, execute)] }), or give the tool an execute.`,
    );
  }
}

export class RuntimeUnavailableError extends FabricError {
  constructor(message: string) {
    super('RUNTIME_UNAVAILABLE', message);
  }
}

export class UnknownContextWindowError extends FabricError {
  constructor(readonly model: string) {
    super(
      'UNKNOWN_CONTEXT_WINDOW',
      `No context window known for model '${model}': the Models API did not say and it is not in the built-in table. Pass contextWindowTokens to init(), or disable compaction.`,
    );
  }
}

export class PayloadTooLargeError extends FabricError {
  constructor(
    readonly what: string,
    readonly bytes: number,
    readonly limit: number,
  ) {
    super('PAYLOAD_TOO_LARGE', `${what} is ${bytes} bytes, over the ${limit}-byte payload limit; it was not scheduled.`);
  }
}

/** A prompt or compaction named a session the run does not have. */
export class UnknownSessionError extends FabricError {
  constructor(
    readonly sessionId: string,
    readonly known: string[],
  ) {
    super('UNKNOWN_SESSION', `Unknown session '${sessionId}'. This run's sessions: ${known.length ? known.join(', ') : '(none yet)'}.`);
  }
}

/** A client prompt reached a run that does not answer prompts (now, or any more). */
export class NotServingError extends FabricError {
  constructor(readonly reason: 'returned' | 'never-served' | 'serving-ended') {
    super('NOT_SERVING', NOT_SERVING_MESSAGES[reason]);
  }
}

const NOT_SERVING_MESSAGES = {
  returned: "This run's `run` has returned: it answers no more prompts. Start a new run (or a run that calls harness.serve()).",
  'never-served':
    "This run returned without calling harness.serve(), so the prompt was not run. Only a run that calls harness.serve() answers client prompts.",
  'serving-ended': "This run has stopped serving prompts (closed, or idle past its timeout). Start a new run to continue.",
} as const;

/** A prompt over the size a workflow update may carry. */
export class PromptTooLargeError extends FabricError {
  constructor(
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(
      'PROMPT_TOO_LARGE',
      `The prompt is ${bytes} bytes, over the ${limit}-byte limit for a prompt. Send large content another way: ` +
        'write it to a file in the sandbox and ask the agent to read it (read_file), or pass it in the run input by reference.',
    );
  }
}

/** The user interrupted the running turn (its model call, tool or approval wait was cancelled). */
export class InterruptedError extends FabricError {
  constructor(message = 'The turn was interrupted by the user') {
    super('INTERRUPTED', message);
  }
}

/**
 * A turn paused where it waits only for approvals, so the session can continue as new; the next run
 * resumes it. Never reaches users: the session host catches it.
 */
export class TurnSuspendedError extends FabricError {
  constructor() {
    super('TURN_SUSPENDED', 'The turn was suspended to continue the session as a new run');
  }
}

/** The provider does not know this model (checked when a session switches to it). */
/**
 * A connection's provider SDK, an optional peer (e.g. @anthropic-ai/bedrock-sdk), is not installed
 * where it is needed (the worker, the inline process, or a test's fake).
 */
export class ProviderPackageMissingError extends FabricError {
  constructor(
    readonly packageName: string,
    readonly provider: string,
  ) {
    super('PROVIDER_PACKAGE_MISSING', `${provider} needs ${packageName}, an optional peer that is not installed: \`npm install ${packageName}\``);
  }
}

export class UnknownModelError extends FabricError {
  constructor(readonly model: string) {
    super('UNKNOWN_MODEL', `model: the provider does not know model '${model}'`);
  }
}
