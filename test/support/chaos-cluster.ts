/**
 * The stage both cluster chaos tests play on: the Temporal server (v1.29.1 on PostgreSQL), a MinIO
 * bucket as the one store the worker processes share, the fake model, and a pool of worker processes
 * (support/cluster-chaos.ts) with the kill loop that SIGKILLs them, brings them back in the background
 * and restarts the server once. Each test brings its own workload and its own "how far along" measure.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { Client, Connection, isGrpcServiceError } from '@temporalio/client';
import { FakeAnthropicServer, type FakeRoute } from '@fabric-harness/sdk/testing';
import { FabricHarnessPlugin, S3Store } from '@fabric-harness/sdk/worker';
import { startMinio, type MinioServer } from './provision/minio';
import { startTemporalCluster, type TemporalCluster } from './provision/temporal-server';
import { killSlot, startSlot, type WorkerSlot } from './cluster-chaos';

export interface ChaosCluster {
  cluster: TemporalCluster;
  minio: MinioServer;
  s3: S3Client;
  fake: FakeAnthropicServer;
  connection: Connection;
  bucket: string;
  prefix: string;
  taskQueue: string;
  slots: WorkerSlot[];
  /** A client with the SDK's plugin over the shared S3 store (a new one per call: tests may want several). */
  client(): Client;
  /** Stops everything: waits for restarts under way, kills the workers, the servers, removes the disk. */
  stop(): Promise<void>;
}

export interface ChaosClusterOptions {
  /** Names the bucket, task queue and temp dir (with the pid). */
  name: string;
  workers: number;
  route: FakeRoute;
  log: (line: string) => void;
}

/** Per test process: which chaos cluster's worker restarts are under way (stop waits for them). */
const restartsOf = new WeakMap<ChaosCluster, Set<Promise<void>>>();
const envOf = new WeakMap<ChaosCluster, Record<string, string>>();

export async function startChaosCluster(o: ChaosClusterOptions): Promise<ChaosCluster> {
  const progress = (line: string) => process.stderr.write(`[cluster] ${line}\n`);
  const [cluster, minio] = await Promise.all([startTemporalCluster({ onProgress: progress }), startMinio({ onProgress: progress })]);
  const bucket = `fh-${o.name}-${process.pid}`;
  const prefix = 'fh';
  const taskQueue = `${o.name}-${process.pid}`;
  const credentials = { accessKeyId: minio.accessKeyId, secretAccessKey: minio.secretAccessKey };
  const s3 = new S3Client({ endpoint: minio.endpoint, region: minio.region, forcePathStyle: true, credentials });
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  const fake = await FakeAnthropicServer.start({ route: o.route });
  const root = await fs.mkdtemp(path.join(os.tmpdir(), `fh-${o.name}-`));
  const workerEnv = {
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
  const slots: WorkerSlot[] = Array.from({ length: o.workers }, (_, i) => ({ index: i, dir: path.join(root, `worker-${i}`), pids: [], failedStarts: 0 }));
  await Promise.all(slots.map((slot) => startSlot(slot, workerEnv)));
  const connection = await Connection.connect({ address: cluster.address });
  const restarts = new Set<Promise<void>>();
  const stage: ChaosCluster = {
    cluster,
    minio,
    s3,
    fake,
    connection,
    bucket,
    prefix,
    taskQueue,
    slots,
    client: () =>
      new Client({
        connection,
        namespace: cluster.namespace,
        plugins: [new FabricHarnessPlugin({ store: new S3Store({ bucket, prefix, endpoint: minio.endpoint, region: minio.region, credentials }) })],
      }),
    async stop() {
      await Promise.allSettled([...restarts]);
      await Promise.all(slots.map((slot) => killSlot(slot)));
      await connection.close();
      await fake.stop();
      s3.destroy();
      await Promise.all([cluster.stop(), minio.stop()]);
      await fs.rm(root, { recursive: true, force: true });
    },
  };
  restartsOf.set(stage, restarts);
  envOf.set(stage, workerEnv);
  return stage;
}

export interface ChaosSchedule {
  random: () => number;
  maxKills: number;
  /** The server restart comes right after this kill. */
  serverRestartAfterKill: number;
  /** Between kills, at random in [min, max] ms. */
  killEveryMs: [number, number];
  /** Kill k (1-based) also waits for this: spread over the workload however fast the machine is. */
  readyForKill: (k: number) => boolean;
  /** How far along the workload is, for the log line of each kill. */
  progress: () => string;
  done: () => boolean;
  log: (line: string) => void;
}

export interface ChaosCounts {
  kills: number;
  workerRestarts: number;
  serverRestarts: number;
  serverRestartMs: number;
}

/**
 * SIGKILLs a random live worker on the schedule, brings it back 0.5-2 s later in the background (the next
 * kill may take another one meanwhile: at least two stay up, so the work always has somewhere to go), and
 * restarts the server once. Resolves when the kills are done (or the workload is) and every worker is back.
 */
export async function runChaos(stage: ChaosCluster, s: ChaosSchedule, counts: ChaosCounts): Promise<void> {
  const restarts = restartsOf.get(stage)!;
  const env = envOf.get(stage)!;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const started = Date.now();
  const at = () => `t+${Math.round((Date.now() - started) / 1000)}s`;
  const restartLater = (slot: WorkerSlot): void => {
    const restart = (async () => {
      await sleep(500 + s.random() * 1500);
      await startSlot(slot, env, s.log);
      counts.workerRestarts++;
    })();
    restarts.add(restart);
    void restart.finally(() => restarts.delete(restart));
  };
  while (!s.done() && counts.kills < s.maxKills) {
    const notBefore = Date.now() + s.killEveryMs[0] + s.random() * (s.killEveryMs[1] - s.killEveryMs[0]);
    const up = () => stage.slots.filter((slot) => slot.child);
    while (!s.done() && (Date.now() < notBefore || !s.readyForKill(counts.kills + 1) || up().length < 2)) await sleep(200);
    if (s.done()) break;
    const candidates = up();
    const slot = candidates[Math.floor(s.random() * candidates.length)]!;
    const pid = slot.child?.pid;
    await killSlot(slot);
    counts.kills++;
    s.log(`${at()} SIGKILL worker ${slot.index} (pid ${pid}); ${s.progress()}`);
    restartLater(slot);
    if (counts.kills === s.serverRestartAfterKill) {
      const t0 = Date.now();
      s.log(`${at()} restarting the Temporal server (pid ${stage.cluster.serverPid()})`);
      await stage.cluster.restartServer();
      counts.serverRestarts++;
      counts.serverRestartMs = Date.now() - t0;
      s.log(`server back in ${counts.serverRestartMs} ms (pid ${stage.cluster.serverPid()})`);
    }
  }
  while (restarts.size) await Promise.all([...restarts]);
}

/**
 * Resolves once the schedule has made all its kills, or has stopped (`chaosDone`). The tail of a workload
 * waits on it, so the workload cannot finish before the last kill: a backlog that drains in a burst after
 * the server restart once left the fifth kill nothing to land on, and the kill count short.
 */
export async function allKillsMade(counts: ChaosCounts, maxKills: number, chaosDone: Promise<void>): Promise<void> {
  let stopped = false;
  void chaosDone.finally(() => (stopped = true));
  while (!stopped && counts.kills < maxKills) await new Promise((r) => setTimeout(r, 200));
}

/** The server is away (restarting) and the client's own gRPC retries gave up. Anything else is a real failure. */
export function isServerAway(err: unknown): boolean {
  // UNAVAILABLE, and DEADLINE_EXCEEDED for a call that was in flight when the server went.
  for (let e = err; e; e = (e as { cause?: unknown }).cause) if (isGrpcServiceError(e) && (e.code === 14 || e.code === 4)) return true;
  return /unavailable|ECONNREFUSED|connection refused/i.test(String((err as Error)?.message ?? ''));
}

/**
 * Sends a client call again only while the server is away (its restart), never on other errors, for up
 * to `forMs`. `onRetry` counts and logs each resend.
 */
export async function whileServerAway<T>(what: string, call: () => Promise<T>, onRetry: (what: string, err: Error) => void, forMs = 180_000): Promise<T> {
  for (const deadline = Date.now() + forMs; ; ) {
    try {
      return await call();
    } catch (err) {
      if (!isServerAway(err) || Date.now() > deadline) throw err;
      onRetry(what, err as Error);
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}
