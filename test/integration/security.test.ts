import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { Client } from '@temporalio/client';
import { startAgent } from '@fabric-harness/sdk/client';
import { FabricHarnessPlugin, FileTranscriptStore } from '@fabric-harness/sdk/worker';
import { FakeAnthropicServer, callTools, say } from '@fabric-harness/sdk/testing';
import { workbench } from '../fixtures/payload-agents';
import { testConnection, type TestConnection } from '../support/temporal';
import { until } from '../support/waiting';
import { killHard } from '../support/worker-process-control';
import { historyText, startEnvWorker, storeText } from './helpers/leaks';

const SECRET = `sk-ant-secret-${process.pid}-${Date.now()}`;

describe('worker secrets and a lost store', () => {
  let t: TestConnection;
  let fake: FakeAnthropicServer;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    t = await testConnection();
    fake = await FakeAnthropicServer.start();
  });
  afterAll(async () => {
    await Promise.all(children.map(killHard));
    await fake?.stop();
    await t?.close();
  });

  async function setup(name: string) {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), `fh-${name}-`));
    const storeDir = await fs.mkdtemp(path.join(os.tmpdir(), `fh-${name}-store-`));
    const taskQueue = `${name}-${process.pid}-${Date.now()}`;
    const env = { FH_TASK_QUEUE: taskQueue, FH_FAKE_URL: fake.url, FH_STORE_DIR: storeDir, ANTHROPIC_API_KEY: SECRET };
    const start = async () => {
      const child = await startEnvWorker(env);
      children.push(child);
      return child;
    };
    const client = new Client({
      connection: t.connection,
      namespace: t.namespace,
      plugins: [new FabricHarnessPlugin({ store: new FileTranscriptStore(storeDir) })],
    });
    return { dir, storeDir, taskQueue, start, client };
  }

  it("bash never sees the worker's ANTHROPIC_API_KEY: not in the tool result, the decoded history, or the store", async () => {
    const s = await setup('secret');
    await s.start();
    fake.enqueue(callTools({ name: 'bash', input: { command: 'echo "key=[$ANTHROPIC_API_KEY]"; env' } }), say('done'));
    const handle = await startAgent(s.client, workbench, { task: 'leak it', dir: s.dir }, { workflowId: `secret-${Date.now()}`, taskQueue: s.taskQueue });
    expect(await handle.result()).toBe('done');
    expect(fake.messageRequests().at(-1)!.headers.authorization).toBe(`Bearer ${SECRET}`); // the worker did have it

    const toolResult = fake.messageRequests().at(-1)!.body.messages.at(-1).content[0].content as string;
    expect(toolResult).toContain('key=[]');
    expect(toolResult).toContain(`HOME=${s.dir}`); // the env ran; it just had no secret in it
    expect(toolResult).not.toContain(SECRET);
    const history = historyText(await handle.fetchHistory());
    expect(history).toContain('key=[]'); // the search sees decoded payloads
    expect(history).not.toContain(SECRET);
    const store = await storeText(s.storeDir);
    expect(store.length).toBeGreaterThan(0);
    expect(store).not.toContain(SECRET);
  }, 60_000);

  it('a lost payload blob fails the workflow task with STORE_BLOB_MISSING naming the blob, instead of an anonymous retry', async () => {
    const s = await setup('lost');
    const first = await s.start();
    const marker = path.join(s.dir, 'sleeping');
    fake.enqueue(
      callTools({ name: 'big_output', input: { kb: 200 } }), // > 128 KB: offloaded, history holds a claim
      callTools({ name: 'bash', input: { command: `touch ${marker}; sleep 30` } }),
      say('never'),
    );
    const handle = await startAgent(s.client, workbench, { task: 'report', dir: s.dir }, { workflowId: `lost-${Date.now()}`, taskQueue: s.taskQueue });
    for (let i = 0; i < 300 && !(await fs.stat(marker).catch(() => null)); i++) await new Promise((r) => setTimeout(r, 100));
    await killHard(first);

    const payloadDir = path.join(s.storeDir, 'payloads');
    const blobs = await fs.readdir(payloadDir);
    expect(blobs.length).toBeGreaterThan(0);
    await Promise.all(blobs.map((b) => fs.rm(path.join(payloadDir, b))));

    await s.start(); // a fresh worker, no cache: it must replay the history and fetch the claim
    await handle.workflow.signal('wake-up'); // any signal makes a workflow task now

    let message = '';
    const deadline = Date.now() + 30_000;
    while (!message && Date.now() < deadline) {
      const events = (await handle.fetchHistory()).events ?? [];
      message = events.map((e) => e.workflowTaskFailedEventAttributes?.failure?.message ?? '').find((m) => m.includes('STORE_BLOB_MISSING')) ?? '';
      if (!message) await new Promise((r) => setTimeout(r, 500));
    }
    expect(message).toContain('STORE_BLOB_MISSING');
    expect(blobs.some((b) => message.includes(`payloads/${b}`))).toBe(true); // names the blob
    expect(message).toContain(s.storeDir); // and where it was looked for
    expect(message).toMatch(/offloaded (by workflow lost-\d+ run [0-9a-f-]+|as the result of activity \d+ \(fh\w+\))/); // and what offloaded it
    expect(message).toContain('When a blob is missing'); // and where the way out is written
    // The run cannot go on: the new worker's missing-blob reaper ends it (store-blob-missing.test.ts has the rest).
    await until('the run terminated', async () => (await handle.workflow.describe()).status.name === 'TERMINATED');
  }, 90_000);
});
