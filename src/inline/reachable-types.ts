/**
 * Types that a public signature of this entry reaches (a method's result, an option's field, ...),
 * exported so that code compiled with `declaration: true` can name them (TS2883 otherwise).
 * test/unit/public-types.test.ts walks the built .d.ts and fails on any such type left unexported.
 */
export type { StrictAgentConfig } from '../core/agent';
export type { BuiltinToolName } from '../core/builtin-tools';
export { READ_ARTIFACT_ALIAS } from '../core/context/artifacts';
export type { CompactionDecision, DecisionFacts, LadderStep, LastCompaction } from '../core/context/compaction/decision';
export { LADDER_STEPS } from '../core/context/compaction/decision';
export type { SummarizerUsage } from '../core/context/compaction/runner';
export type { SummaryPlan } from '../core/context/compaction/summary-plan';
export type { GateCheck, GateCheckInput, GateCounts, GateMode, GateResult } from '../core/context/compaction/gate';
export type { FactKind } from '../core/context/compaction/facts';
export type { ContextMemory, MemoryFile, MemoryFlushRequest, MemoryPort } from '../core/context/memory';
export type { PromptCompactionOverrides } from '../core/context/settings';
export type { CompactionStrategy, ContextEdit, ContextManagementParams, ServerContextCapabilities, ServerContextUsage, StrategyDecision } from '../core/context/strategy';
export type { PreserveSettings } from '../core/context/tool-result-settings';
export type { ConversationConfig, ConversationUsage, ResetOptions, ResetResult, SuspendedTurn, ToolAuthorizer, ToolCall, ToolVerdict } from '../core/conversation-types';
export type { AssistantBlock, CompactionBlock, Fact, FileOperations, RedactedThinkingBlock, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock } from '../core/entries';
export type { ModelErrorKind } from '../core/errors';
export type { Flavour, PromptHost } from '../core/harness';
export type { DecidedModelCall, ModelCallRequest, ModelCallResult, PromptCache, ResolveModelOptions, ResolvedModel, RuntimePorts, SummarizeRequest, ThinkingBudget, ToolCallRequest, ToolCallResult } from '../core/ports';
export type { Eventually, Pending, Settled } from '../core/pending';
export type { SessionAgentConfig } from '../core/sessions/config';
export type { ThinkingLevel } from '../core/sessions/settings';
export { THINKING_LEVELS } from '../core/sessions/settings';
export type { ThinkingOption } from '../core/thinking';
export type { EstimateMethod } from '../core/tokens';
export type { ToolConfig } from '../core/tools';
export type { ToolSpec } from '../core/tools-spec';
export type { SessionFs } from './session-files';
export type { ApprovalAnswer, ApprovalRequest } from '../core/agent';
export type { McpToolInfo } from '../core/mcp';
export type { SubAgentSpec } from '../core/tools';
export { FIDELITIES, JOIN_POLICIES, NODE_KINDS } from '../core/flows/graph';
export type { JoinPolicy } from '../core/flows/graph';
export type { StageStatus } from '../core/flows/stage';
export type { ToolSandboxSettings, ModelConnectionOptions } from '../core/agent';
export type { DecisionSettings } from '../core/context/compaction/decision';
