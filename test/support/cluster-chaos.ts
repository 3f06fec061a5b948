/**
 * Pieces of the cluster chaos test (test/cluster/chaos.test.ts): the fake model's per-run route, the
 * worker-process pool the test SIGKILLs and restarts, and what a run's history says about where it ran.
 */
import type { ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { temporal } from '@temporalio/proto';
import { callTools, fail, say, type FakeRoute, type RecordedRequest } from '../../src/testing/anthropic/fake-anthropic';
import { CLUSTER_BIG_KB, clusterReply } from '../fixtures/cluster-agents';
import { killHard, startTsProcess } from './worker-process-control';

export { seededRandom } from './seeded-random';

type Block = { type: string; text?: string; tool_use_id?: string; content?: string | Block[] };
type Message = { role: string; content: string | Block[] };

const textOf = (content: string | Block[] | undefined): string =>
  typeof content === 'string' ? content : (content ?? []).map((b) => (b.type === 'text' ? (b.text ?? '') : '')).join('');

/**
 * The fake model's script for the chaos agent, per run: the run number comes from the first user message
 * and the step from the conversation's length, so 100 interleaved runs each get their own script, and a
 * model call retried after a kill gets the same answer again. The last reply is composed from the tool
 * results the request carries: a result lost or garbled on the way (store, offloading) changes it.
 */
export function chaosRoute(): FakeRoute {
  return (req: RecordedRequest) => {
    const messages = (req.body?.messages ?? []) as Message[];
    const run = Number(/cluster run #(\d+)/.exec(textOf(messages[0]?.content))?.[1]);
    if (!Number.isInteger(run)) return fail(400, { message: 'chaos route: no run number in the first user message' });
    const result = (id: string): string => {
      for (const m of messages) {
        if (typeof m.content === 'string') continue;
        for (const b of m.content) if (b.type === 'tool_result' && b.tool_use_id === id) return textOf(b.content);
      }
      throw new Error(`chaos route: run ${run} has no result for ${id}`);
    };
    const id = (n: number) => `toolu_chaos_${run}_${n}`;
    switch (messages.length) {
      case 1:
        return callTools({ id: id(1), name: 'checksum', input: { run, round: 1 } });
      case 3:
        return callTools({ id: id(2), name: 'report', input: { run, kb: CLUSTER_BIG_KB } }, { id: id(3), name: 'checksum', input: { run, round: 2 } });
      case 5:
        return say(clusterReply(run, result(id(1)), result(id(3)), result(id(2))));
      default:
        return fail(400, { message: `chaos route: run ${run} made an unexpected request with ${messages.length} messages` });
    }
  };
}

export interface WorkerSlot {
  index: number;
  /** This worker's own disk: FH_STORE_DIR and TMPDIR point here; the S3 store must leave it empty. */
  dir: string;
  child?: ChildProcess;
  /** Every pid this slot has had, in order. */
  pids: number[];
  /** Starts that exited before they were ready (e.g. the server was restarting) and were tried again. */
  failedStarts: number;
}

const WORKER_SCRIPT = path.join(__dirname, 'cluster-worker.ts');
const WORKER_READY_TIMEOUT_MS = 90_000;

const START_ATTEMPTS = 10;

/**
 * Starts (or restarts) the worker process of `slot`; resolves once it polls. A worker exits at startup when
 * it cannot reach the server (NativeConnection.connect fails fast, as `fh worker` does): like a process
 * supervisor on a worker machine, this starts it again, a bounded number of times.
 */
export async function startSlot(slot: WorkerSlot, env: Record<string, string>, log: (line: string) => void = () => undefined): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(slot, env);
    } catch (err) {
      if (!(err instanceof WorkerExitedError) || attempt >= START_ATTEMPTS) throw err;
      slot.failedStarts++;
      log(`worker ${slot.index} exited before it was ready (attempt ${attempt}), starting it again: ${err.message.split('\n').find((l) => /Error/.test(l))?.slice(0, 160) ?? ''}`);
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

class WorkerExitedError extends Error {}

async function startOnce(slot: WorkerSlot, env: Record<string, string>): Promise<void> {
  await fs.mkdir(slot.dir, { recursive: true });
  const starting = startTsProcess(WORKER_SCRIPT, { ...env, FH_STORE_DIR: slot.dir, TMPDIR: slot.dir, FH_PARENT_PID: String(process.pid) });
  let timer: NodeJS.Timeout | undefined;
  const child = await Promise.race([
    // startTsProcess rejects only when the process exits before it prints worker-ready.
    starting.catch((err: Error) => {
      throw new WorkerExitedError(err.message);
    }),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`cluster worker ${slot.index} printed no worker-ready in ${WORKER_READY_TIMEOUT_MS} ms`)), WORKER_READY_TIMEOUT_MS);
    }),
  ]).finally(() => clearTimeout(timer));
  slot.child = child;
  slot.pids.push(child.pid!);
}

export async function killSlot(slot: WorkerSlot): Promise<void> {
  if (slot.child) await killHard(slot.child);
  slot.child = undefined;
}

/** What one run's history says about where and how it ran. */
export interface RunTrace {
  /** Worker pids that started its activities / its workflow tasks. */
  activityPids: Set<string>;
  workflowTaskPids: Set<string>;
  /** Activities that failed with TRANSCRIPT_STORE_MISS (the worker lacked the transcript; the workflow resent it). */
  storeMisses: number;
  /** Workflow task failures, by cause / failure message start (e.g. a payload missing from the store). */
  workflowTaskFailures: string[];
  /** Activity attempts after the first (a kill, a timeout). */
  activityRetries: number;
}

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
type Failure = temporal.api.failure.v1.IFailure;

const pidOf = (identity: string | null | undefined): string | undefined => (identity ? identity.split('@')[0] : undefined);

function failureTypes(failure: Failure | null | undefined): string[] {
  const types: string[] = [];
  for (let f = failure; f; f = f.cause) if (f.applicationFailureInfo?.type) types.push(f.applicationFailureInfo.type);
  return types;
}

export function traceRun(events: HistoryEvent[]): RunTrace {
  const trace: RunTrace = { activityPids: new Set(), workflowTaskPids: new Set(), storeMisses: 0, workflowTaskFailures: [], activityRetries: 0 };
  for (const e of events) {
    const activityStarted = e.activityTaskStartedEventAttributes;
    if (activityStarted) {
      const pid = pidOf(activityStarted.identity);
      if (pid) trace.activityPids.add(pid);
      trace.activityRetries += Math.max(0, (activityStarted.attempt ?? 1) - 1);
    }
    const taskStarted = e.workflowTaskStartedEventAttributes;
    if (taskStarted) {
      const pid = pidOf(taskStarted.identity);
      if (pid) trace.workflowTaskPids.add(pid);
    }
    if (failureTypes(e.activityTaskFailedEventAttributes?.failure).includes('TRANSCRIPT_STORE_MISS')) trace.storeMisses++;
    const taskFailed = e.workflowTaskFailedEventAttributes;
    if (taskFailed) {
      const types = failureTypes(taskFailed.failure);
      trace.workflowTaskFailures.push(`${taskFailed.cause ?? '?'}: ${types.join('/') || (taskFailed.failure?.message ?? '').slice(0, 120)}`);
    }
  }
  return trace;
}
