/** What every entry exports besides `agent` and `init` (all workflow-safe). */
import { z } from 'zod';

export { z as schema };
export { tool, implement } from './tools';
export type { ToolDeclaration, ToolImplementation, ToolExecute } from './tools';
export type { ToolSource } from './tool-registry';
export { builtinTools } from './builtin-tools';
export { isEvent } from './events';
export * from './public-types';
export type { CompactionHooks, BeforeCompactContext, BeforeCompactResult, AfterCompactContext, AfterCompactResult } from './context/compaction/hooks';
// Context hygiene (pure): capping and masking tool results, the evidence rule masking keeps.
export { capToolResult, maskStaleToolResults, toolPlaceholder, isVerificationEvidence, preservePredicate, InvalidToolResultOptionsError } from './context';
export type { CapOptions, CappedToolResult, MaskOptions, MaskResult, KeepWindow, PreservePredicate, ToolResultSettings } from './context';
// Ecosystem: other agents as tools (child workflows on Temporal), MCP servers' config types.
export { agentAsTool, SubAgentDepthError } from './sub-agents';
export type { AgentAsToolOptions, SubAgentOutcome } from './sub-agents';
export type { McpServerConfig, McpServerRef, McpStdioServer, McpHttpServer } from './mcp-config';
// What model calls cost (pure): the model table, a call's cost from its usage, and the budget's error.
export { builtinModelTable, callCostUsd, callCostBoundUsd, modelInfo, promptTokens } from './model-table';
export type { ModelInfo, ModelOverride, ModelOverrides, ModelPrices, ModelCapabilities, ModelTableRow } from './model-table';
export { BudgetExceededError, CostMeter, costText, usd } from './costs';
export type { CostBudget, MeterConfig, UsageCost } from './costs';
