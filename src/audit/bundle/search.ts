/**
 * Questions across many runs (`fh audit search`): over a folder of bundles (their manifests and
 * contents, read offline), and over a namespace's visibility for what it indexes. Each hit is one JSON
 * object (a line of output): a tool call, model call, compaction decision or failure that matches every
 * record filter given, or a run when only run filters (label, time range) are given.
 */
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@temporalio/client';
import { auditTranscript } from '../collect';
import type { AuditRecord } from '../records';
import type { BundleRun } from './format';
import { openBundle, runHistory, type OpenBundle } from './read';

export interface SearchQuery {
  /** Tool name (exact). */
  tool?: string;
  /** A pattern the tool call's arguments (as JSON) must match. */
  args?: RegExp;
  /** Model name (exact). */
  model?: string;
  /** A compaction decision: `compact`, `none`, or the decision's reason. */
  decision?: string;
  /** An error code (the `[CODE]` of a failure, e.g. MODEL_RATE_LIMIT, STORE_BLOB_MISSING). */
  errorCode?: string;
  since?: Date;
  until?: Date;
  /** A session label: `name` (has it) or `name=value`. */
  label?: string;
}

export interface SearchHit {
  source: 'bundle' | 'visibility';
  bundle?: string;
  workflowId: string;
  runId: string;
  workflowType?: string;
  kind: 'tool_call' | 'model_call' | 'compaction_decision' | 'failure' | 'run';
  eventId?: number;
  at?: string;
  tool?: string;
  arguments?: unknown;
  /** A sub-agent call: the child workflow's id. */
  subAgent?: string;
  model?: string;
  decision?: string;
  errorCode?: string;
  labels?: string[];
  /** Visibility hits: the filters visibility cannot answer (export the runs and search the bundles). */
  unchecked?: string[];
}

const RECORD_FILTERS = ['tool', 'args', 'model', 'decision', 'errorCode'] as const;

function hasRecordFilter(q: SearchQuery): boolean {
  return RECORD_FILTERS.some((k) => q[k] !== undefined);
}

/** Every hit in the bundles under `dir` (files that are not bundles are skipped, and reported to `onSkip`). */
export async function* searchBundles(dir: string, q: SearchQuery, onSkip?: (file: string, why: string) => void): AsyncGenerator<SearchHit> {
  const files = (await fsp.readdir(dir, { withFileTypes: true })).filter((e) => e.isFile()).map((e) => path.join(dir, e.name)).sort();
  for (const file of files) {
    let b: OpenBundle;
    try {
      b = openBundle(await fsp.readFile(file));
    } catch (err) {
      onSkip?.(file, (err as Error).message);
      continue;
    }
    for (const run of b.manifest.runs) yield* searchRun(b, run, q, path.basename(file));
  }
}

async function* searchRun(b: OpenBundle, run: BundleRun, q: SearchQuery, bundle: string): AsyncGenerator<SearchHit> {
  const history = runHistory(b, run);
  const labels = labelsOf(history);
  if (q.label !== undefined && !labels.includes(q.label)) return;
  const base = { source: 'bundle' as const, bundle, workflowId: run.workflowId, runId: run.runId, ...(run.workflowType ? { workflowType: run.workflowType } : {}), ...(labels.length ? { labels } : {}) };
  if (!hasRecordFilter(q)) {
    if (inRange(run.startedAt, q) || inRange(run.closedAt, q)) yield { ...base, kind: 'run', ...(run.startedAt ? { at: run.startedAt } : {}) };
    return;
  }
  const audit = await auditTranscript(history, { store: b.store, truncateAt: 80, workflowId: run.workflowId, runId: run.runId });
  for (const r of audit.json.records) {
    const hit = matchRecord(r, q);
    if (hit && inRange(r.at, q)) yield { ...base, ...hit, eventId: r.eventId, ...(r.at ? { at: r.at } : {}) };
  }
}

function matchRecord(r: AuditRecord, q: SearchQuery): (Partial<SearchHit> & Pick<SearchHit, 'kind'>) | undefined {
  const codes = errorCodes(r);
  if (q.errorCode !== undefined && !codes.includes(q.errorCode)) return undefined;
  const errorCode = q.errorCode !== undefined ? { errorCode: q.errorCode } : {};
  if (r.type === 'tool_call') {
    if (q.model !== undefined || q.decision !== undefined) return undefined;
    if (q.tool !== undefined && r.name !== q.tool) return undefined;
    if (q.args && !q.args.test(JSON.stringify(r.arguments) ?? '')) return undefined;
    return { kind: 'tool_call', tool: r.name, arguments: r.arguments, ...errorCode };
  }
  // A sub-agent is a tool call too (the model asked for it by the agent's name): a child workflow, not fhTool.
  if (r.type === 'sub_agent') {
    if (q.model !== undefined || q.decision !== undefined) return undefined;
    if (q.tool !== undefined && r.agent !== q.tool) return undefined;
    if (q.args && !q.args.test(JSON.stringify(r.input) ?? '')) return undefined;
    return { kind: 'tool_call', tool: r.agent, arguments: r.input, subAgent: r.childId, ...errorCode };
  }
  if (r.type === 'model_call') {
    if (q.tool !== undefined || q.args || q.decision !== undefined) return undefined;
    if (q.model !== undefined && r.model !== q.model) return undefined;
    return { kind: 'model_call', model: r.model, ...errorCode };
  }
  if (r.type === 'compaction_decision') {
    if (q.tool !== undefined || q.args || q.model !== undefined) return undefined;
    const kind = !r.recorded ? 'unrecorded' : r.compact ? 'compact' : 'none';
    if (q.decision !== undefined && q.decision !== kind && q.decision !== r.reason) return undefined;
    return { kind: 'compaction_decision', decision: r.compact && r.reason ? `compact (${r.reason})` : kind, ...errorCode };
  }
  if (q.errorCode !== undefined && !hasRecordFilter({ ...q, errorCode: undefined })) return { kind: 'failure', ...errorCode };
  return undefined;
}

/** The `[CODE]`s a record's failure text names (failureText writes each failure's type so). */
function errorCodes(r: AuditRecord): string[] {
  const text = [(r as { error?: string }).error, (r as { failure?: string }).failure].filter(Boolean).join(' ');
  return [...text.matchAll(/\[([A-Z][A-Z0-9_]+)\]/g)].map((m) => m[1]!);
}

function inRange(at: string | undefined, q: SearchQuery): boolean {
  if (!q.since && !q.until) return true;
  if (!at) return false;
  const t = Date.parse(at);
  return (!q.since || t >= q.since.getTime()) && (!q.until || t <= q.until.getTime());
}

/** The run's last FhLabels (start, then each upsert), as keywords: `name` and `name=value`. */
function labelsOf(history: ReturnType<typeof runHistory>): string[] {
  let labels: string[] = [];
  for (const e of history.events ?? []) {
    const fields = (e.workflowExecutionStartedEventAttributes ?? e.upsertWorkflowSearchAttributesEventAttributes)?.searchAttributes?.indexedFields;
    const p = fields?.FhLabels;
    if (!p) continue;
    try {
      const v = JSON.parse(Buffer.from(p.data ?? []).toString('utf8')) as unknown;
      labels = Array.isArray(v) ? v.map(String) : [];
    } catch {
      // an unset attribute (null payload): no labels
      labels = [];
    }
  }
  return labels;
}

/** Runs in the namespace's visibility that match what it indexes (model, label, time range). */
export async function* searchVisibility(client: Client, q: SearchQuery): AsyncGenerator<SearchHit> {
  const clauses: string[] = [];
  const quote = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  if (q.model !== undefined) clauses.push(`FhModel = ${quote(q.model)}`);
  if (q.label !== undefined) clauses.push(`FhLabels = ${quote(q.label)}`);
  if (q.since) clauses.push(`StartTime >= ${quote(q.since.toISOString())}`);
  if (q.until) clauses.push(`StartTime <= ${quote(q.until.toISOString())}`);
  const unchecked = (['tool', 'args', 'decision', 'errorCode'] as const).filter((k) => q[k] !== undefined);
  for await (const wf of client.workflow.list(clauses.length ? { query: clauses.join(' AND ') } : {})) {
    yield {
      source: 'visibility',
      workflowId: wf.workflowId,
      runId: wf.runId,
      workflowType: wf.type,
      kind: 'run',
      at: wf.startTime.toISOString(),
      ...(unchecked.length ? { unchecked: [...unchecked] } : {}),
    };
  }
}
