export { startAgent, getAgentHandle, DEFAULT_TASK_QUEUE, AGENT_MEMO_KEY, type StartAgentOptions } from './start';
export { AgentHandle, AGENT_QUERIES, COMPACT_UPDATE, PROMPT_UPDATE, CLOSE_SIGNAL } from './agent-handle';
export {
  FabricHarnessClientPlugin,
  // The name earlier releases exported from here: the client half of the plugin (data converter only).
  FabricHarnessClientPlugin as FabricHarnessPlugin,
  type FabricHarnessClientPluginOptions,
} from './plugin';
export type { AgentUsage, CompactRequest, PromptRequest } from '../wire/messages';
export { decodeFailure } from '../wire/failures';
export type { PromptOptions } from './agent-handle';
/**
 * @deprecated since 0.5.0: the history tools moved to `@fabric-harness/sdk/audit` (they sit above the
 * worker: replay bundles the workflows). These re-exports stay through 0.6.x and go in 0.7.0.
 */
export {
  replayHistory,
  type ReplayOptions,
  type ReplayResult,
  type ReplayCommand,
  loadHistory,
  parseHistoryJSON,
  historyToJSONString,
  readHistoryFile,
  HistoryFormatError,
  auditTranscript,
  renderAuditMarkdown,
  type AuditOptions,
  type AuditRecord,
  type AuditRun,
  type AuditTranscript,
  stateFromHistory,
  type HistoryRunState,
  type ModelInputMismatch,
} from '../audit/index';
export { connectClient, resolveConnectionSettings, ConnectionSettingsError, ServerUnreachableError, type ConnectionFlags, type ConnectionSettings } from './connection';
export { describeFailure, failureLine, type FailureDescription } from './failures';
export {
  listSessions,
  sessionListQuery,
  sessionSummary,
  type SessionFilter,
  type SessionSummary,
} from './sessions-list';
export { SearchAttributesMissingError } from './search-attribute-errors';
export { FH_SEARCH_ATTRIBUTES, labelKeywords, decodeLabelKeywords, type LabelValue } from '../wire/search-attributes';
export {
  startSession,
  getSession,
  sendPrompt,
  SessionHandle,
  SessionExistsError,
  type StartSessionOptions,
  type SessionPromptOptions,
  type ForkOptions,
  type DeleteOptions,
  type EndSessionOptions,
} from './sessions';
export { storeAttachments, attachmentStore, mediaTypeOf, type PromptAttachment } from './attachments';
export {
  AttachmentTooLargeError,
  AttachmentUnsupportedTypeError,
  ATTACHMENT_LIMITS,
  ATTACHMENT_MEDIA_TYPES,
  type AttachmentRef,
  type AttachmentMediaType,
} from '../core/attachments';
export { collectStoreGarbage, type CollectGarbageOptions, type CollectGarbageReport } from './collect-garbage';
export { StoreNotCollectableError, type SweepReport } from '../activities/stores/store-gc';
// The stores, for clients that resolve offloaded payloads or collect garbage (neither loads the worker).
export { FileTranscriptStore, type TranscriptStore, type CollectableStore, type StoredBlob } from '../activities/stores/transcript-store';
export { S3Store, S3StoreRequestError, S3ClientMissingError, type S3StoreOptions, type S3ClientLike } from '../activities/stores/s3-store';
export { SessionClosedError, SessionNotFoundError, UnknownMessageError, UnknownToolCallError, InvalidForkPointError, IdempotencyKeyReusedError } from '../core/sessions/host-errors';
export { PlanTooLargeError, UnknownPlanError } from '../core/sessions/plans';
export type { ApprovalRequest, ApprovalsOptions } from './approvals';
export { NoWorkerError, UpdateWaitEndedError, WaitEndedError } from './session-updates';
export type { WaitLimits } from './wait-bounds';
export type { DecisionOptions } from './call-options';
export { RunWaitEndedError } from './run-updates';
export { RunNoWorkerError, RunReadEndedError } from './run-queries';
export { ConnectionClosedError } from './connection-close';
export { terminateRun, RunNotFoundError, RunClosedError } from './terminate';
export type { SessionInfo, SessionEdit, PendingApproval, WaitingApproval, QueuedMessage, SessionRecord, SessionWorktree } from '../wire/session-messages';
export { streamEventSchema, streamEnvelopeSchema, type StreamEvent, type StreamEnvelope, type StreamEventOf, type StreamEventType, type StreamPage, type StreamBlock } from '../wire/stream';
export { TemporalStreamTransport, type StreamTransport, type StreamSnapshot, type PageShare, type PollShare, type PollNews } from './stream/transport';
export { liveBroker, LiveBrokerClient, BrokerStreamTransport, BrokerClosedError } from './stream/broker-transport';
export type { LiveBrokerSettings } from '../wire/live-broker';
export { readStream, type ReadStreamOptions } from './stream/reader';
export { CallAssembly } from './stream/assembler';
export type { PromptStream } from './stream/prompt-stream';
export type { StreamOptions } from './stream/handles';
export { createTelemetry, type Telemetry, type TelemetryOptions } from '../activities/telemetry/telemetry-setup';
export { shareSession, type ShareOptions } from './share';
export { renderSharePage, escapeHtml, type SharePageInput } from '../core/share/page';
export { redactText, type RedactOptions } from '../core/share/redact';
export { enhancePrompt, type EnhanceOptions, type EnhanceResult } from './enhance';
export { startFlow, getFlowHandle, resumeFlow, loadFlow, FlowHandle, FlowNotResumableError, type StartFlowOptions } from './flows';
export type { FlowState, FlowResult, GateDecision, NodeState, WaitingGate } from '../wire/flow-messages';
export * from './reachable-types';
export { sessionChatHandler, toNodeHandler, turnChunks, UI_MESSAGE_STREAM_HEADERS, type SessionChatHandler, type SessionChatHandlerOptions, type OffsetChunk, type TurnChunksOptions, type UIMessageChunk } from './web-chat/index';
