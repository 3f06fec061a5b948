/**
 * Types that a public signature of this entry reaches (a method's result, an option's field, ...),
 * exported so that code compiled with `declaration: true` can name them (TS2883 otherwise).
 * test/unit/public-types.test.ts walks the built .d.ts and fails on any such type left unexported.
 */
export type { StrictAgentConfig } from './core/agent';
export type { BuiltinToolName } from './core/builtin-tools';
export type { SummarizerUsage } from './core/compaction/controller';
export type { CompactionDecision, DecisionFacts, LastCompaction } from './core/compaction/decide';
export type { SummaryPlan } from './core/compaction/summary-plan';
export { READ_ARTIFACT_ALIAS } from './core/context/artifacts';
export type { LadderStep } from './core/context/ladder';
export { LADDER_STEPS } from './core/context/ladder';
export type { ContextMemory, MemoryFile, MemoryFlushRequest, MemoryPort } from './core/context/memory';
export type { CompactionStrategy, ContextEdit, ContextManagementParams, ServerContextCapabilities, ServerContextUsage, StrategyDecision } from './core/context/strategy';
export type { PreserveSettings } from './core/context/tool-result-settings';
export type { AssistantBlock, CompactionBlock, FileOperations, RedactedThinkingBlock, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock } from './core/entries';
export type { ModelErrorKind } from './core/errors';
export type { Flavour, PromptHost } from './core/harness';
export type { DecidedModelCall, ModelCallRequest, ModelCallResult, PromptCache, ResolveModelOptions, ResolvedModel, RuntimePorts, SummarizeRequest, ThinkingBudget, ToolCallRequest, ToolCallResult } from './core/ports';
export type { ResetOptions, ResetResult, SessionConfig, SessionUsage, SuspendedTurn, ToolAuthorizer, ToolCall, ToolVerdict } from './core/session';
export type { SessionAgentConfig } from './core/sessions/config';
export type { ThinkingLevel } from './core/sessions/settings';
export { THINKING_LEVELS } from './core/sessions/settings';
export type { PromptCompactionOverrides } from './core/settings';
export type { ThinkingOption } from './core/thinking';
export type { EstimateMethod } from './core/tokens';
export type { ToolConfig } from './core/tools';
export type { ToolSpec } from './core/tools-spec';
export type { SessionFs } from './inline/session-files';
export type { ApprovalAnswer, ApprovalRequest } from './core/agent';
