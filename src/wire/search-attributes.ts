/**
 * The custom search attributes of this SDK: what a Temporal namespace must have registered so that agent runs and
 * sessions can be listed and filtered through visibility, and the typed keys and pairs workflows and clients write
 * them with. Workflow-safe (imports only @temporalio/common): the session workflow upserts through
 * {@link sessionSearchAttributeUpdates}, the client starts with {@link sessionSearchAttributes} and lists with the
 * same keys, so a name or a type cannot drift between the two sides.
 */
import {
  defineSearchAttributeKey,
  SearchAttributeType,
  type SearchAttributePair,
  type SearchAttributeUpdatePair,
} from '@temporalio/common';

/** The type names `temporal operator search-attribute create --type` and `start-dev --search-attribute` accept. */
export type SearchAttributeTypeLabel = 'Keyword' | 'Text' | 'Int' | 'Double' | 'Bool' | 'Datetime' | 'KeywordList';

export const FH_AGENT = defineSearchAttributeKey('FhAgent', SearchAttributeType.KEYWORD);
/** What a workflow is: `'session'` for session workflows (one-shot agent runs do not set it). */
export const FH_KIND = defineSearchAttributeKey('FhKind', SearchAttributeType.KEYWORD);
export const FH_STATUS = defineSearchAttributeKey('FhStatus', SearchAttributeType.KEYWORD);
/** Full-text: visibility matches whole words of it, not substrings. */
export const FH_TITLE = defineSearchAttributeKey('FhTitle', SearchAttributeType.TEXT);
/** Each label as `name`, and when it has a value also as `name=value` (see {@link labelKeywords}). */
export const FH_LABELS = defineSearchAttributeKey('FhLabels', SearchAttributeType.KEYWORD_LIST);
export const FH_FLAGGED = defineSearchAttributeKey('FhFlagged', SearchAttributeType.BOOL);
export const FH_ARCHIVED = defineSearchAttributeKey('FhArchived', SearchAttributeType.BOOL);
export const FH_MODEL = defineSearchAttributeKey('FhModel', SearchAttributeType.KEYWORD);
export const FH_LAST_MESSAGE_AT = defineSearchAttributeKey('FhLastMessageAt', SearchAttributeType.DATETIME);

/** The value of {@link FH_KIND} on session workflows. */
export const SESSION_KIND = 'session';

const TYPE_LABELS: Record<SearchAttributeType, SearchAttributeTypeLabel> = {
  KEYWORD: 'Keyword',
  TEXT: 'Text',
  INT: 'Int',
  DOUBLE: 'Double',
  BOOL: 'Bool',
  DATETIME: 'Datetime',
  KEYWORD_LIST: 'KeywordList',
};

const ALL_KEYS = [FH_AGENT, FH_KIND, FH_STATUS, FH_TITLE, FH_LABELS, FH_FLAGGED, FH_ARCHIVED, FH_MODEL, FH_LAST_MESSAGE_AT];

/**
 * Every custom search attribute the SDK uses, by name: registered by every server the project starts (`fh server`,
 * `npm run server`, the test setup, temporal-docker/) and to be created on any other namespace
 * (`temporal operator search-attribute create --name <name> --type <type>`). FhAgent stays first: `fh run` reads it
 * as the agent attribute.
 */
export const FH_SEARCH_ATTRIBUTES: Readonly<Record<string, SearchAttributeTypeLabel>> = Object.freeze(
  Object.fromEntries(ALL_KEYS.map((k) => [k.name, TYPE_LABELS[k.type]])),
);

/**
 * Labels as FhLabels keywords and back: each label as `name`, and when it has a value also as
 * `name=value`, so visibility matches "has label" and "has label with value" with one clause each.
 * One encoding, in the session catalogue's own module.
 */
export { labelKeywords, labelsFromKeywords as decodeLabelKeywords } from '../core/sessions/labels';
export type LabelValue = string | number | boolean | null;

/** What a session's search attributes are made of (labels already encoded with {@link labelKeywords}). */
export interface SessionSearchFields {
  agent: string;
  status: string;
  title?: string;
  labels: string[];
  flagged: boolean;
  archived: boolean;
  model?: string;
  /** Epoch milliseconds. */
  lastMessageAt?: number;
}

/** Search attributes for `typedSearchAttributes` when a session workflow starts; absent values are left out. */
export function sessionSearchAttributes(s: SessionSearchFields): SearchAttributePair[] {
  return sessionSearchAttributeUpdates(s).filter((p): p is SearchAttributePair => p.value !== null);
}

/**
 * The same attributes as updates for `upsertSearchAttributes` in workflow code: absent values become `null`, which
 * unsets them (a title cleared, a model no longer known). An empty label list also unsets FhLabels.
 */
export function sessionSearchAttributeUpdates(s: SessionSearchFields): SearchAttributeUpdatePair[] {
  return [
    { key: FH_KIND, value: SESSION_KIND },
    { key: FH_AGENT, value: s.agent },
    { key: FH_STATUS, value: s.status },
    { key: FH_TITLE, value: s.title === undefined || s.title === '' ? null : s.title },
    { key: FH_LABELS, value: s.labels.length > 0 ? [...s.labels] : null },
    { key: FH_FLAGGED, value: s.flagged },
    { key: FH_ARCHIVED, value: s.archived },
    { key: FH_MODEL, value: s.model === undefined || s.model === '' ? null : s.model },
    { key: FH_LAST_MESSAGE_AT, value: s.lastMessageAt === undefined ? null : new Date(s.lastMessageAt) },
  ];
}
