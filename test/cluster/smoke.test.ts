/**
 * Smoke test of the cluster tier: an agent with tool calls runs on the Temporal server v1.29.1 on
 * PostgreSQL (not the dev server), is found by its FhAgent search attribute, and survives a server
 * restart: its history stays readable and the same worker runs a new agent afterwards.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { startAgent, getAgentHandle } from '@fabric-harness/sdk/client';
import { FakeAnthropicServer, callTools, say } from '@fabric-harness/sdk/testing';
import { startTemporalCluster, type TemporalCluster } from '../support/provision/temporal-server';
import { calculator } from '../fixtures/agents';
import { startTestWorker, type TestWorker } from '../support/test-worker';

const FhAgent = defineSearchAttributeKey('FhAgent', SearchAttributeType.KEYWORD);

describe('the cluster tier: Temporal server on PostgreSQL', () => {
  let cluster: TemporalCluster;
  let fake: FakeAnthropicServer;
  let w: TestWorker;
  let dir: string;

  beforeAll(async () => {
    cluster = await startTemporalCluster({ onProgress: (line) => process.stderr.write(`[cluster] ${line}\n`) });
    process.env.FH_TEST_TEMPORAL_ADDRESS = cluster.address;
    process.env.FH_TEST_TEMPORAL_NAMESPACE = cluster.namespace;
    fake = await FakeAnthropicServer.start();
    w = await startTestWorker({ name: 'cluster-smoke', baseURL: fake.url });
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-cluster-smoke-'));
  }, 600_000);
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
    await cluster?.stop();
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  const run = async (workflowId: string) => {
    fake.enqueue(
      callTools({ name: 'add', input: { a: 2, b: 3 } }),
      callTools({ name: 'write_file', input: { path: `${workflowId}.txt`, content: '5' } }),
      say('The sum is 5.'),
    );
    const handle = await startAgent(
      w.client,
      calculator,
      { task: 'Add 2 and 3, then save the sum', dir },
      { workflowId, taskQueue: w.taskQueue, typedSearchAttributes: [{ key: FhAgent, value: 'calculator' }] },
    );
    return handle.result();
  };

  it('runs an agent with tool calls, findable by its FhAgent search attribute', async () => {
    const info = await w.t.connection.workflowService.getSystemInfo({});
    expect(info.serverVersion).toBe('1.29.1');
    const workflowId = `cluster-calc-${Date.now()}`;
    const result = await run(workflowId);
    expect(result.reply).toBe('The sum is 5.');
    expect(result.usage.modelCalls).toBe(3);
    expect(await fs.readFile(path.join(dir, `${workflowId}.txt`), 'utf8')).toBe('5');

    // Visibility (the temporal_visibility database) is written asynchronously.
    const found: string[] = [];
    for (const deadline = Date.now() + 30_000; Date.now() < deadline && !found.includes(workflowId); ) {
      found.length = 0;
      for await (const wf of w.client.workflow.list({ query: `FhAgent = 'calculator' AND ExecutionStatus = 'Completed'` })) found.push(wf.workflowId);
      if (!found.includes(workflowId)) await new Promise((r) => setTimeout(r, 500));
    }
    expect(found).toContain(workflowId);
  });

  it('survives a server restart: history is kept in PostgreSQL, and the worker carries on', async () => {
    const before = `cluster-before-${Date.now()}`;
    expect((await run(before)).reply).toBe('The sum is 5.');
    const pid = cluster.serverPid();
    const restartStarted = Date.now();
    await cluster.restartServer();
    process.stderr.write(`[cluster] server restarted in ${Date.now() - restartStarted} ms\n`);
    expect(cluster.serverPid()).not.toBe(pid);

    const kept = getAgentHandle<{ reply: string }>(w.client, before);
    expect((await kept.result()).reply).toBe('The sum is 5.');
    const after = `cluster-after-${Date.now()}`;
    expect((await run(after)).reply).toBe('The sum is 5.');
  });
});
