/**
 * Types that a public signature of this entry reaches (a method's result, an option's field, ...),
 * exported so that code compiled with `declaration: true` can name them (TS2883 otherwise).
 * test/unit/public-types.test.ts walks the built .d.ts and fails on any such type left unexported.
 */
export type { LabelValue, Labels } from '../core/sessions/labels';
export type { PermissionMode, SessionSettings, SessionSettingsPatch } from '../core/sessions/settings';
export { PERMISSION_MODES } from '../core/sessions/settings';
export type { TranscriptRef } from '../wire/activity-contract';
export type { SearchAttributeTypeLabel } from '../wire/search-attributes';
export type { SessionReply, SessionResetResult } from '../wire/session-messages';
export type { ConnectClientOptions, EnvconfigModule, SettingSource, TlsSettings } from './connection';
export type { RunApproval } from '../wire/messages';
// The label value a session takes (no null; the search-attribute LabelValue allows null).
export type { LabelValue as SessionLabelValue } from '../core/sessions/labels';
export type { RepoIntro } from '../core/enhance/types';
export type { FlowRunSettings } from '../wire/flow-messages';
export type { LiveStreamDetails, SubAgentOrigin } from '../wire/stream';
export type { PlanDecision, PlanMode, PlanStatus, SessionPlan } from '../core/sessions/plans';
export { PLAN_MAX_CHARS, PLAN_MODES } from '../core/sessions/plans';
export type { RedisConnection } from '../activities/stream/redis-client';
