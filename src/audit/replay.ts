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
import * as os from 'node:os';
import * as path from 'node:path';
import type { WorkflowBundle } from '@temporalio/worker';
import { canonicalJson, hashString } from '../core/hash';
import type { ToolSpec } from '../core/tools-spec';
import { loadHistory, type History } from './history-file';
import { explainReplayFailure } from './replay-explain';
import type { ReplayCommand, ReplayOptions, ReplayResult } from './replay-types';
import { firstModelInputMismatch, recordedModelInputs, recordedStoredPreludes } from './replay-inputs';
import type { ModelActivityInput } from '../wire/activity-contract';

export type { ReplayOptions, ReplayCommand, ReplayResult } from './replay-types';

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
  const { ensureQuietRuntime } = require('../worker/runtime-logging') as typeof import('../worker/runtime-logging');
  /* eslint-enable @typescript-eslint/no-require-imports */
  // The replay worker's INFO lines (state changes) are noise here; `fh replay` is as quiet. An
  // application that installed its own runtime keeps it.
  ensureQuietRuntime('WARN');

  const strict = options.strictInputs === true;
  const given = options.workflowBundle && TRACED.get(options.workflowBundle);
  const traced = !options.workflowBundle || given !== undefined;
  if (strict && !given?.strictInputs && options.workflowBundle) {
    throw new Error('strictInputs needs a bundle with the model inputs traced: leave out workflowBundle, or make it with bundleForReplay(agents, { strictInputs: true })');
  }
  const workflowBundle = options.workflowBundle ?? (await bundleTraced(options.agents, strict, bundleAgents));

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
  if (!error && strict) {
    const recorded = await recordedModelInputs(loaded.history, { store: options.store });
    const scheduled = trace.filter((c) => c.kind === 'activity' && c.name === 'fhModel' && c.input !== undefined);
    const currentPreludes = new Map(
      trace
        .filter((c) => c.kind === 'activity' && c.name === 'fhStorePrelude' && c.input !== undefined)
        .map((c) => [hashString(canonicalJson(c.input)), c.input as { system?: string; tools: ToolSpec[] }] as const),
    );
    const mismatch = firstModelInputMismatch(
      recorded,
      scheduled.map((c) => ({ seq: c.seq ?? -1, input: c.input as ModelActivityInput })),
      { recorded: await recordedStoredPreludes(loaded.history, { store: options.store }), current: currentPreludes },
    );
    if (mismatch) {
      return {
        ok: false,
        workflowId: loaded.workflowId,
        events,
        source: loaded.source,
        kind: 'input_mismatch',
        eventId: mismatch.eventId,
        inputMismatch: mismatch,
        error: `model call input differs: ${mismatch.field}`,
        explanation: `${mismatch.explanation} The code makes the same decisions, but would send the model something else than the recorded run did.`,
      };
    }
    const unreadable = recorded.filter((r) => !r.input).length;
    return { ok: true, workflowId: loaded.workflowId, events, source: loaded.source, strictInputs: { compared: recorded.length - unreadable, unreadable } };
  }
  if (!error) return { ok: true, workflowId: loaded.workflowId, events, source: loaded.source };
  return {
    ok: false,
    workflowId: loaded.workflowId,
    events,
    source: loaded.source,
    ...explainReplayFailure(error, loaded.history, traced ? trace : undefined),
  };
}

/**
 * Bundles made here with the command trace, and whether they trace model inputs too. A bundle is passed
 * as a plain WorkflowBundle (ReplayOptions.workflowBundle), so replayHistory looks it up to know whether a
 * divergence can name what the code does now.
 */
const TRACED = new WeakMap<WorkflowBundle, { strictInputs: boolean }>();

/**
 * The agents bundled once, with the command trace, for several replays (`workflowBundle`): each result
 * names what the code does now, as a replay that bundles for itself does. `strictInputs` traces model
 * inputs too (needed by replays with strictInputs).
 */
export async function bundleForReplay(agents: string | string[], options: { strictInputs?: boolean } = {}): Promise<WorkflowBundle> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { bundleAgents } = require('../worker/bundle') as typeof import('../worker/bundle');
  return bundleTraced(agents, options.strictInputs === true, bundleAgents);
}

async function bundleTraced(agents: string | string[], strictInputs: boolean, bundleAgents: typeof import('../worker/bundle').bundleAgents): Promise<WorkflowBundle> {
  const bundle = await bundleAgents(agents, { workflowInterceptorModules: [await writeTraceInterceptor(strictInputs)], logger: quietBundlerLogger() });
  TRACED.set(bundle, { strictInputs });
  return bundle;
}

/** A workflow interceptor module (generated, like the workflow entry) that reports each command to a sink. */
async function writeTraceInterceptor(withModelInputs: boolean): Promise<string> {
  const source = `// Generated by @fabric-harness/sdk: reports the commands workflow code issues during an audit replay.
const { proxySinks } = require('@temporalio/workflow');
const WITH_MODEL_INPUTS = ${withModelInputs};
const sink = proxySinks()[${JSON.stringify(TRACE_SINK)}];
function note(cmd) { try { sink.command(cmd); } catch (e) { /* replay goes on without the trace */ } }
function toolName(input) {
  const arg = input && input.args && input.args[0];
  return input.activityType === 'fhTool' && arg && typeof arg.name === 'string' ? arg.name : undefined;
}
exports.interceptors = () => ({
  outbound: [{
    scheduleActivity(input, next) {
      // The prelude stored ahead of the first model call (fh-prelude-first) is part of what the model is sent.
      const modelInput = WITH_MODEL_INPUTS && (input.activityType === 'fhModel' || input.activityType === 'fhStorePrelude') ? input.args && input.args[0] : undefined;
      note({ kind: 'activity', seq: input.seq, name: input.activityType, detail: toolName(input), input: modelInput });
      return next(input);
    },
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
