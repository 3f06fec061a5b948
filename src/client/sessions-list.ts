/**
 * Listing sessions through Temporal visibility: one `ListWorkflowExecutions` query over the SDK's search attributes
 * (src/wire/search-attributes.ts). It reads only what visibility returns (ids, times, typed search attributes): no
 * query, no history, no conversation is loaded, so listing costs the same for a session of 3 messages or of 3,000.
 */
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import { z } from 'zod';
import { parseWith } from '../core/validate';
import { missingSearchAttributes } from './search-attribute-errors';
import {
  decodeLabelKeywords,
  FH_AGENT,
  FH_ARCHIVED,
  FH_FLAGGED,
  FH_KIND,
  FH_LABELS,
  FH_LAST_MESSAGE_AT,
  FH_MODEL,
  FH_STATUS,
  FH_TITLE,
  SESSION_KIND,
  type LabelValue,
} from '../wire/search-attributes';
import { SESSION_APPROVALS_MEMO_KEY, type WaitingApproval } from '../wire/session-messages';

export interface SessionFilter {
  agent?: string;
  /** One status, or any of several. */
  status?: string | string[];
  /** Every one must be present: `'name'` (the label, any value) or `'name=value'` (that value, e.g. `priority=2`). */
  labels?: string[];
  flagged?: boolean;
  /** `true`: only archived sessions; `false` (the default): archived sessions are hidden. */
  archived?: boolean;
  /** With `archived` unset: archived and unarchived sessions both. */
  includeArchived?: boolean;
  /** Every word of it is a word of the title (whole words, case- and accent-insensitive: visibility's full text). */
  titleContains?: string;
  lastMessageBefore?: Date;
  lastMessageAfter?: Date;
  /** At most this many sessions, the newest first. */
  limit?: number;
  /** A raw visibility query, ANDed with the rest (e.g. `StartTime > '2025-01-01T00:00:00Z'`). */
  query?: string;
}

export interface SessionSummary {
  /** The session id (= workflow id). */
  id: string;
  runId: string;
  agent: string;
  title?: string;
  status: string;
  labels: Record<string, LabelValue>;
  flagged: boolean;
  archived: boolean;
  model?: string;
  lastMessageAt?: Date;
  startTime: Date;
  /** The workflow is open (it answers prompts); a closed session is listed with `running: false`. */
  running: boolean;
  /**
   * The tool calls it waits for a person to approve or deny (from its memo), for a running session with
   * any: the session is blocked on a person, not working.
   */
  waitingApprovals?: WaitingApproval[];
}

const waitingApprovalsMemo = z.array(z.object({ callId: z.string(), tool: z.string() })).min(1);

// Control characters have no business in a status, agent or label and some visibility backends mishandle them.
const CONTROL = /[\u0000-\u001f\u007f]/;
const term = (what: string) =>
  z
    .string()
    .min(1, `${what} must not be empty`)
    .max(1000, `${what} is longer than 1000 characters`)
    .refine((s) => !CONTROL.test(s), `${what} must not contain control characters`);
const labelTerm = term('a label').refine((s) => !s.startsWith('=') && !s.endsWith('='), {
  message: "a label is 'name' or 'name=value', with a non-empty name and value",
});
const date = z.date().refine((d) => !Number.isNaN(d.getTime()), 'must be a valid Date');

const filterSchema = z
  .object({
    agent: term('agent').optional(),
    status: z.union([term('status'), z.array(term('status')).min(1, 'status must list at least one status')]).optional(),
    labels: z.array(labelTerm).optional(),
    flagged: z.boolean().optional(),
    archived: z.boolean().optional(),
    includeArchived: z.boolean().optional(),
    titleContains: term('titleContains')
      .refine((s) => titleWords(s).length > 0, 'titleContains must contain a letter or a digit')
      .optional(),
    lastMessageBefore: date.optional(),
    lastMessageAfter: date.optional(),
    limit: z.number().int('limit must be an integer').min(1, 'limit must be at least 1').optional(),
    query: z
      .string()
      .refine((s) => s.trim() !== '', 'query must not be blank')
      .superRefine((s, ctx) => {
        const problem = rawQueryProblem(s);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .optional(),
  })
  .strict();

/** A visibility string literal: single-quoted, with `\` and `'` escaped, so no value can end the literal early. */
function literal(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/**
 * Whether a FhLabels keyword can go to the server as is. On SQLite visibility (the dev server) Temporal puts a
 * KeywordList value inside an FTS5 phrase and an SQL literal without escaping either, so a `"`, `'` or `\` there
 * breaks the server's own query (and its FTS tokenizer splits on `♡`). Such labels are matched on the client only.
 */
function serverSafeLabel(keyword: string): boolean {
  return !/["'\\\u2661]/.test(keyword);
}

/** The words visibility's full-text index sees: runs of letters and digits, lowercased (FTS keywords are uppercase). */
function titleWords(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => w.length > 0);
}

/** Why a raw query could escape the AND it is put in (unbalanced parentheses or quotes), or undefined. */
function rawQueryProblem(q: string): string | undefined {
  let depth = 0;
  let quote: string | undefined;
  for (let i = 0; i < q.length; i++) {
    const c = q[i]!;
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
      continue;
    }
    if (c === "'" || c === '"' || c === '`') quote = c;
    else if (c === '(') depth++;
    else if (c === ')' && --depth < 0) return 'query closes a parenthesis it did not open';
  }
  if (quote) return `query has an unterminated ${quote}-quoted string`;
  if (depth > 0) return 'query leaves a parenthesis open';
  return undefined;
}

function parseFilter(filter: SessionFilter | undefined): SessionFilter {
  return parseWith(filterSchema, filter ?? {}, 'session filter') as SessionFilter;
}

/**
 * The visibility query for a filter. Always restricted to sessions (`FhKind = 'session'`) and to the current run of
 * each (a session that continued-as-new leaves closed runs with the same attributes behind). Every value is a quoted,
 * escaped literal; a bad filter throws InvalidInputError naming the field.
 */
export function sessionListQuery(filter?: SessionFilter): string {
  return queryOf(parseFilter(filter));
}

function queryOf(f: SessionFilter): string {
  const clauses = [`${FH_KIND.name} = ${literal(SESSION_KIND)}`, `ExecutionStatus != 'ContinuedAsNew'`];
  if (f.agent !== undefined) clauses.push(`${FH_AGENT.name} = ${literal(f.agent)}`);
  if (f.status !== undefined) {
    const statuses = [...new Set(typeof f.status === 'string' ? [f.status] : f.status)];
    clauses.push(
      statuses.length === 1
        ? `${FH_STATUS.name} = ${literal(statuses[0]!)}`
        : `${FH_STATUS.name} IN (${statuses.map(literal).join(', ')})`,
    );
  }
  for (const label of new Set(f.labels ?? [])) {
    if (serverSafeLabel(label)) clauses.push(`${FH_LABELS.name} = ${literal(label)}`);
  }
  if (f.flagged !== undefined) clauses.push(`${FH_FLAGGED.name} = ${f.flagged}`);
  if (f.archived !== undefined) clauses.push(`${FH_ARCHIVED.name} = ${f.archived}`);
  else if (!f.includeArchived) clauses.push(`${FH_ARCHIVED.name} = false`);
  // One clause per word: a Text `=` matches ANY of its words on SQLite visibility, and we want all of them.
  for (const word of new Set(titleWords(f.titleContains ?? ''))) clauses.push(`${FH_TITLE.name} = ${literal(word)}`);
  if (f.lastMessageBefore) clauses.push(`${FH_LAST_MESSAGE_AT.name} < ${literal(f.lastMessageBefore.toISOString())}`);
  if (f.lastMessageAfter) clauses.push(`${FH_LAST_MESSAGE_AT.name} > ${literal(f.lastMessageAfter.toISOString())}`);
  if (f.query !== undefined) clauses.push(`(${f.query})`);
  return clauses.join(' AND ');
}

/** A session's summary from its visibility record alone. */
export function sessionSummary(info: WorkflowExecutionInfo): SessionSummary {
  const sa = info.typedSearchAttributes;
  const title = sa.get(FH_TITLE);
  const model = sa.get(FH_MODEL);
  const lastMessageAt = sa.get(FH_LAST_MESSAGE_AT);
  const running = info.status.name === 'RUNNING';
  // A closed session waits for nobody, whatever its last memo said.
  const memo = running ? waitingApprovalsMemo.safeParse(info.memo?.[SESSION_APPROVALS_MEMO_KEY]) : undefined;
  const waiting = memo?.success ? memo.data : undefined;
  return {
    id: info.workflowId,
    runId: info.runId,
    agent: sa.get(FH_AGENT) ?? info.type,
    ...(title !== undefined ? { title } : {}),
    status: sa.get(FH_STATUS) ?? '',
    labels: decodeLabelKeywords(sa.get(FH_LABELS) ?? []),
    flagged: sa.get(FH_FLAGGED) ?? false,
    archived: sa.get(FH_ARCHIVED) ?? false,
    ...(model !== undefined ? { model } : {}),
    ...(lastMessageAt !== undefined ? { lastMessageAt } : {}),
    startTime: info.startTime,
    running,
    ...(waiting ? { waitingApprovals: waiting.map(({ callId, tool }) => ({ callId, tool })) } : {}),
  };
}

/** Newest message first; sessions without a message yet after those, newest started first. */
function newestFirst(a: SessionSummary, b: SessionSummary): number {
  const am = a.lastMessageAt?.getTime() ?? -Infinity;
  const bm = b.lastMessageAt?.getTime() ?? -Infinity;
  if (am !== bm) return bm - am;
  if (a.startTime.getTime() !== b.startTime.getTime()) return b.startTime.getTime() - a.startTime.getTime();
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * The sessions matching a filter, newest `lastMessageAt` first. Visibility is eventually consistent: a session
 * started or changed a moment ago may show its previous state for a short while.
 *
 * Labels are also checked on the client against the exact keywords, because SQLite visibility compares KeywordList
 * values case-insensitively. Visibility has no ORDER BY on SQL stores, so every match is read before sorting;
 * `limit` bounds what is returned, not what is read.
 */
export async function listSessions(client: Client, filter?: SessionFilter): Promise<SessionSummary[]> {
  const f = parseFilter(filter);
  const query = queryOf(f);
  const labels = [...new Set(f.labels ?? [])];
  const byId = new Map<string, SessionSummary>();
  try {
    for await (const info of client.workflow.list({ query, pageSize: 1000 })) {
      const keywords = info.typedSearchAttributes.get(FH_LABELS) ?? [];
      if (!labels.every((l) => keywords.includes(l))) continue;
      const summary = sessionSummary(info);
      const seen = byId.get(summary.id);
      // A reused session id lists each run; the latest one is the session.
      if (!seen || seen.startTime < summary.startTime) byId.set(summary.id, summary);
    }
  } catch (err) {
    throw missingSearchAttributes(err, client.options.namespace, 'listed by') ?? err;
  }
  const sessions = [...byId.values()].sort(newestFirst);
  return f.limit !== undefined ? sessions.slice(0, f.limit) : sessions;
}
