/**
 * Many workers, one cluster, one shared S3 store, and chaos: 3 worker processes that share nothing but the
 * Temporal server (v1.29.1 on PostgreSQL) and a MinIO bucket run 100 agent runs (tool calls, a >128 KB
 * input and a >128 KB tool result, both offloaded to the store) while a random worker is SIGKILLed and
 * restarted every few seconds and the Temporal server is restarted once. Every run must complete with the
 * result its tools and inputs determine; the figures (runs, kills, restarts, runs that changed worker,
 * transcript store misses, wall time) are printed.
 */
import { promises as fs } from 'node:fs';
import { ListObjectsV2Command, type ListObjectsV2CommandOutput, type S3Client } from '@aws-sdk/client-s3';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { getAgentHandle, startAgent } from '@fabric-harness/sdk/client';
import { FH_SEARCH_ATTRIBUTES } from '../../src/wire/search-attributes';
import { CLUSTER_BIG_KB, CLUSTER_NOTES_BYTES, clusterChecksum, clusterNotes, clusterReply, clusterReport, clusterWorker, fnv1a } from '../fixtures/cluster-agents';
import { chaosRoute, seededRandom, traceRun, type RunTrace } from '../support/cluster-chaos';
import { allKillsMade, runChaos, startChaosCluster, whileServerAway as sendAgainWhileServerAway, type ChaosCluster } from '../support/chaos-cluster';

const RUNS = Number(process.env.FH_CHAOS_RUNS ?? 100);
const CONCURRENCY = 20;
const WORKERS = 3;
const MAX_KILLS = 8;
/** The server restart comes after this many kills. */
const SERVER_RESTART_AFTER_KILL = 3;
const KILL_EVERY_MS: [number, number] = [2_000, 4_000];
/** The last runs start only after the last kill, so the batch cannot finish before it. */
const HELD_FOR_LAST_KILL = Math.min(10, RUNS);
/**
 * Kill k also waits for k / (MAX_KILLS + 1) of the runs not held back to have finished: spread over the
 * whole batch however fast the machine is (by time alone, a fast one finishes before the last kills), and
 * no kill waits on a run that waits on it.
 */
const killProgress = (k: number): number => Math.floor((k * (RUNS - HELD_FOR_LAST_KILL)) / (MAX_KILLS + 1));
/** Every run done by then, or the test reports the stuck ones (their pending activities and last events). */
const RUNS_DEADLINE_MS = Number(process.env.FH_CHAOS_DEADLINE_S ?? 7 * 60) * 1000;

interface RunResult {
  run: number;
  reply: string;
  notesBytes: number;
  notesFnv: string;
  modelCalls: number;
}

const expectedResult = (run: number): RunResult => {
  const notes = clusterNotes(run);
  return {
    run,
    reply: clusterReply(run, clusterChecksum(run, 1), clusterChecksum(run, 2), clusterReport(run, CLUSTER_BIG_KB)),
    notesBytes: CLUSTER_NOTES_BYTES,
    notesFnv: fnv1a(notes),
    modelCalls: 3,
  };
};

const log = (line: string) => process.stderr.write(`[chaos] ${line}\n`);

describe('the cluster under chaos: 3 worker processes, a shared S3 store, kills and a server restart', () => {
  const seed = Number(process.env.FH_CHAOS_SEED ?? Date.now() % 1_000_000);
  const random = seededRandom(seed);
  let stage: ChaosCluster;
  let client: Client;

  beforeAll(async () => {
    stage = await startChaosCluster({ name: 'cluster-chaos', workers: WORKERS, route: chaosRoute(), log });
    client = stage.client();
  }, 15 * 60_000);

  afterAll(async () => {
    await stage?.stop();
  }, 120_000);

  it('registers every search attribute the SDK uses', async () => {
    const { customAttributes } = await stage.connection.operatorService.listSearchAttributes({ namespace: stage.cluster.namespace });
    expect(Object.keys(customAttributes ?? {}).sort()).toEqual(expect.arrayContaining(Object.keys(FH_SEARCH_ATTRIBUTES).sort()));
  });

  it('runs 100 agents to the right result while workers are killed and the server restarts', async () => {
    log(`seed ${seed} (FH_CHAOS_SEED=${seed} replays this schedule), ${RUNS} runs, ${CONCURRENCY} at a time, ${WORKERS} workers`);
    const started = Date.now();
    const results = new Map<number, RunResult>();
    const errors = new Map<number, string>();
    const chaos = { kills: 0, workerRestarts: 0, serverRestarts: 0, serverRestartMs: 0, clientRetries: 0 };
    const workflowId = (run: number) => `chaos-${process.pid}-${run}`;
    let done = false;

    const { fake, s3, bucket, prefix, slots, taskQueue } = stage;
    /** Retries a client call only while the server is unreachable (its restart), never on other errors. */
    const whileServerAway = <T>(what: string, call: () => Promise<T>): Promise<T> =>
      sendAgainWhileServerAway(
        what,
        call,
        (w, err) => {
          chaos.clientRetries++;
          log(`${w}: server unavailable, retrying (${err.message.slice(0, 80)})`);
        },
        120_000,
      );

    // At the deadline, the lanes' pending calls are aborted, so nothing still polls when the connection closes.
    const abort = new AbortController();
    const runOne = async (run: number): Promise<void> => {
      const id = workflowId(run);
      try {
        await whileServerAway(`start ${run}`, async () => {
          try {
            await startAgent(client, clusterWorker, { run, notes: clusterNotes(run) }, { workflowId: id, taskQueue });
          } catch (err) {
            // A start retried after the server took it but the reply was lost.
            if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
          }
        });
        const result = await whileServerAway(`result ${run}`, () => client.withAbortSignal(abort.signal, () => getAgentHandle<RunResult>(client, id).result()));
        results.set(run, result);
      } catch (err) {
        if (!abort.signal.aborted) errors.set(run, (err as Error).message);
      }
    };

    let next = 0;
    const lanes = async (): Promise<void> => {
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < RUNS && !abort.signal.aborted) {
            const run = next++;
            if (run >= RUNS - HELD_FOR_LAST_KILL) await killsMade;
            await runOne(run);
          }
        }),
      );
    };

    const chaosLoop = () =>
      runChaos(
        stage,
        {
          random,
          maxKills: MAX_KILLS,
          serverRestartAfterKill: SERVER_RESTART_AFTER_KILL,
          killEveryMs: KILL_EVERY_MS,
          readyForKill: (k) => results.size >= killProgress(k),
          progress: () => `${results.size}/${RUNS} runs done`,
          done: () => done,
          log,
        },
        chaos,
      );

    let deadlineTimer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'deadline'>((resolve) => (deadlineTimer = setTimeout(() => resolve('deadline'), RUNS_DEADLINE_MS)));
    const chaosDone = chaosLoop();
    const killsMade = allKillsMade(chaos, MAX_KILLS, chaosDone);
    const lanesDone = lanes();
    const outcome = await Promise.race([lanesDone.then(() => 'done' as const), deadline]);
    clearTimeout(deadlineTimer);
    const wallMs = Date.now() - started;
    done = true;
    abort.abort();
    await Promise.all([lanesDone, chaosDone]);

    // What each run's history says: which worker processes ran it, misses, workflow task failures.
    const traces = new Map<number, RunTrace>();
    for (let run = 0; run < next; run++) {
      const history = await getAgentHandle(client, workflowId(run)).fetchHistory();
      traces.set(run, traceRun(history.events ?? []));
    }
    const all = [...traces.values()];
    const sum = (f: (t: RunTrace) => number) => all.reduce((n, t) => n + f(t), 0);
    const correct = [...results.entries()].filter(([run, r]) => JSON.stringify(r) === JSON.stringify(expectedResult(run))).length;
    // Started but neither finished nor failed by the deadline; runs never started count as missing results.
    const stuck = [...Array(next).keys()].filter((run) => !results.has(run) && !errors.has(run));
    const wfTaskFailures = all.flatMap((t) => t.workflowTaskFailures);
    const listed = await listAll(s3, bucket, `${prefix}/`);
    const leftOnDisk = (await Promise.all(slots.map(async (s) => (await fs.readdir(s.dir).catch(() => [])).length))).reduce((a, b) => a + b, 0);

    const report = {
      seed,
      runsCompletedCorrectly: `${correct}/${RUNS}`,
      runsFailed: errors.size,
      runsStuck: stuck.length,
      workerKills: chaos.kills,
      workerRestarts: chaos.workerRestarts,
      serverRestarts: chaos.serverRestarts,
      serverRestartMs: chaos.serverRestartMs,
      workerPidsUsed: slots.reduce((n, s) => n + s.pids.length, 0),
      workerStartsThatExitedEarly: slots.reduce((n, s) => n + s.failedStarts, 0),
      runsWithActivitiesOnSeveralWorkers: all.filter((t) => t.activityPids.size > 1).length,
      runsWithWorkflowTasksOnSeveralWorkers: all.filter((t) => t.workflowTaskPids.size > 1).length,
      transcriptStoreMisses: sum((t) => t.storeMisses),
      activityRetries: sum((t) => t.activityRetries),
      workflowTaskFailures: wfTaskFailures.length,
      clientCallsRetriedWhileServerAway: chaos.clientRetries,
      s3Objects: { payloads: listed.filter((k) => k.startsWith(`${prefix}/payloads/`)).length, total: listed.length },
      filesLeftOnWorkerDisks: leftOnDisk,
      modelRequests: fake.messageRequests().length,
      wallSeconds: Math.round(wallMs / 100) / 10,
    };
    console.log(`cluster chaos report:\n${JSON.stringify(report, null, 2)}`);
    if (wfTaskFailures.length) log(`workflow task failures: ${[...new Set(wfTaskFailures)].join('; ')}`);
    for (const [run, message] of [...errors].slice(0, 5)) log(`run ${run} failed: ${message}`);
    for (const [run, r] of [...results].filter(([run, r]) => JSON.stringify(r) !== JSON.stringify(expectedResult(run))).slice(0, 5)) {
      log(`run ${run} wrong result: ${JSON.stringify(r).slice(0, 300)}`);
    }
    if (outcome === 'deadline') for (const run of stuck.slice(0, 5)) log(`run ${run} stuck: ${await describeStuck(client, workflowId(run))}`);

    expect({ outcome, failed: [...errors.keys()], stuck }).toEqual({ outcome: 'done', failed: [], stuck: [] });
    expect(correct).toBe(RUNS);
    expect(chaos.kills).toBe(MAX_KILLS);
    expect(chaos.workerRestarts).toBe(chaos.kills);
    expect(chaos.serverRestarts).toBe(1);
    // With three workers on one queue, runs move between processes; a moved run read its offloaded
    // input and tool results back from S3 (nothing is left on the workers' disks to read them from).
    expect(report.runsWithWorkflowTasksOnSeveralWorkers).toBeGreaterThan(0);
    expect(report.runsWithActivitiesOnSeveralWorkers).toBeGreaterThan(0);
    expect(report.s3Objects.payloads).toBeGreaterThanOrEqual(2 * RUNS); // each run's notes and its report
    expect(leftOnDisk).toBe(0);
    // The store is shared: a worker never lacks a transcript another one wrote.
    expect(report.transcriptStoreMisses).toBe(0);
  }, 10 * 60_000);
});

async function listAll(s3: S3Client, bucket: string, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page: ListObjectsV2CommandOutput = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
    keys.push(...(page.Contents ?? []).map((o) => o.Key!));
    token = page.NextContinuationToken;
  } while (token);
  return keys;
}

/** A stuck run's pending activities and last events, to find out why it is stuck. */
async function describeStuck(client: Client, workflowId: string): Promise<string> {
  const handle = client.workflow.getHandle(workflowId);
  const { raw } = await handle.describe();
  const pending = (raw.pendingActivities ?? []).map((a) => `${a.activityType?.name} state ${a.state} attempt ${a.attempt} last failure ${a.lastFailure?.message ?? '-'} worker ${a.lastWorkerIdentity}`);
  const events = ((await handle.fetchHistory()).events ?? []).slice(-6).map((e) => `${e.eventId} ${e.eventType}`);
  return `pending: [${pending.join('; ')}] pendingWorkflowTask: ${JSON.stringify(raw.pendingWorkflowTask ?? null)} last events: ${events.join(', ')}`;
}
