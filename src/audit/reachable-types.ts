/**
 * Types that a public signature of this entry reaches (a method's result, an option's field, ...),
 * exported so that code compiled with `declaration: true` can name them (TS2883 otherwise).
 * test/unit/public-types.test.ts walks the built .d.ts and fails on any such type left unexported.
 */
export type { AppliedContextEdit } from '../core/context/strategy';
export type { RecordBase } from './records';
export type { CacheAccount } from './cache';
export type { History, LoadedHistory } from './history-file';
export type { WorkflowStatusName } from './history-state';
export type { PayloadSources } from './payloads';
export type { ModelInputField } from './replay-inputs';
export type { SubAgentRecord } from './records';
