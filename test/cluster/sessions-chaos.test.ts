/**
 * Sessions under chaos on the production-like cluster (Temporal v1.29.1 on PostgreSQL, a shared S3
 * store): three clients send messages at once to one session that continues as new every few turns
 * (historyLimit 40), while a random worker process of three is SIGKILLed every few seconds and the
 * Temporal server is restarted. Every message must be answered once, with its own answer, and be in
 * the conversation once. A client call that fails while the server is away is sent again with the same
 * message id (that is what the id is for); nothing else is retried by the test.
 */
import { getSession, startSession } from '@fabric-harness/sdk/client';
import { say, type RecordedRequest } from '@fabric-harness/sdk/testing';
import { clusterSession } from '../fixtures/cluster-agents';
import { seededRandom } from '../support/cluster-chaos';
import { allKillsMade, runChaos, startChaosCluster, whileServerAway as sendAgainWhileServerAway, type ChaosCluster } from '../support/chaos-cluster';

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

describe('sessions on the cluster under chaos', () => {
  const seed = Number(process.env.FH_CHAOS_SEED ?? Date.now() % 1_000_000);
  const random = seededRandom(seed);
  let stage: ChaosCluster;

  beforeAll(async () => {
    // Each message's answer is a function of its text: a model call retried after a kill answers the same.
    const route = (req: RecordedRequest) => (isTitle(req) ? say('Chaos Session') : say(`answer to ${lastUserText(req)}`));
    stage = await startChaosCluster({ name: 'session-chaos', workers: WORKERS, route, log });
  }, 15 * 60_000);

  afterAll(async () => {
    await stage?.stop();
  }, 120_000);

  it('three clients, kills and a server restart across several continue-as-new: every message answered once, in the conversation once', async () => {
    const { fake, taskQueue } = stage;
    const clients = Array.from({ length: CLIENTS }, () => stage.client());
    const id = `session-chaos-${process.pid}`;
    await startSession(clients[0]!, clusterSession, { id, taskQueue, historyLimit: 40 });
    log(`seed ${seed}, ${CLIENTS} clients x ${MESSAGES_PER_CLIENT} messages, ${WORKERS} workers`);
    const chaos = { kills: 0, workerRestarts: 0, serverRestarts: 0, serverRestartMs: 0, clientRetries: 0 };
    const answered = new Map<string, string>();
    const failed = new Map<string, string>();
    let done = false;
    // Each client's last message waits for the last kill, so the batch is never answered before it.
    let killsMade: Promise<void> = Promise.resolve();

    /** Sends again (same message id) only while the server is away; any other error is a failure. */
    const whileServerAway = <T>(what: string, call: () => Promise<T>): Promise<T> =>
      sendAgainWhileServerAway(what, call, (w, err) => {
        chaos.clientRetries++;
        log(`${w}: server away, sending again (${String(err.message).slice(0, 80)})`);
      });

    const clientLane = async (c: number): Promise<void> => {
      const s = getSession(clients[c]!, id);
      const mine = Array.from({ length: MESSAGES_PER_CLIENT }, (_, i) => ({ messageId: `c${c}-m${i}`, text: `client ${c} message ${i}` }));
      // Half sent and then waited for, half prompted: both paths cross the boundaries.
      await Promise.all(
        mine.map(async (m, i) => {
          try {
            await sleep(random() * 3_000);
            if (i === MESSAGES_PER_CLIENT - 1) await killsMade;
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

    const total = CLIENTS * MESSAGES_PER_CLIENT;
    const chaosLoop = () =>
      runChaos(
        stage,
        {
          random,
          maxKills: MAX_KILLS,
          serverRestartAfterKill: SERVER_RESTART_AFTER_KILL,
          killEveryMs: KILL_EVERY_MS,
          // Spread over the batch: kill k waits for k / (MAX_KILLS + 1) of the messages not held back for
          // the last kill to be answered, so no kill waits on a message that waits on it.
          readyForKill: (k) => answered.size >= Math.floor((k * (total - CLIENTS)) / (MAX_KILLS + 1)),
          progress: () => `${answered.size}/${total} answered`,
          done: () => done,
          log,
        },
        chaos,
      );

    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'deadline'>((resolve) => (timer = setTimeout(() => resolve('deadline'), DEADLINE_MS)));
    const chaosDone = chaosLoop();
    killsMade = allKillsMade(chaos, MAX_KILLS, chaosDone);
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
