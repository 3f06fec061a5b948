/**
 * The integration project's Temporal server is real: it answers the gRPC API, records a workflow we start and shows
 * it through visibility (list), and terminates it.
 */
import { randomUUID } from 'node:crypto';
import type { WorkflowExecutionInfo } from '@temporalio/client';
import { testConnection, type TestConnection } from '../support/temporal';

let t: TestConnection;

beforeAll(async () => {
  t = await testConnection();
});

afterAll(async () => {
  await t?.close();
});

async function waitForListed(query: string, timeoutMs = 15_000): Promise<WorkflowExecutionInfo[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found: WorkflowExecutionInfo[] = [];
    for await (const wf of t.client.workflow.list({ query })) found.push(wf);
    if (found.length > 0 || Date.now() > deadline) return found;
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('Temporal dev server (integration global setup)', () => {
  it('exposes its address to test files', () => {
    expect(process.env.FH_TEST_TEMPORAL_ADDRESS).toMatch(/^[\w.-]+:\d+$/);
    expect(t.address).toBe(process.env.FH_TEST_TEMPORAL_ADDRESS);
    expect(t.namespace).toBeTruthy();
  });

  it('answers GetSystemInfo and DescribeNamespace', async () => {
    const info = await t.client.workflowService.getSystemInfo({});
    expect(info.serverVersion).toMatch(/^\d+\.\d+\.\d+/);
    expect(info.capabilities).toBeDefined();

    const ns = await t.client.workflowService.describeNamespace({ namespace: t.namespace });
    expect(ns.namespaceInfo?.name).toBe(t.namespace);
  });

  it('lists workflows, including one started here', async () => {
    // No worker polls this task queue: the workflow stays RUNNING until we terminate it.
    const taskQueue = `dev-server-probe-${randomUUID()}`;
    const workflowId = `dev-server-probe-${randomUUID()}`;
    const handle = await t.client.workflow.start('fhDevServerProbe', { taskQueue, workflowId, args: [] });

    const listed = await waitForListed(`WorkflowId = '${workflowId}'`);
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ workflowId, type: 'fhDevServerProbe', taskQueue, status: { name: 'RUNNING' } });

    // An unfiltered list goes through the same visibility store.
    const page = await t.client.workflowService.listWorkflowExecutions({ namespace: t.namespace, pageSize: 100 });
    expect(page.executions.map((e) => e.execution?.workflowId)).toContain(workflowId);

    await handle.terminate('dev-server.test cleanup');
    const described = await handle.describe();
    expect(described.status.name).toBe('TERMINATED');
  });
});
