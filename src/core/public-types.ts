/** Types and errors both entrypoints export. */
export type { AgentDefinition, AgentConfig, AgentRunContext, InitFn, InvokeOptions } from './agent';
export type { Harness, InitOptions, SessionOptions, ServeOptions } from './harness';
export type { Conversation, Session, PromptOptions, CompactOptions, CompactResult, CompactionState, CompactionRecord } from './conversation';
export type { AgentEvent, AgentEventType, EventOf, EventPayloads, CompactionReason, EventListener } from './events';
export type { AttachmentBlock, Entry, UserEntry, AssistantEntry, ToolResultsEntry, SummaryEntry, Usage } from './entries';
export type { ToolDefinition, ToolContext } from './tools';
export type { CompactionSettings, ResolvedCompactionSettings } from './context/settings';
export type { ContextBudget } from './budget';
export {
  FabricError,
  InvalidInputError,
  UnknownAgentError,
  MissingApiKeyError,
  ProviderPackageMissingError,
  MaxStepsExceededError,
  MaxTurnsExceededError,
  ModelCallError,
  OutputParseError,
  ToolNotRegisteredError,
  RuntimeUnavailableError,
  UnknownContextWindowError,
  PayloadTooLargeError,
} from './errors';
export { ContextWindowExceededError, InvalidCompactionSettingsError } from './context/compaction/errors';
export { ModelRefusalError } from './replies';
export type { AttachmentRef, AttachmentMediaType } from './attachments';
