import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { Client } from '@temporalio/client';
import { startAgent } from '@fabric-harness/sdk/client';
import { FabricHarnessPlugin, FileTranscriptStore } from '@fabric-harness/sdk/worker';
import { FakeAnthropicServer, callTools, say } from '@fabric-harness/sdk/testing';
import { slowAgent } from '../fixtures/agents';
import { testConnection, type TestConnection } from '../support/temporal';
import { killHard, startWorkerProcess } from '../support/worker-process-control';

async function waitForFile(file: string, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      await fs.access(file);
      return;
    } catch {
      if (Date.now() > end) throw new Error(`timed out waiting for ${file}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

describe('a worker killed while a tool activity runs', () => {
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

  it('completes on a new worker with result and history intact', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-kill-'));
    const storeDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-kill-store-'));
    const taskQueue = `durability-${process.pid}-${Date.now()}`;
    fake.enqueue(callTools({ name: 'slow_step', input: { dir, label: 'job' } }), say('The job is done.'));

    const first = await startWorkerProcess({ taskQueue, fakeUrl: fake.url, storeDir });
    children.push(first);
    const client = new Client({
      connection: t.connection,
      namespace: t.namespace,
      plugins: [new FabricHarnessPlugin({ store: new FileTranscriptStore(storeDir) })],
    });
    const workflowId = `kill-${Date.now()}`;
    const handle = await startAgent(client, slowAgent, { task: 'Run the job.', dir }, { workflowId, taskQueue });

    await waitForFile(path.join(dir, 'started-job-1'), 30_000);
    await killHard(first); // SIGKILL mid-activity: no graceful shutdown, no activity completion
    const second = await startWorkerProcess({ taskQueue, fakeUrl: fake.url, storeDir });
    children.push(second);

    expect(await handle.result()).toBe('The job is done.');
    expect((await fs.readdir(dir)).sort()).toEqual(['started-job-1', 'started-job-2']);

    const history = await handle.fetchHistory();
    const events = history.events!;
    const toolScheduled = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'fhTool');
    expect(toolScheduled).toHaveLength(1); // one tool call, retried as attempts of the same activity
    const started = events.find(
      (e) => e.activityTaskStartedEventAttributes?.scheduledEventId?.toString() === toolScheduled[0].eventId?.toString(),
    );
    expect(started!.activityTaskStartedEventAttributes!.attempt).toBe(2);
    const completed = events.find((e) => e.activityTaskCompletedEventAttributes?.scheduledEventId?.toString() === toolScheduled[0].eventId?.toString());
    expect(completed).toBeDefined();
    expect(events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'fhModel')).toHaveLength(2);
    // The model saw the second attempt's result, once.
    const lastRequest = fake.messageRequests().at(-1)!.body;
    expect(lastRequest.messages.at(-1).content[0].content).toBe('job done on attempt 2');
  }, 120_000);
});
