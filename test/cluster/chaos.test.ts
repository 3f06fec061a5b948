/**
 * Many workers, one cluster, one shared S3 store, and chaos: 3 worker processes that share nothing but the
 * Temporal server (v1.29.1 on PostgreSQL) and a MinIO bucket run 100 agent runs (tool calls, a >128 KB
 * input and a >128 KB tool result, both offloaded to the store) while a random worker is SIGKILLed and
 * restarted every few seconds and the Temporal server is restarted once. Every run must complete with the
 * result its tools and inputs determine; the figures (runs, kills, restarts, runs that changed worker,
 * transcript store misses, wall time) are printed.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CreateBucketCommand, ListObjectsV2Command, S3Client, type ListObjectsV2CommandOutput } from '@aws-sdk/client-s3';
import { Client, Connection, isGrpcServiceError, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { getAgentHandle, startAgent } from '@fabric-harness/sdk/client';
import { FakeAnthropicServer } from '@fabric-harness/sdk/testing';
import { startMinio, type MinioServer } from '../support/provision/minio';
import { FabricHarnessPlugin, S3Store } from '@fabric-harness/sdk/worker';
import { FH_SEARCH_ATTRIBUTES } from '../../src/wire/search-attributes';
import { startTemporalCluster, type TemporalCluster } from '../support/provision/temporal-server';
import { CLUSTER_BIG_KB, CLUSTER_NOTES_BYTES, clusterChecksum, clusterNotes, clusterReply, clusterReport, clusterWorker, fnv1a } from '../fixtures/cluster-agents';
import { chaosRoute, killSlot, seededRandom, startSlot, traceRun, type RunTrace, type WorkerSlot } from '../support/cluster-chaos';

const RUNS = Number(process.env.FH_CHAOS_RUNS ?? 100);
const CONCURRENCY = 20;
const WORKERS = 3;
const MAX_KILLS = 8;
/** The server restart comes after this many kills. */
const SERVER_RESTART_AFTER_KILL = 3;
const KILL_EVERY_MS: [number, number] = [2_000, 4_000];
/**
 * Kill k also waits for k / (MAX_KILLS + 2) of the runs to have finished: spread over the whole batch
 * however fast the machine is (by time alone, a fast one finishes before the last kills).
 */
const killProgress = (k: number): number => Math.floor((k * RUNS) / (MAX_KILLS + 2));
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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (line: string) => process.stderr.write(`[chaos] ${line}\n`);

/** gRPC status UNAVAILABLE. */
const UNAVAILABLE = 14;

/** The server is away (restarting) and the client's own gRPC retries gave up. Anything else is a real failure. */
function isUnavailable(err: unknown): boolean {
  for (let e = err; e; e = (e as { cause?: unknown }).cause) if (isGrpcServiceError(e) && e.code === UNAVAILABLE) return true;
  return false;
}

describe('the cluster under chaos: 3 worker processes, a shared S3 store, kills and a server restart', () => {
  const seed = Number(process.env.FH_CHAOS_SEED ?? Date.now() % 1_000_000);
  const random = seededRandom(seed);
  const bucket = `fh-chaos-${process.pid}`;
  const prefix = 'fh';
  const taskQueue = `cluster-chaos-${process.pid}`;
  let cluster: TemporalCluster;
  let minio: MinioServer;
  let s3: S3Client;
  let fake: FakeAnthropicServer;
  let connection: Connection;
  let client: Client;
  let root: string;
  const slots: WorkerSlot[] = [];
  /** Worker restarts under way: afterAll waits for them, so none comes up after the slots are killed. */
  const restarts = new Set<Promise<void>>();
  let workerEnv: Record<string, string>;

  beforeAll(async () => {
    const progress = (line: string) => process.stderr.write(`[cluster] ${line}\n`);
    [cluster, minio] = await Promise.all([startTemporalCluster({ onProgress: progress }), startMinio({ onProgress: progress })]);
    s3 = new S3Client({
      endpoint: minio.endpoint,
      region: minio.region,
      forcePathStyle: true,
      credentials: { accessKeyId: minio.accessKeyId, secretAccessKey: minio.secretAccessKey },
    });
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    fake = await FakeAnthropicServer.start({ route: chaosRoute() });
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-chaos-'));
    workerEnv = {
      FH_TEST_TEMPORAL_ADDRESS: cluster.address,
      FH_TEST_TEMPORAL_NAMESPACE: cluster.namespace,
      FH_TASK_QUEUE: taskQueue,
      FH_FAKE_URL: fake.url,
      FH_S3_BUCKET: bucket,
      FH_S3_PREFIX: prefix,
      AWS_ENDPOINT_URL_S3: minio.endpoint,
      AWS_ACCESS_KEY_ID: minio.accessKeyId,
      AWS_SECRET_ACCESS_KEY: minio.secretAccessKey,
      AWS_REGION: minio.region,
    };
    for (let i = 0; i < WORKERS; i++) slots.push({ index: i, dir: path.join(root, `worker-${i}`), pids: [], failedStarts: 0 });
    await Promise.all(slots.map((slot) => startSlot(slot, workerEnv)));
    connection = await Connection.connect({ address: cluster.address });
    const store = new S3Store({
      bucket,
      prefix,
      endpoint: minio.endpoint,
      region: minio.region,
      credentials: { accessKeyId: minio.accessKeyId, secretAccessKey: minio.secretAccessKey },
    });
    client = new Client({ connection, namespace: cluster.namespace, plugins: [new FabricHarnessPlugin({ store })] });
  }, 15 * 60_000);

  afterAll(async () => {
    await Promise.allSettled([...restarts]);
    await Promise.all(slots.map((slot) => killSlot(slot)));
    await connection?.close();
    await fake?.stop();
    s3?.destroy();
    await Promise.all([cluster?.stop(), minio?.stop()]);
    if (root) await fs.rm(root, { recursive: true, force: true });
  }, 120_000);

  it('registers every search attribute the SDK uses', async () => {
    const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace: cluster.namespace });
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

    /** Retries a client call only while the server is unreachable (its restart), never on other errors. */
    const whileServerAway = async <T>(what: string, call: () => Promise<T>): Promise<T> => {
      for (const deadline = Date.now() + 120_000; ; ) {
        try {
          return await call();
        } catch (err) {
          if (!isUnavailable(err) || Date.now() > deadline) throw err;
          chaos.clientRetries++;
          log(`${what}: server unavailable, retrying (${(err as Error).message.slice(0, 80)})`);
          await sleep(1000);
        }
      }
    };

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
          while (next < RUNS && !abort.signal.aborted) await runOne(next++);
        }),
      );
    };

    // A killed worker comes back in the background while the next kill may already take another one;
    // at least two of the three stay up (a kill waits for that), so runs always have somewhere to go.
    const restartLater = (slot: WorkerSlot): void => {
      const restart = (async () => {
        await sleep(500 + random() * 1500);
        await startSlot(slot, workerEnv, log);
        chaos.workerRestarts++;
      })();
      restarts.add(restart);
      void restart.finally(() => restarts.delete(restart));
    };
    const chaosLoop = async (): Promise<void> => {
      while (!done && chaos.kills < MAX_KILLS) {
        const notBefore = Date.now() + KILL_EVERY_MS[0] + random() * (KILL_EVERY_MS[1] - KILL_EVERY_MS[0]);
        const up = () => slots.filter((s) => s.child);
        while (!done && (Date.now() < notBefore || results.size < killProgress(chaos.kills + 1) || up().length < 2)) await sleep(200);
        if (done) break;
        const candidates = up();
        const slot = candidates[Math.floor(random() * candidates.length)]!;
        const pid = slot.child?.pid;
        await killSlot(slot);
        chaos.kills++;
        log(`t+${Math.round((Date.now() - started) / 1000)}s SIGKILL worker ${slot.index} (pid ${pid}); ${results.size}/${RUNS} runs done`);
        restartLater(slot);
        if (chaos.kills === SERVER_RESTART_AFTER_KILL) {
          const t0 = Date.now();
          log(`t+${Math.round((t0 - started) / 1000)}s restarting the Temporal server (pid ${cluster.serverPid()})`);
          await cluster.restartServer();
          chaos.serverRestarts++;
          chaos.serverRestartMs = Date.now() - t0;
          log(`server back in ${chaos.serverRestartMs} ms (pid ${cluster.serverPid()})`);
        }
      }
      while (restarts.size) await Promise.all([...restarts]);
    };

    let deadlineTimer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'deadline'>((resolve) => (deadlineTimer = setTimeout(() => resolve('deadline'), RUNS_DEADLINE_MS)));
    const chaosDone = chaosLoop();
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
