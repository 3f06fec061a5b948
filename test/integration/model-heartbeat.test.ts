import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { Client } from '@temporalio/client';
import { startAgent } from '@fabric-harness/sdk/client';
import { FabricHarnessPlugin, FileTranscriptStore } from '@fabric-harness/sdk/worker';
import { FakeAnthropicServer, say } from '@fabric-harness/sdk/testing';
import { strictEcho } from '../fixtures/agents';
import { startDelayProxy, type DelayProxy } from '../support/delay-proxy';
import { testConnection, type TestConnection } from '../support/temporal';
import { killHard, startWorkerProcess } from '../support/worker-process-control';

describe('a worker killed during a model call', () => {
  let t: TestConnection;
  let fake: FakeAnthropicServer;
  let proxy: DelayProxy;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    t = await testConnection();
    fake = await FakeAnthropicServer.start();
    proxy = await startDelayProxy(fake.url);
  });
  afterAll(async () => {
    await Promise.all(children.map(killHard));
    await proxy?.stop();
    await fake?.stop();
    await t?.close();
  });

  it('is noticed through heartbeats and the call completes on another worker well under a minute', async () => {
    const storeDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-hb-store-'));
    const taskQueue = `model-heartbeat-${process.pid}-${Date.now()}`;
    proxy.delayNext(10 * 60_000); // the first attempt's model call never comes back
    fake.enqueue(say('answered after the crash'));

    const first = await startWorkerProcess({ taskQueue, fakeUrl: proxy.url, storeDir });
    children.push(first);
    const client = new Client({
      connection: t.connection,
      namespace: t.namespace,
      plugins: [new FabricHarnessPlugin({ store: new FileTranscriptStore(storeDir) })],
    });
    const handle = await startAgent(client, strictEcho, { message: 'hello' }, { workflowId: `model-hb-${Date.now()}`, taskQueue });

    await proxy.held(); // the model call is in flight on the first worker
    await killHard(first);
    const killedAt = Date.now();
    const second = await startWorkerProcess({ taskQueue, fakeUrl: proxy.url, storeDir });
    children.push(second);

    expect(await handle.result()).toBe('answered after the crash');
    const recoveryMs = Date.now() - killedAt;
    console.log(`model call recovered ${recoveryMs} ms after SIGKILL`);
    expect(recoveryMs).toBeLessThan(45_000);

    const events = (await handle.fetchHistory()).events!;
    const modelScheduled = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'fhModel');
    expect(modelScheduled).toHaveLength(1);
    expect(modelScheduled[0]!.activityTaskScheduledEventAttributes!.heartbeatTimeout).toBeDefined();
    const started = events.find((e) => e.activityTaskStartedEventAttributes?.scheduledEventId?.toString() === modelScheduled[0]!.eventId?.toString());
    expect(started!.activityTaskStartedEventAttributes!.attempt).toBe(2);
  }, 120_000);
});
