/**
 * Types that a public signature of this entry reaches (a method's result, an option's field, ...),
 * exported so that code compiled with `declaration: true` can name them (TS2883 otherwise).
 * test/unit/public-types.test.ts walks the built .d.ts and fails on any such type left unexported.
 */
export type { TranscriptRefPayload } from '../activities/contract';
export type { AppliedContextEdit } from '../core/context/strategy';
// The label value a session takes (no null; the search-attribute LabelValue above allows null).
export type { LabelValue as SessionLabelValue, Labels } from '../core/sessions/labels';
export type { PermissionMode, SessionSettings, SessionSettingsPatch } from '../core/sessions/settings';
export { PERMISSION_MODES } from '../core/sessions/settings';
export type { SearchAttributeTypeLabel } from '../wire/search-attributes';
export type { SessionReply, SessionResetResult } from '../wire/session-messages';
export type { CacheAccount } from './audit/cache';
export type { PayloadSources } from './audit/payloads';
export type { ActivityRecord, ActivityStatus, CancelRequestRecord, CompactionDecisionRecord, EndRecord, InputRecord, ModelCallRecord, ModelResolvedRecord, OffloadedValue, PromptRecord, RecordBase, RunStatus, SignalRecord, SummaryRecord, ToolCallRecord, UpdateRecord } from './audit/records';
export type { ConnectClientOptions, EnvconfigModule, SettingSource, TlsSettings } from './connection';
export type { History, LoadedHistory } from './history-file';
export type { WorkflowStatusName } from './history-state';
export type { ModelInputField } from './replay-inputs';
export type { ApprovalDecision, RunApproval } from '../wire/messages';
