/**
 * What the SDK's own entry points print through Temporal's runtime logger (issue 19, item 10), in child
 * processes with no runtime of their own, as a user's script is: createWorker logs one line per entry
 * (Temporal's default prints metadata as multi-line objects), and replayHistory keeps the replay
 * worker's INFO lines to itself, as `fh replay` does.
 */
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { FakeAnthropicServer, callTools, say } from '@fabric-harness/sdk/testing';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');
const AGENTS = path.join(ROOT, 'test/fixtures/cli-agents.js');

const WORKER_SCRIPT = `
const { createWorker } = require('@fabric-harness/sdk/worker');
const { connectClient, startAgent } = require('@fabric-harness/sdk/client');
(async () => {
  const taskQueue = process.env.QUEUE;
  const worker = await createWorker({ agents: ${JSON.stringify(AGENTS)}, taskQueue });
  const client = await connectClient();
  const result = await worker.runUntil(async () => (await startAgent(client, 'cli-calc', { task: 'Add 2 and 3' }, { workflowId: process.env.WID, taskQueue })).result());
  await client.connection.close();
  process.stdout.write(JSON.stringify({ reply: result.reply }) + '\\n');
})().catch((err) => { console.error(err); process.exit(1); });
`;

const REPLAY_SCRIPT = `
const { connectClient, replayHistory } = require('@fabric-harness/sdk/client');
(async () => {
  const client = await connectClient();
  const r = await replayHistory(process.env.WID, { client, agents: ${JSON.stringify(AGENTS)} });
  await client.connection.close();
  process.stdout.write(JSON.stringify({ ok: r.ok }) + '\\n');
})().catch((err) => { console.error(err); process.exit(1); });
`;

describe('Temporal runtime logging of the SDK entry points', () => {
  let fake: FakeAnthropicServer;
  const wid = `runtime-logging-${process.pid}-${Date.now()}`;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    fake = await FakeAnthropicServer.start({ script: [callTools({ name: 'add', input: { a: 2, b: 3 } }), say('5')] });
    env = {
      ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TEMPORAL_') && !k.startsWith('ANTHROPIC_'))),
      TEMPORAL_ADDRESS: process.env.FH_TEST_TEMPORAL_ADDRESS,
      TEMPORAL_NAMESPACE: process.env.FH_TEST_TEMPORAL_NAMESPACE,
      ANTHROPIC_API_KEY: 'test',
      ANTHROPIC_BASE_URL: fake.url,
      WID: wid,
      QUEUE: `runtime-logging-${process.pid}`,
    };
  });
  afterAll(() => fake?.stop());

  it('createWorker logs one line per entry; replayHistory prints no replay-worker INFO lines', async () => {
    const worker = await run(process.execPath, ['-e', WORKER_SCRIPT], { cwd: ROOT, env, timeout: 90_000 });
    expect(worker.stdout.trim()).toBe(JSON.stringify({ reply: '5' }));
    const lines = worker.stderr.split('\n').filter(Boolean);
    expect(lines.some((l) => /\[INFO\] Worker state changed \{"sdkComponent":"worker"/.test(l))).toBe(true);
    // Every line is an entry of its own: a timestamp, the level, the message and the metadata as JSON.
    expect(lines.filter((l) => !/^\d{4}-\d\d-\d\dT[\d:.]+Z \[[A-Z]+\] /.test(l) && !l.startsWith('[fabric-harness]'))).toEqual([]);

    const replay = await run(process.execPath, ['-e', REPLAY_SCRIPT], { cwd: ROOT, env, timeout: 90_000 });
    expect(replay.stdout.trim()).toBe(JSON.stringify({ ok: true }));
    expect(`${replay.stdout}${replay.stderr}`).not.toMatch(/\[INFO\]/);
  });
});
