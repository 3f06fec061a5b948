/**
 * History files and objects: Temporal's proto-JSON (what `fh history export`, `temporal workflow show
 * --output json` and the Web UI's download write) in and out, and loading a history from a file, a
 * workflow id or an object.
 */
import { promises as fsp } from 'node:fs';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@temporalio/client';
import { historyFromJSON, historyToJSON } from '@temporalio/common/lib/proto-utils';
import { temporal } from '@temporalio/proto';

/**
 * A decoded history: enums are numbers whatever the source (parseHistoryJSON decodes a file's names, and a
 * fetched history is decoded by the client), so code reading one compares against the proto enums only.
 */
export type History = temporal.api.history.v1.IHistory;

/** A history file (or object) that is not a workflow history. */
export class HistoryFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HistoryFormatError';
  }
}

/**
 * A History from Temporal's proto-JSON (what `temporal workflow show --output json` and the Web UI
 * write, and what `historyToJSONString` writes). Accepts the text or the parsed object; throws
 * HistoryFormatError with a one-line reason when it is not one.
 */
export function parseHistoryJSON(json: string | unknown, what = 'the input'): History {
  let value: unknown = json;
  if (typeof json === 'string') {
    try {
      value = JSON.parse(json);
    } catch (err) {
      throw new HistoryFormatError(`${what} is not JSON (${(err as Error).message.replace(/\s+/g, ' ')})`);
    }
  }
  // Some tools wrap the history: { history: { events } } (the gRPC response shape).
  if (isObject(value) && !Array.isArray(value.events) && isObject(value.history)) value = value.history;
  if (!isObject(value) || !Array.isArray(value.events)) {
    throw new HistoryFormatError(`${what} is not a workflow history: expected a JSON object with an "events" array`);
  }
  if (value.events.length === 0) throw new HistoryFormatError(`${what} is not a workflow history: it has no events`);
  let history: History;
  try {
    history = historyFromJSONCompat(value);
  } catch (err) {
    throw new HistoryFormatError(`${what} is not a valid workflow history: ${(err as Error).message.replace(/\s+/g, ' ')}`);
  }
  const first = history.events?.[0];
  if (!first?.workflowExecutionStartedEventAttributes) {
    throw new HistoryFormatError(`${what} is not a complete workflow history: its first event is not WorkflowExecutionStarted`);
  }
  return history;
}

/** The history as Temporal's proto-JSON text (readable by `temporal workflow show`-compatible tools and by parseHistoryJSON). */
export function historyToJSONString(history: History): string {
  try {
    return historyToJSON(history);
  } catch (err) {
    if (!isProtobufSkew(err)) throw err;
    const { toJson, historyType } = protoJsonFallback();
    return JSON.stringify(toJson(historyType, temporal.api.history.v1.History.fromObject(history as Record<string, unknown>)), null, 2);
  }
}

/** Reads a history file (proto-JSON); HistoryFormatError when it is not one. */
export async function readHistoryFile(file: string): Promise<History> {
  let text: string;
  try {
    text = await fsp.readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw Object.assign(new Error(`cannot read ${file}: ${code === 'ENOENT' ? 'no such file' : (code ?? String(err))}`), { code });
  }
  return parseHistoryJSON(text, file);
}

function historyFromJSONCompat(value: unknown): History {
  try {
    return historyFromJSON(value) as History;
  } catch (err) {
    if (!isProtobufSkew(err)) throw err;
    const { fromJson, historyType } = protoJsonFallback();
    const loaded = fromJson(historyType, fixHistoryJSON(value as { events: Array<Record<string, any>> }), { ignoreUnknownFields: true });
    if (loaded === null) throw new TypeError('Invalid history');
    return loaded as History;
  }
}

/**
 * @temporalio/common's historyFromJSON/historyToJSON fail with "type must be a Type" when npm
 * installs two copies of protobufjs (one under @temporalio/common, one under @temporalio/proto): the
 * reflection types come from one copy, the JSON codec from the other. The fallback uses the codec of
 * the copy @temporalio/proto uses.
 */
function isProtobufSkew(err: unknown): boolean {
  return err instanceof TypeError && /type must be a Type/.test(err.message);
}

interface ProtoJson {
  toJson(type: unknown, message: unknown): unknown;
  fromJson(type: unknown, value: unknown, options?: { ignoreUnknownFields?: boolean }): unknown;
  historyType: unknown;
}

let protoJsonCache: ProtoJson | undefined;

function protoJsonFallback(): ProtoJson {
  if (protoJsonCache) return protoJsonCache;
  /* eslint-disable @typescript-eslint/no-require-imports */
  const protoDir = path.dirname(require.resolve('@temporalio/proto'));
  const codec = require(require.resolve('protobufjs/ext/protojson', { paths: [protoDir] })) as Omit<ProtoJson, 'historyType'>;
  const { patchProtobufRoot } = require('@temporalio/proto/lib/patch-protobuf-root') as {
    patchProtobufRoot(root: unknown): { lookupType(name: string): unknown };
  };
  /* eslint-enable @typescript-eslint/no-require-imports */
  const historyType = patchProtobufRoot(require('@temporalio/proto')).lookupType('temporal.api.history.v1.History');
  protoJsonCache = { toJson: codec.toJson, fromJson: codec.fromJson, historyType };
  return protoJsonCache;
}

/** The enum spellings older tools wrote (`WorkflowExecutionStarted`), as historyFromJSON fixes them. */
function fixHistoryJSON(h: { events: Array<Record<string, any>> }): unknown {
  const constantCase = (s: string) => s.replace(/[^\b][A-Z]/g, (m) => `${m[0]}_${m[1]}`).toUpperCase();
  const fixEnum = (obj: Record<string, any> | undefined, attr: string, prefix: string) =>
    obj?.[attr] && typeof obj[attr] === 'string'
      ? { [attr]: obj[attr].startsWith(prefix) ? obj[attr] : `${prefix}_${constantCase(obj[attr])}` }
      : {};
  return {
    events: h.events.map((e) => {
      const type = Object.keys(e).find((k) => k.endsWith('EventAttributes'));
      if (!type) throw new TypeError(`Missing attributes in history event: ${JSON.stringify(e).slice(0, 200)}`);
      const a = e[type] ?? {};
      return {
        ...e,
        ...fixEnum(e, 'eventType', 'EVENT_TYPE'),
        [type]: {
          ...a,
          ...(a.taskQueue ? { taskQueue: { ...a.taskQueue, ...fixEnum(a.taskQueue, 'kind', 'TASK_QUEUE_KIND') } } : {}),
          ...fixEnum(a, 'parentClosePolicy', 'PARENT_CLOSE_POLICY'),
          ...fixEnum(a, 'workflowIdReusePolicy', 'WORKFLOW_ID_REUSE_POLICY'),
          ...fixEnum(a, 'initiator', 'CONTINUE_AS_NEW_INITIATOR'),
          ...fixEnum(a, 'retryState', 'RETRY_STATE'),
        },
      };
    }),
  };
}

export interface LoadedHistory {
  history: History;
  /** The workflow id: given, fetched by, or recorded in the start event (else 'replay'). */
  workflowId: string;
  source: 'file' | 'workflow' | 'object';
}

/**
 * A history from a file path (an existing file, or any path ending in .json), a workflow id (fetched
 * through `client`), a History, or a proto-JSON object.
 */
export async function loadHistory(
  source: string | History | unknown,
  opts: { client?: Client; workflowId?: string; runId?: string } = {},
): Promise<LoadedHistory> {
  if (typeof source === 'string') {
    if (looksLikeFile(source)) {
      const history = await readHistoryFile(source);
      return { history, workflowId: opts.workflowId ?? recordedWorkflowId(history) ?? 'replay', source: 'file' };
    }
    if (!opts.client) {
      throw new Error(`'${source}' is not a history file, and no client was given to fetch workflow '${source}' from a server`);
    }
    const history = await opts.client.workflow.getHandle(source, opts.runId).fetchHistory();
    return { history: history as History, workflowId: source, source: 'workflow' };
  }
  if (isObject(source) && Array.isArray(source.events)) {
    const history = isProtoHistory(source) ? (source as History) : parseHistoryJSON(source);
    return { history, workflowId: opts.workflowId ?? recordedWorkflowId(history) ?? 'replay', source: 'object' };
  }
  throw new HistoryFormatError('expected a workflow id, a history file path, or a history object with an "events" array');
}

/** A path names a file when it exists as one, or looks like one (ends in .json). */
export function looksLikeFile(s: string): boolean {
  try {
    if (fs.statSync(s).isFile()) return true;
  } catch {
    // not there
  }
  return /\.json$/i.test(s);
}

function isProtoHistory(h: Record<string, unknown>): boolean {
  const first = (h.events as unknown[])[0] as Record<string, unknown> | undefined;
  // Proto objects carry numeric event types (and Long ids); proto-JSON has strings.
  return !!first && typeof first.eventType === 'number';
}

/** The workflow id the start event records (histories do not always record it). */
function recordedWorkflowId(history: History): string | undefined {
  const attrs = history.events?.[0]?.workflowExecutionStartedEventAttributes as { workflowId?: string | null } | undefined;
  return attrs?.workflowId || undefined;
}

function isObject(v: unknown): v is Record<string, any> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
