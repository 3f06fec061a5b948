/**
 * Every error code the SDK throws, in one registry. A code is stable: it is the `code` of a FabricError
 * and, on Temporal, the `type` of the ApplicationFailure that carries it (wire/failures encodes and
 * decodes them; the classes stay beside the modules that throw them, `in` says where). `exit` is how
 * `fh` exits on it (absent: 1, a failure) and `hint` what it prints next.
 * test/unit/error-codes.test.ts checks that the codes thrown in src/ and these are the same set.
 */
import type { ModelErrorKind } from './errors';

export interface ErrorCodeInfo {
  /** The module whose class (or code) throws it, under src/. */
  in: string;
  means: string;
  exit?: 'usage' | 'not-found';
  hint?: string;
}

/** The codes of model-call failures: `MODEL_` and the failure's kind (ModelCallError). */
export type ModelErrorCode = `MODEL_${Uppercase<ModelErrorKind>}`;

export const ERROR_CODES = {
  // Input and definitions
  INVALID_INPUT: { in: 'core/errors', means: 'an input or options object failed its schema; `field` names the first issue', exit: 'usage' },
  INVALID_AGENT_DEFINITION: { in: 'core/agent', means: 'agent() was given something that is not an agent definition' },
  INVALID_TOOL_DEFINITION: { in: 'core/tools', means: 'tool() or implement() was given an invalid definition' },
  INVALID_TOOL_RESULT_OPTIONS: { in: 'core/context/errors', means: 'capping or masking options are invalid' },
  INVALID_COMPACTION_SETTINGS: { in: 'core/context/compaction/errors', means: 'compaction settings failed their schema' },
  DUPLICATE_TOOL_IMPLEMENTATION: { in: 'core/tool-registry', means: 'two implementations were given for one tool name' },
  UNKNOWN_AGENT: {
    in: 'core/errors',
    means: 'no registered agent has this name',
    exit: 'usage',
    hint: "a run or session runs an agent its task queue's workers serve (`fh worker --agents <module>` prints them)",
  },
  OUTPUT_PARSE: { in: 'core/errors', means: "the model's final reply is not JSON matching the prompt's output schema" },
  // Runs and their conversations
  MISSING_API_KEY: { in: 'core/errors', means: "no API key for the connection's provider (Anthropic's, OpenAI's, …) where the model is called" },
  PROVIDER_PACKAGE_MISSING: {
    in: 'core/errors',
    means: "a connection's provider SDK (an optional peer, e.g. openai) is not installed where the model is called",
    hint: 'install the package the message names on the worker (or the inline process)',
  },
  BUDGET_EXCEEDED: {
    in: 'core/costs',
    means: "the next model call could take the session's cost past its budget (or its model has no price); it was not made",
    hint: 'raise the budget (session settings budget.maxCostUsd, or init({ budget })) and prompt again; docs/models.md',
  },
  MAX_TURNS_EXCEEDED: { in: 'core/errors', means: 'the model kept calling tools past maxSteps in one prompt (MaxStepsExceededError; the 0.4.0 code)' },
  TOOL_NOT_REGISTERED: { in: 'core/errors', means: 'a declared tool has no code where it runs' },
  RUNTIME_UNAVAILABLE: { in: 'core/errors', means: 'the feature needs a runtime this entry does not have' },
  UNKNOWN_CONTEXT_WINDOW: { in: 'core/errors', means: "compaction is on but the model's context window is unknown" },
  UNKNOWN_MODEL: { in: 'core/errors', means: 'the provider does not know this model (checked when a session switches to it)' },
  UNKNOWN_SESSION: { in: 'core/errors', means: 'a prompt or compaction named a conversation the run does not have' },
  NOT_SERVING: { in: 'core/errors', means: 'a prompt reached a run that does not answer prompts (now, or any more)' },
  RUN_NOT_FOUND: { in: 'client/terminate', means: 'no run has this workflow id in the namespace', exit: 'not-found', hint: 'list runs with `fh list`' },
  BROKER_CLOSED: { in: 'client/stream/broker-transport', means: 'a live broker client was used after close(); readers on it fall back to Temporal' },
  CONNECTION_CLOSED: { in: 'client/connection-close', means: "the client's connection was closed while a call (a run's result()) waited; the run goes on" },
  RUN_CLOSED: { in: 'client/terminate', means: 'the run has ended already (completed, failed, terminated, …): it cannot be terminated', hint: '`fh history <id>` shows how it ended' },
  PAYLOAD_TOO_LARGE: { in: 'core/errors', means: 'a value is over the size a Temporal payload may carry' },
  PROMPT_TOO_LARGE: { in: 'core/errors', means: 'a prompt is over the size a workflow update may carry' },
  ATTACHMENT_TOO_LARGE: { in: 'core/attachments', means: "an attachment (or a message's attachments together) is over the provider's or our limit: bytes, PDF pages or count; `field` names it", exit: 'usage' },
  ATTACHMENT_UNSUPPORTED_TYPE: { in: 'core/attachments', means: 'an attachment is of a media type a model request cannot carry, or its bytes are not of the type it names', exit: 'usage' },
  ATTACHMENT_MISSING: { in: 'activities/stores/attachments', means: "an attachment's bytes are not in the worker's store (the client wrote them to another store)", hint: 'the client and the workers must use one store (connectClient({ store }) / FH_STORE_DIR)' },
  INTERRUPTED: { in: 'core/errors', means: 'the user interrupted the running turn' },
  TURN_SUSPENDED: { in: 'core/errors', means: 'a turn paused for approvals so the session can continue as new (never reaches users)' },
  MODEL_REFUSAL: { in: 'core/replies', means: 'the model refused to answer (stop reason refusal)' },
  CONTEXT_WINDOW_EXCEEDED: { in: 'core/context/compaction/errors', means: 'the conversation does not fit the context window and could not be made to' },
  // Sessions (the session workflow and inline sessions)
  INVALID_LABEL: { in: 'core/sessions/errors', means: 'a session label key or value is invalid', exit: 'usage' },
  INVALID_STATUS: { in: 'core/sessions/errors', means: 'a session status is not one of the known ones', exit: 'usage' },
  SETTING_LOCKED: { in: 'core/sessions/errors', means: 'the session setting cannot change after the session started', exit: 'usage' },
  SESSION_NOT_FOUND: { in: 'core/sessions/host-errors, inline/session-errors', means: 'no session has this id', exit: 'not-found', hint: 'list sessions with `fh session list --all`' },
  SESSION_EXISTS: { in: 'client/session-handle, inline/session-errors', means: 'a session with this id exists already', hint: 'choose another --id, or leave it out for a generated one' },
  SESSION_CLOSED: { in: 'core/sessions/host-errors', means: 'the session was closed and takes no more messages' },
  SESSION_BUSY: { in: 'workflows/session/edits', means: 'the session is answering a message and cannot do this now' },
  SESSION_RESTORING: { in: 'workflows/session/host', means: 'a session run that continued as new is still loading its conversation (the client asks again)' },
  SESSION_NO_HARNESS: { in: 'workflows/session/host', means: "the session's agent has not started its conversation yet" },
  INVALID_FORK_POINT: { in: 'core/sessions/host-errors', means: 'a fork named an entry the conversation does not have', exit: 'usage', hint: '`fh session show <id>` numbers the messages' },
  UNKNOWN_TOOL_CALL: { in: 'core/sessions/host-errors', means: 'an approval named a tool call that is not pending', exit: 'usage', hint: '`fh session show <id>` lists the pending approvals' },
  ALREADY_DECIDED: { in: 'core/sessions/host-errors, core/sessions/plans', means: 'an approval named a tool call (or a decision a plan) that was already approved or denied' },
  UNKNOWN_PLAN: { in: 'core/sessions/plans', means: 'a plan decision named a plan that is not waiting for one', exit: 'usage', hint: '`fh session plans <id>` lists the plans' },
  PLAN_TOO_LARGE: { in: 'core/sessions/plans', means: 'a submitted plan is longer than PLAN_MAX_CHARS (the model reads it and shortens the plan)' },
  UNKNOWN_MESSAGE: { in: 'core/sessions/host-errors', means: 'an edit or cancel named a queued message the session does not have', exit: 'usage' },
  IDEMPOTENCY_KEY_REUSED: { in: 'core/sessions/host-errors', means: 'a message id was sent again with other text (a message id names one message for the session\'s life)', exit: 'usage', hint: 'send other text with another --message-id' },
  NO_WORKER: {
    in: 'client/session-updates, client/run-queries',
    // No hint: the message names the worker to start, with the task queue.
    means: "no worker polls the session's (or the agent run's) task queue, so a query to it could not be answered; it answers when one comes",
  },
  WAIT_ENDED: { in: 'client/session-updates, client/run-updates, client/run-queries', means: "the caller's timeout or abort signal ended a wait for a session or an agent run (a send: the message stays in the session, reattach with its message id; a run's prompt: send it again with its update id; a read: nothing changed)" },
  UNKNOWN_CONNECTION: { in: 'core/sessions/host-errors', means: 'a run or session names a model connection this worker (or inline process) does not have; the message lists the ones it has' },
  CONNECTION_LOCKED: { in: 'core/sessions/errors', means: "a session's model connection cannot change after its first message (the model can)", exit: 'usage' },
  CAPABILITY_UNSUPPORTED: { in: 'activities/models/capabilities', means: "a request asked for something its connection's provider cannot do (server-side context editing, thinking, exact token counts)", exit: 'usage' },
  DELETE_PENDING: { in: 'client/session-handle', means: 'a delete was asked while the session still has work pending' },
  INVALID_SESSION_ID: { in: 'inline/session-errors', means: 'an inline session id is not a safe file name' },
  INVALID_SESSION_HEADER: { in: 'inline/session-errors', means: "an inline session file's header is invalid" },
  SESSION_FILE_CORRUPT: { in: 'inline/session-errors', means: 'an inline session file cannot be read back' },
  SESSION_AGENT_MISMATCH: { in: 'inline/session-errors', means: 'an inline session was opened with another agent than the one it was made with' },
  SEARCH_ATTRIBUTES_MISSING: { in: 'client/search-attribute-errors', means: "the namespace lacks the session search attributes (run `fh server` or register them)" },
  // Flows (runs of stages from a DOT graph)
  FLOW_DOT_SYNTAX: { in: 'core/flows/errors', means: "a flow's DOT text does not parse (`line`, `column`)", exit: 'usage' },
  FLOW_INVALID: { in: 'core/flows/errors', means: 'a flow graph cannot run: `element` names the node or edge, `line` where it is', exit: 'usage' },
  FLOW_CONDITION: { in: 'core/flows/errors', means: 'an edge condition does not parse', exit: 'usage' },
  FLOW_RESERVED_KEY: { in: 'core/flows/errors', means: 'an initial context value names a key the engine sets (internal.*, graph.*, outcome, …)', exit: 'usage' },
  FLOW_UNKNOWN_CHOICE: { in: 'core/flows/errors', means: 'a gate was answered with a choice it does not offer (the gate keeps waiting)', exit: 'usage', hint: '`fh flow show <id>` lists the choices' },
  FLOW_NOT_WAITING: { in: 'core/flows/errors, workflows/flow-workflow', means: 'a gate answer reached a flow that waits at no gate, or at another one', exit: 'usage' },
  FLOW_GATE_AMBIGUOUS: { in: 'core/flows/errors', means: 'a gate answer named no gate or branch while gates wait in several parallel branches', exit: 'usage', hint: '`fh flow gate <id> <choice> --branch <node>`' },
  FLOW_STAGE_FAILED: { in: 'core/flows/errors', means: 'a stage failed and no edge routes the failure', hint: 'resume it with `fh flow resume <id>`' },
  FLOW_STEP_LIMIT: { in: 'core/flows/errors', means: "a flow ran max_steps stages without reaching an exit" },
  FLOW_NO_ROUTE: { in: 'core/flows/errors', means: 'no edge out of a stage matched and none is unconditioned' },
  FLOW_NOT_RESUMABLE: { in: 'client/flows', means: 'only a failed flow run resumes' },
  FLOW_NOT_FOUND: { in: 'board/flow-source', means: 'the board was asked for a flow run that its namespace does not have', exit: 'not-found' },
  // The Node side (src/activities/): stores, sandbox, worker modules
  STORE_BLOB_MISSING: {
    in: 'activities/stores/store-errors',
    means: 'a stored transcript, tool result or payload is gone from the store (its "not found" proves it)',
    hint: 'the run (or session turn) has ended with it; a worker pointed at the wrong store is the usual cause: give every worker and client the same one, then start again (docs/deploying.md, "When a blob is missing")',
  },
  STORE_UNREACHABLE: { in: 'activities/stores/store-errors', means: 'the store did not answer for a blob (network, timeout): the task is retried until it does' },
  STORE_INTEGRITY: { in: 'activities/stores/store-errors', means: 'a stored blob does not hash to its name (it was altered)' },
  BUNDLE_INVALID: { in: 'audit/bundle/errors', means: 'the file is not an audit bundle (not a tar, no manifest, a manifest of another shape)', exit: 'usage' },
  BUNDLE_TAMPERED: { in: 'audit/bundle/errors', means: "an audit bundle's part, history event or manifest does not match its recorded SHA-256 or hash chain" },
  BUNDLE_INCOMPLETE: { in: 'audit/bundle/errors', means: 'an audit bundle lacks a store blob one of its histories refers to' },
  BUNDLE_SIGNATURE_INVALID: { in: 'audit/bundle/errors', means: "an audit bundle's Ed25519 signature does not verify, is missing, or was made with another key" },
  BUNDLE_REPLAY_DIVERGED: { in: 'audit/bundle/errors', means: 'a history in an audit bundle does not replay against the given agent code' },
  BUNDLE_EXPORT_FAILED: { in: 'audit/bundle/errors', means: 'an audit bundle could not be exported (a run or blob could not be read)' },
  STORE_UNSAFE: { in: 'activities/stores/store-errors', means: 'the store directory is not private to this user' },
  STORE_NOT_COLLECTABLE: { in: 'activities/stores/store-gc', means: 'this store cannot list its blobs, so garbage cannot be collected' },
  SANDBOX_MISSING: { in: 'activities/tools/sandbox/sandbox-path', means: "a tool's working directory does not exist (it is never created)", exit: 'usage' },
  S3_CLIENT_MISSING: { in: 'activities/stores/s3-store', means: 'S3Store needs @aws-sdk/client-s3, an optional dependency that is not installed' },
  SANDBOX_ESCAPE: { in: 'activities/tools/sandbox/sandbox-path', means: "a tool path resolves outside the tool's working directory" },
  SANDBOX_UNAVAILABLE: { in: 'activities/tools/tool-env', means: 'the configured sandbox wrapper cannot run on this machine' },

  MODULE_LOAD_FAILED: { in: 'worker/load-modules', means: 'an agent or tool module given to the worker failed to load' },
  // The board (fh board)
  BOARD_REMOTE_BIND: { in: 'board/server', means: 'the board was asked to bind a non-loopback address without allowRemote', exit: 'usage', hint: 'pass --allow-remote and --token to expose it' },
  BOARD_BAD_JSON: { in: 'board/server', means: "a board request's body is not the JSON it needs" },
  REPLAY_UNAVAILABLE: { in: 'board/source', means: 'the replay check needs the agents module(s)', exit: 'usage', hint: 'start the board with --agents <module>' },
  // Ecosystem: MCP servers, sub-agents, their worktrees
  MCP_SERVER_UNKNOWN: { in: 'core/mcp', means: 'init({ mcp }) named a server the worker (or invoke) did not register' },
  MCP_UNAVAILABLE: { in: 'core/mcp', means: 'an MCP server could not be started or reached to list its tools' },
  SUBAGENT_DEPTH_EXCEEDED: { in: 'core/sub-agents', means: 'a sub-agent would run deeper than its maxDepth (answered to the model as an error result)' },
  WORKTREE_FAILED: { in: 'activities/git/worktrees', means: "a sub-agent's git worktree could not be made or finished (the working directory must be in a git repository)" },
  // Model calls (ModelCallError, decided where the provider's error is seen; core/errors)
  MODEL_CONTEXT_OVERFLOW: { in: 'core/errors', means: 'the provider said the request does not fit the context window' },
  MODEL_INVALID_REQUEST: { in: 'core/errors', means: 'the provider refused the request as invalid' },
  MODEL_AUTHENTICATION: { in: 'core/errors', means: 'the API key was refused' },
  MODEL_PERMISSION: { in: 'core/errors', means: 'the API key may not use this model or feature' },
  MODEL_NOT_FOUND: { in: 'core/errors', means: 'the provider does not know the model' },
  MODEL_RATE_LIMITED: { in: 'core/errors', means: 'rate limited (retryable, after retry-after)' },
  MODEL_OVERLOADED: { in: 'core/errors', means: 'the provider is overloaded (retryable)' },
  MODEL_SERVER: { in: 'core/errors', means: "the provider's server failed (retryable)" },
  MODEL_NETWORK: { in: 'core/errors', means: 'the provider could not be reached (retryable)' },
} as const satisfies Record<string, ErrorCodeInfo>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** Every model-error code is registered (a compile-time check). */
export type ModelCodesRegistered = ModelErrorCode extends ErrorCode ? true : never;
const modelCodesRegistered: ModelCodesRegistered = true;
void modelCodesRegistered;

/** What the registry says of a code (undefined: not one of ours, e.g. from another release). */
export function errorCodeInfo(code: string): ErrorCodeInfo | undefined {
  return Object.prototype.hasOwnProperty.call(ERROR_CODES, code) ? (ERROR_CODES as Record<string, ErrorCodeInfo>)[code] : undefined;
}
