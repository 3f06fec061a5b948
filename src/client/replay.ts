/**
 * Audit replay: run a recorded history against the current workflow code and say, in plain words,
 * where and how they diverge. A history comes from a live workflow (fetched through a client), from a
 * JSON file (`fh history export`, `temporal workflow show --output json`, the Web UI's download) or
 * from an object already loaded.
 *
 * The code is bundled from the agent modules with a small extra workflow interceptor that records,
 * through a replay-only sink, every command the code issues (activity, local activity, timer, child,
 * completion). Comparing that trace with the commands recorded in history names both sides of the
 * first divergence: "recorded a model call, code now a compaction decision".
 */
import { promises as fsp } from 'node:fs';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { historyFromJSON, historyToJSON } from '@temporalio/common/lib/proto-utils';
import { temporal } from '@temporalio/proto';
import type { WorkflowBundle } from '@temporalio/worker';
import type { TranscriptStore } from '../activities/transcript-store';
import { hashString } from '../core/hash';

export type History = temporal.api.history.v1.IHistory;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** A history file (or object) that is not a workflow history. */
export class HistoryFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HistoryFormatError';
  }
}

// ---------------------------------------------------------------------------------------------------
// History JSON
// ---------------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------------
// Loading
// ---------------------------------------------------------------------------------------------------

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

export function recordedWorkflowId(history: History): string | undefined {
  const attrs = history.events?.[0]?.workflowExecutionStartedEventAttributes as { workflowId?: string | null } | undefined;
  return attrs?.workflowId || undefined;
}

// ---------------------------------------------------------------------------------------------------
// Replay
// ---------------------------------------------------------------------------------------------------

export interface ReplayOptions {
  /** Module path(s) of the agents: the current workflow code to replay against. */
  agents: string | string[];
  /** Fetches the history when the source is a workflow id. */
  client?: Client;
  /**
   * A bundle made earlier with bundleAgents() for the same modules (skips bundling). Without the
   * command trace it cannot name what the code does now; only the recorded side is described.
   */
  workflowBundle?: WorkflowBundle;
  /** Resolves offloaded payloads in the history (the store the workers use; default FH_STORE_DIR / OS temp dir). */
  store?: TranscriptStore;
  workflowId?: string;
  runId?: string;
}

/** One command as workflow code issued it, or as history recorded it. */
export interface ReplayCommand {
  kind: 'activity' | 'local_activity' | 'timer' | 'child_workflow' | 'signal_external' | 'continue_as_new' | 'complete' | 'fail' | 'cancel' | 'other';
  /** Activity / local activity / timer sequence number (shared by activities and local activities). */
  seq?: number;
  /** Activity type, workflow type, signal name. */
  name?: string;
  /** For fhTool: the tool's name; for fail: the error message. */
  detail?: string;
}

export type ReplayResult =
  | { ok: true; workflowId: string; events: number; source: LoadedHistory['source'] }
  | {
      ok: false;
      workflowId: string;
      events: number;
      source: LoadedHistory['source'];
      /**
       * nondeterminism: the code issues different commands; unknown_agent: the modules do not define the
       * run's agent; workflow_task_failure: the code threw; replay_error: anything else.
       */
      kind: 'nondeterminism' | 'unknown_agent' | 'workflow_task_failure' | 'replay_error';
      /** The history event at which the run and the code diverge, when known. */
      eventId?: number;
      recorded?: ReplayCommand;
      /** What the code issues instead (undefined when unknown; kind 'other' with no name: nothing). */
      current?: ReplayCommand;
      /** The SDK's message. */
      error: string;
      /** The same, in plain words, with what to do about it. */
      explanation: string;
    };

const TRACE_SINK = 'fhReplayTrace';

/**
 * Replays a history against the current code of `agents`. Resolves `{ ok: true }` when the code would
 * make the same decisions, or `{ ok: false, eventId, error, explanation }` at the first divergence.
 * Throws only when the history cannot be loaded or the code cannot be bundled.
 */
export async function replayHistory(source: string | History | unknown, options: ReplayOptions): Promise<ReplayResult> {
  const loaded = await loadHistory(source, { client: options.client, workflowId: options.workflowId, runId: options.runId });
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { Worker } = require('@temporalio/worker') as typeof import('@temporalio/worker');
  const { bundleAgents } = require('../worker/bundle') as typeof import('../worker/bundle');
  const { FabricHarnessPlugin } = require('../worker/plugin') as typeof import('../worker/plugin');
  /* eslint-enable @typescript-eslint/no-require-imports */

  const traced = !options.workflowBundle;
  const workflowBundle =
    options.workflowBundle ??
    (await bundleAgents(options.agents, { workflowInterceptorModules: [await writeTraceInterceptor()], logger: quietBundlerLogger() }));

  const trace: ReplayCommand[] = [];
  const results = Worker.runReplayHistories(
    {
      workflowBundle,
      plugins: [new FabricHarnessPlugin({ store: options.store })],
      sinks: {
        [TRACE_SINK]: { command: { fn: (_info: unknown, cmd: ReplayCommand) => void trace.push(cmd), callDuringReplay: true } },
      },
    },
    [{ history: loaded.history, workflowId: loaded.workflowId }],
  );
  let error: Error | undefined;
  try {
    for await (const r of results) error = r.error;
  } catch (err) {
    error = err instanceof Error ? err : new Error(String(err));
  }
  const events = loaded.history.events?.length ?? 0;
  if (!error) return { ok: true, workflowId: loaded.workflowId, events, source: loaded.source };
  return {
    ok: false,
    workflowId: loaded.workflowId,
    events,
    source: loaded.source,
    ...explainReplayFailure(error, loaded.history, traced ? trace : undefined),
  };
}

/** A workflow interceptor module (generated, like the workflow entry) that reports each command to a sink. */
async function writeTraceInterceptor(): Promise<string> {
  const source = `// Generated by @fabric-harness/sdk: reports the commands workflow code issues during an audit replay.
const { proxySinks } = require('@temporalio/workflow');
const sink = proxySinks()[${JSON.stringify(TRACE_SINK)}];
function note(cmd) { try { sink.command(cmd); } catch (e) { /* replay goes on without the trace */ } }
function toolName(input) {
  const arg = input && input.args && input.args[0];
  return input.activityType === 'fhTool' && arg && typeof arg.name === 'string' ? arg.name : undefined;
}
exports.interceptors = () => ({
  outbound: [{
    scheduleActivity(input, next) { note({ kind: 'activity', seq: input.seq, name: input.activityType, detail: toolName(input) }); return next(input); },
    scheduleLocalActivity(input, next) { note({ kind: 'local_activity', seq: input.seq, name: input.activityType }); return next(input); },
    startTimer(input, next) { note({ kind: 'timer', seq: input.seq, detail: String(input.durationMs) + ' ms' }); return next(input); },
    startChildWorkflowExecution(input, next) { note({ kind: 'child_workflow', seq: input.seq, name: input.workflowType }); return next(input); },
    signalWorkflow(input, next) { note({ kind: 'signal_external', seq: input.seq, name: input.signalName }); return next(input); },
    continueAsNew(input, next) { note({ kind: 'continue_as_new', name: input.options && input.options.workflowType }); return next(input); },
  }],
  inbound: [{
    async execute(input, next) {
      try {
        const result = await next(input);
        note({ kind: 'complete' });
        return result;
      } catch (err) {
        if (!(err && err.name === 'ContinueAsNew')) note({ kind: 'fail', detail: err && err.message ? String(err.message) : String(err) });
        throw err;
      }
    },
  }],
});
`;
  const dir = path.join(os.tmpdir(), 'fabric-harness-entries');
  await fsp.mkdir(dir, { recursive: true });
  const file = path.join(dir, `replay-trace-${hashString(source)}.js`);
  await fsp.writeFile(file, source);
  return file;
}

function quietBundlerLogger() {
  const noop = () => undefined;
  return { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: (m: string) => console.error(m) };
}

// ---------------------------------------------------------------------------------------------------
// Explaining a failure
// ---------------------------------------------------------------------------------------------------

interface RecordedCommand extends ReplayCommand {
  eventId: number;
}

type Explained = Omit<Extract<ReplayResult, { ok: false }>, 'ok' | 'workflowId' | 'events' | 'source'>;

/** Turns a replay error into the divergence point and a plain explanation (exported for tests). */
export function explainReplayFailure(error: Error, history: History, trace?: ReplayCommand[]): Explained {
  const message = error.message;
  const core = /Nondeterminism error: (.*?)(?:", source:|$)/s.exec(message)?.[1] ?? message;
  const isNondeterminism = error.name === 'DeterminismViolationError' || /nondeterminism/i.test(message);
  const recordedCmds = recordedCommands(history);
  const coreEventId = toNumber(/HistoryEvent\(id: (\d+)/.exec(core)?.[1]);

  if (!isNondeterminism) {
    const taskFailure = /workflow task failure/i.test(message);
    const detail = /Details: (.*)$/s.exec(message)?.[1]?.trim() ?? message;
    const hint = /missing from the store|ExternalStorage/i.test(message)
      ? ' The history has payloads offloaded to external storage: replay where the store the workers use is reachable (FH_STORE_DIR / --store-dir).'
      : taskFailure
        ? ' A worker running this code would fail the same workflow task and retry it until the code is fixed.'
        : '';
    return {
      kind: taskFailure ? 'workflow_task_failure' : 'replay_error',
      error: message,
      explanation: `${taskFailure ? 'The workflow code failed while replaying the recorded run' : 'Replay failed'}: ${firstLine(detail)}.${hint}`,
    };
  }

  let eventId = coreEventId;
  let recorded: RecordedCommand | undefined = eventId !== undefined ? recordedCmds.find((c) => c.eventId === eventId) : undefined;
  let current: ReplayCommand | undefined;

  if (trace) {
    const d = firstDivergence(recordedCmds, trace);
    if (d && (eventId === undefined || !recorded || d.recorded.eventId === eventId)) {
      eventId = d.recorded.eventId;
      recorded = d.recorded;
      current = d.current;
    } else if (recorded) {
      current = codeCommandFor(recorded, trace) ?? firstUnmatched(recordedCmds, trace) ?? { kind: 'other' };
    }
  } else {
    // Without a trace, the SDK's own wording is all there is to say about the code's side.
    const m = /Activity type of scheduled event '([^']*)' does not match activity type of activity command '([^']*)'/.exec(core);
    if (m) {
      recorded ??= recordedCmds.find((c) => c.kind === 'activity' && c.name === m[1]);
      current = { kind: 'activity', name: m[2] };
      eventId ??= recorded?.eventId;
    }
  }
  if (!recorded && eventId !== undefined) {
    const ev = history.events?.find((e) => toNumber(e.eventId) === eventId);
    if (ev) recorded = { eventId, kind: 'other', name: eventTypeName(ev) };
  }

  if (current?.kind === 'fail' && /^Unknown agent '/.test(current.detail ?? '')) {
    return {
      kind: 'unknown_agent',
      error: /message: "(\[TMPRL\d+\][^"]*)"/.exec(message)?.[1] ?? message,
      explanation: `The current code does not define this run's agent: ${firstLine(current.detail!)}. Replay against the module that defines it (--agents / options.agents).`,
    };
  }

  const at = eventId !== undefined ? ` at event ${eventId}` : '';
  const recordedText = recorded ? describeCommand(recorded) : 'something else';
  const currentText = current ? (current.kind === 'other' && !current.name ? 'issues no command there' : describeCommand(current)) : undefined;
  const explanation =
    `The workflow code now issues a different command${at} than the recorded run did: recorded ${recordedText}` +
    (currentText ? `, code now ${currentText}` : ` (SDK: ${firstLine(core)})`) +
    `. Changes that add, remove or reorder model calls, tool calls, compaction decisions or timers (for example turning compaction on, ` +
    `changing its settings or the tools, or adding a step) break runs recorded before the change: keep the old code for those runs ` +
    `(a patch, or worker versioning) or let them finish first.`;
  return {
    kind: 'nondeterminism',
    ...(eventId !== undefined ? { eventId } : {}),
    ...(recorded ? { recorded: stripEventId(recorded) } : {}),
    ...(current ? { current } : {}),
    error: /message: "(\[TMPRL\d+\][^"]*)"/.exec(message)?.[1] ?? message,
    explanation,
  };
}

function stripEventId(c: RecordedCommand): ReplayCommand {
  const { eventId: _e, ...rest } = c;
  return rest;
}

/** The commands history recorded, in event order (activities by id = seq, local activities by marker seq). */
export function recordedCommands(history: History): RecordedCommand[] {
  const out: RecordedCommand[] = [];
  for (const e of history.events ?? []) {
    const eventId = toNumber(e.eventId) ?? 0;
    if (e.activityTaskScheduledEventAttributes) {
      const a = e.activityTaskScheduledEventAttributes;
      const name = a.activityType?.name ?? undefined;
      let detail: string | undefined;
      if (name === 'fhTool') detail = safeDecode(a.input?.payloads?.[0])?.name;
      out.push({ eventId, kind: 'activity', seq: toNumber(a.activityId), name, ...(detail ? { detail } : {}) });
    } else if (e.markerRecordedEventAttributes) {
      const m = e.markerRecordedEventAttributes;
      if (m.markerName !== 'core_local_activity') continue; // patch markers are the SDK's business
      const data = safeDecode(m.details?.data?.payloads?.[0]) as { seq?: number; activity_type?: string } | undefined;
      out.push({ eventId, kind: 'local_activity', seq: data?.seq, name: data?.activity_type });
    } else if (e.timerStartedEventAttributes) {
      out.push({ eventId, kind: 'timer', seq: toNumber(e.timerStartedEventAttributes.timerId) });
    } else if (e.startChildWorkflowExecutionInitiatedEventAttributes) {
      out.push({ eventId, kind: 'child_workflow', name: e.startChildWorkflowExecutionInitiatedEventAttributes.workflowType?.name ?? undefined });
    } else if (e.signalExternalWorkflowExecutionInitiatedEventAttributes) {
      out.push({ eventId, kind: 'signal_external', name: e.signalExternalWorkflowExecutionInitiatedEventAttributes.signalName ?? undefined });
    } else if (e.workflowExecutionCompletedEventAttributes) {
      out.push({ eventId, kind: 'complete' });
    } else if (e.workflowExecutionFailedEventAttributes) {
      out.push({ eventId, kind: 'fail', detail: e.workflowExecutionFailedEventAttributes.failure?.message ?? undefined });
    } else if (e.workflowExecutionContinuedAsNewEventAttributes) {
      out.push({ eventId, kind: 'continue_as_new', name: e.workflowExecutionContinuedAsNewEventAttributes.workflowType?.name ?? undefined });
    } else if (e.workflowExecutionCanceledEventAttributes) {
      out.push({ eventId, kind: 'cancel' });
    }
  }
  return out;
}

/** Activities and local activities share one sequence; timers have their own. */
function family(c: ReplayCommand): string {
  if (c.kind === 'activity' || c.kind === 'local_activity') return `act:${c.seq}`;
  if (c.kind === 'timer') return `timer:${c.seq}`;
  return c.kind === 'fail' || c.kind === 'complete' || c.kind === 'cancel' || c.kind === 'continue_as_new' ? 'close' : `${c.kind}:${c.name}`;
}

function codeCommandFor(rec: ReplayCommand, trace: ReplayCommand[]): ReplayCommand | undefined {
  const key = family(rec);
  return trace.find((c) => family(c) === key);
}

function sameCommand(a: ReplayCommand, b: ReplayCommand): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === 'activity' || a.kind === 'local_activity' || a.kind === 'child_workflow' || a.kind === 'signal_external') return a.name === b.name;
  return true;
}

function firstDivergence(recorded: RecordedCommand[], trace: ReplayCommand[]): { recorded: RecordedCommand; current: ReplayCommand } | undefined {
  for (const rec of recorded) {
    const code = codeCommandFor(rec, trace);
    if (!code) return { recorded: rec, current: firstUnmatched(recorded, trace) ?? { kind: 'other' } };
    if (!sameCommand(rec, code)) return { recorded: rec, current: code };
  }
  return undefined;
}

/** The first command of the code that no recorded command accounts for. */
function firstUnmatched(recorded: RecordedCommand[], trace: ReplayCommand[]): ReplayCommand | undefined {
  return trace.find((c) => {
    const rec = recorded.find((r) => family(r) === family(c));
    return !rec || !sameCommand(rec, c);
  });
}

const ACTIVITY_WORDS: Record<string, string> = {
  fhModel: 'a model call',
  fhTool: 'a tool call',
  fhSummarize: 'a compaction summary',
  fhResolveModel: 'a model lookup',
  fhDecideCompaction: 'a compaction decision',
};

/** "a model call (activity fhModel)", "a tool call 'add' (activity fhTool)", "a timer (5000 ms)" … */
export function describeCommand(c: ReplayCommand): string {
  switch (c.kind) {
    case 'activity':
    case 'local_activity': {
      const words = (c.name && ACTIVITY_WORDS[c.name]) ?? 'an activity';
      const tool = c.name === 'fhTool' && c.detail ? ` '${c.detail}'` : '';
      return `${words}${tool} (${c.kind === 'local_activity' ? 'local activity' : 'activity'} ${c.name ?? '?'})`;
    }
    case 'timer':
      return `a timer${c.detail ? ` (${c.detail})` : ''}`;
    case 'child_workflow':
      return `a child workflow (${c.name ?? '?'})`;
    case 'signal_external':
      return `a signal to another workflow (${c.name ?? '?'})`;
    case 'continue_as_new':
      return 'continue-as-new';
    case 'complete':
      return 'completing the workflow';
    case 'fail':
      return `failing the workflow${c.detail ? ` (${firstLine(c.detail)})` : ''}`;
    case 'cancel':
      return 'cancelling the workflow';
    default:
      return c.name ? `an event of type ${c.name}` : 'no command';
  }
}

function eventTypeName(e: HistoryEvent): string {
  const attr = Object.keys(e).find((k) => k.endsWith('EventAttributes') && (e as Record<string, unknown>)[k]);
  return attr ? attr.replace(/EventAttributes$/, '').replace(/^./, (c) => c.toUpperCase()) : 'unknown';
}

function safeDecode(p: Payload | null | undefined): any {
  if (!p) return undefined;
  try {
    return defaultPayloadConverter.fromPayload(p);
  } catch {
    return undefined;
  }
}

function toNumber(v: unknown): number | undefined {
  if (v === null || v === undefined) return undefined;
  const n = typeof v === 'object' && 'toNumber' in (v as object) ? (v as { toNumber(): number }).toNumber() : Number(v);
  return Number.isFinite(n) ? n : undefined;
}

function firstLine(s: string): string {
  return s.split('\n')[0]!.trim().replace(/\.$/, '');
}

function isObject(v: unknown): v is Record<string, any> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
