/**
 * Sessions under chaos on the production-like cluster (Temporal v1.29.1 on PostgreSQL, a shared S3
 * store): three clients send messages at once to one session that continues as new every few turns
 * (historyLimit 40), while a random worker process of three is SIGKILLed every few seconds and the
 * Temporal server is restarted. Every message must be answered once, with its own answer, and be in
 * the conversation once. A client call that fails while the server is away is sent again with the same
 * message id (that is what the id is for); nothing else is retried by the test.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { Client, Connection, isGrpcServiceError } from '@temporalio/client';
import { getSession, startSession } from '@fabric-harness/sdk/client';
import { FakeAnthropicServer, say, type RecordedRequest } from '@fabric-harness/sdk/testing';
import { startMinio, type MinioServer } from '../support/provision/minio';
import { FabricHarnessPlugin, S3Store } from '@fabric-harness/sdk/worker';
import { startTemporalCluster, type TemporalCluster } from '../support/provision/temporal-server';
import { clusterSession } from '../fixtures/cluster-agents';
import { killSlot, seededRandom, startSlot, type WorkerSlot } from '../support/cluster-chaos';

const CLIENTS = 3;
const MESSAGES_PER_CLIENT = Number(process.env.FH_SESSION_CHAOS_MESSAGES ?? 20);
const WORKERS = 3;
const MAX_KILLS = 5;
const SERVER_RESTART_AFTER_KILL = 2;
const KILL_EVERY_MS: [number, number] = [2_000, 4_000];
const DEADLINE_MS = 8 * 60_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (line: string) => process.stderr.write(`[sessions-chaos] ${line}\n`);
const isTitle = (r: RecordedRequest) => typeof r.body?.system === 'string' && /title/i.test(r.body.system);
const lastUserText = (r: RecordedRequest): string => {
  const msgs = (r.body?.messages ?? []) as Array<{ role: string; content: string | Array<{ type: string; text?: string }> }>;
  const user = [...msgs].reverse().find((m) => m.role === 'user');
  const c = user?.content ?? '';
  return typeof c === 'string' ? c : c.filter((b) => b.type === 'text').map((b) => b.text ?? '').join('\n');
};

function isUnavailable(err: unknown): boolean {
  for (let e = err; e; e = (e as { cause?: unknown }).cause) if (isGrpcServiceError(e) && (e.code === 14 || e.code === 4)) return true;
  return /unavailable|ECONNREFUSED|connection refused/i.test(String((err as Error)?.message ?? ''));
}

describe('sessions on the cluster under chaos', () => {
  const seed = Number(process.env.FH_CHAOS_SEED ?? Date.now() % 1_000_000);
  const random = seededRandom(seed);
  const bucket = `fh-session-chaos-${process.pid}`;
  const taskQueue = `session-chaos-${process.pid}`;
  let cluster: TemporalCluster;
  let minio: MinioServer;
  let s3: S3Client;
  let fake: FakeAnthropicServer;
  let connection: Connection;
  let root: string;
  let workerEnv: Record<string, string>;
  const slots: WorkerSlot[] = [];
  const restarts = new Set<Promise<void>>();

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
    // Each message's answer is a function of its text: a model call retried after a kill answers the same.
    fake = await FakeAnthropicServer.start({ route: (req) => (isTitle(req) ? say('Chaos Session') : say(`answer to ${lastUserText(req)}`)) });
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-session-chaos-'));
    workerEnv = {
      FH_TEST_TEMPORAL_ADDRESS: cluster.address,
      FH_TEST_TEMPORAL_NAMESPACE: cluster.namespace,
      FH_TASK_QUEUE: taskQueue,
      FH_FAKE_URL: fake.url,
      FH_S3_BUCKET: bucket,
      FH_S3_PREFIX: 'fh',
      AWS_ENDPOINT_URL_S3: minio.endpoint,
      AWS_ACCESS_KEY_ID: minio.accessKeyId,
      AWS_SECRET_ACCESS_KEY: minio.secretAccessKey,
      AWS_REGION: minio.region,
    };
    for (let i = 0; i < WORKERS; i++) slots.push({ index: i, dir: path.join(root, `worker-${i}`), pids: [], failedStarts: 0 });
    await Promise.all(slots.map((slot) => startSlot(slot, workerEnv)));
    connection = await Connection.connect({ address: cluster.address });
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

  it('three clients, kills and a server restart across several continue-as-new: every message answered once, in the conversation once', async () => {
    const store = new S3Store({
      bucket,
      prefix: 'fh',
      endpoint: minio.endpoint,
      region: minio.region,
      credentials: { accessKeyId: minio.accessKeyId, secretAccessKey: minio.secretAccessKey },
    });
    const clients = Array.from({ length: CLIENTS }, () => new Client({ connection, namespace: cluster.namespace, plugins: [new FabricHarnessPlugin({ store })] }));
    const id = `session-chaos-${process.pid}`;
    await startSession(clients[0]!, clusterSession, { id, taskQueue, historyLimit: 40 });
    log(`seed ${seed}, ${CLIENTS} clients x ${MESSAGES_PER_CLIENT} messages, ${WORKERS} workers`);
    const chaos = { kills: 0, workerRestarts: 0, serverRestarts: 0, clientRetries: 0 };
    const answered = new Map<string, string>();
    const failed = new Map<string, string>();
    let done = false;

    /** Sends again (same message id) only while the server is away; any other error is a failure. */
    const whileServerAway = async <T>(what: string, call: () => Promise<T>): Promise<T> => {
      for (const deadline = Date.now() + 180_000; ; ) {
        try {
          return await call();
        } catch (err) {
          if (!isUnavailable(err) || Date.now() > deadline) throw err;
          chaos.clientRetries++;
          log(`${what}: server away, sending again (${String((err as Error).message).slice(0, 80)})`);
          await sleep(1000);
        }
      }
    };

    const clientLane = async (c: number): Promise<void> => {
      const s = getSession(clients[c]!, id);
      const mine = Array.from({ length: MESSAGES_PER_CLIENT }, (_, i) => ({ messageId: `c${c}-m${i}`, text: `client ${c} message ${i}` }));
      // Half sent and then waited for, half prompted: both paths cross the boundaries.
      await Promise.all(
        mine.map(async (m, i) => {
          try {
            await sleep(random() * 3_000);
            const reply =
              i % 2 === 0
                ? await whileServerAway(`prompt ${m.messageId}`, () => s.prompt(m.text, { messageId: m.messageId }))
                : (await whileServerAway(`send ${m.messageId}`, () => s.send(m.text, { messageId: m.messageId })),
                  await whileServerAway(`reply ${m.messageId}`, () => s.reply(m.messageId)));
            answered.set(m.messageId, reply);
          } catch (err) {
            failed.set(m.messageId, `${(err as { code?: string }).code ?? ''} ${(err as Error).message}`.slice(0, 200));
          }
        }),
      );
    };

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
      const total = CLIENTS * MESSAGES_PER_CLIENT;
      while (!done && chaos.kills < MAX_KILLS) {
        const notBefore = Date.now() + KILL_EVERY_MS[0] + random() * (KILL_EVERY_MS[1] - KILL_EVERY_MS[0]);
        const up = () => slots.filter((s) => s.child);
        // Spread over the batch: kill k waits for k / (MAX_KILLS + 2) of the messages to be answered.
        while (!done && (Date.now() < notBefore || answered.size < Math.floor(((chaos.kills + 1) * total) / (MAX_KILLS + 2)) || up().length < 2)) await sleep(200);
        if (done) break;
        const candidates = up();
        const slot = candidates[Math.floor(random() * candidates.length)]!;
        await killSlot(slot);
        chaos.kills++;
        log(`SIGKILL worker ${slot.index}; ${answered.size}/${total} answered`);
        restartLater(slot);
        if (chaos.kills === SERVER_RESTART_AFTER_KILL) {
          log('restarting the Temporal server');
          await cluster.restartServer();
          chaos.serverRestarts++;
        }
      }
      while (restarts.size) await Promise.all([...restarts]);
    };

    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'deadline'>((resolve) => (timer = setTimeout(() => resolve('deadline'), DEADLINE_MS)));
    const chaosDone = chaosLoop();
    const lanes = Promise.all(Array.from({ length: CLIENTS }, (_, c) => clientLane(c)));
    const outcome = await Promise.race([lanes.then(() => 'done' as const), deadline]);
    clearTimeout(timer);
    done = true;
    await chaosDone;

    const s = getSession(clients[0]!, id);
    const info = await whileServerAway('info', () => s.info());
    const conversation = (await whileServerAway('messages', () => s.messages())).filter((m) => m.type === 'user').map((m) => (m as { text: string }).text);
    const expected = Array.from({ length: CLIENTS }, (_, c) => Array.from({ length: MESSAGES_PER_CLIENT }, (_, i) => `client ${c} message ${i}`)).flat();
    const wrong = [...answered].filter(([mid, reply]) => {
      const [, c, i] = /^c(\d+)-m(\d+)$/.exec(mid)!;
      return reply !== `answer to client ${c} message ${i}`;
    });
    const inConversation = new Map<string, number>();
    for (const t of conversation) inConversation.set(t, (inConversation.get(t) ?? 0) + 1);
    const report = {
      seed,
      outcome,
      answered: answered.size,
      failed: failed.size,
      wrongReplies: wrong.length,
      messageCount: info.messageCount,
      continuedRuns: info.continuedRuns,
      workerKills: chaos.kills,
      workerRestarts: chaos.workerRestarts,
      serverRestarts: chaos.serverRestarts,
      clientCallsSentAgainWhileServerAway: chaos.clientRetries,
      modelRequests: fake.messageRequests().filter((r) => !isTitle(r)).length,
    };
    console.log(`sessions chaos report:\n${JSON.stringify(report, null, 2)}`);
    for (const [mid, why] of [...failed].slice(0, 5)) log(`${mid} failed: ${why}`);

    expect({ outcome, failed: [...failed.keys()], wrong }).toEqual({ outcome: 'done', failed: [], wrong: [] });
    expect(answered.size).toBe(expected.length);
    // In the conversation once each (a message run twice would be there twice), and counted once.
    expect(expected.filter((t) => inConversation.get(t) !== 1)).toEqual([]);
    expect(info.messageCount).toBe(expected.length);
    expect(info.continuedRuns).toBeGreaterThanOrEqual(3);
    expect(chaos.kills).toBe(MAX_KILLS);
    expect(chaos.serverRestarts).toBe(1);
    await whileServerAway('end', () => s.end());
  }, 10 * 60_000);
});
