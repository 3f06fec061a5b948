/**
 * `@fabric-harness/sdk/audit`: offline forensics over a run's Temporal history (audit, replay).
 *
 * Audit transcript: what an agent run did, read from its Temporal history alone (nothing is run).
 *
 * Every model call (fhModel: model, token usage, stop reason, what it answered), every tool call
 * (fhTool: arguments and result), every compaction decision (the fhDecideCompaction local-activity
 * markers: estimate, threshold, cut, compact or not), every summary (fhSummarize), and everything a
 * user sent (the workflow input, signals, updates such as a manual `fh.compact`, cancellation and
 * termination requests), each with its timestamp and event id.
 *
 * Payloads are decoded with the default payload converter (or the given data converter). Payloads
 * offloaded to external storage are resolved through `store` / the data converter's external storage;
 * without one (or when the blob is gone) they show as "[offloaded]".
 *
 * records.ts: the shapes; payloads.ts: decoding; collect.ts (with walk, activities, local-activities):
 * history events into records; markdown.ts: the Markdown view.
 */
export { auditTranscript, type AuditOptions } from './collect';
export { renderAuditMarkdown, truncate } from './markdown';
export { isOffloaded } from './payloads';
export type {
  ActivityRecord,
  ActivityStatus,
  AuditRecord,
  AuditRun,
  AuditTranscript,
  CancelRequestRecord,
  RunResetRecord,
  CompactionDecisionRecord,
  CompactionGateRecord,
  EndRecord,
  InputRecord,
  ModelCallRecord,
  ModelResolvedRecord,
  OffloadedValue,
  PromptRecord,
  RunStatus,
  SignalRecord,
  SummarizeCallRecord,
  SummaryRecord,
  TitleRecord,
  ToolCallRecord,
  UpdateRecord,
} from './records';
// The history tools: read, save and replay a run's Temporal history (replay loads the worker lazily).
export { replayHistory, type ReplayOptions, type ReplayResult, type ReplayCommand } from './replay';
export type { ModelInputMismatch } from './replay-inputs';
export { loadHistory, parseHistoryJSON, historyToJSONString, readHistoryFile, HistoryFormatError } from './history-file';
export { stateFromHistory, type HistoryRunState } from './history-state';
export { flowAudit, type FlowAuditEntry } from './flow-audit';
// Sealed audit bundles: export, verify, show and search runs offline (docs/audit.md).
export * from './bundle/index';
export * from './reachable-types';
