import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import { createWorker, FabricHarnessPlugin, FileTranscriptStore, type CreateWorkerOptions } from '@fabric-harness/sdk/worker';
import type { AgentEvent } from '@fabric-harness/sdk';
import { testBundle } from './bundle';
import { TEST_AGENT_MODULES } from './bundle-once';
import { testConnection, type TestConnection } from './temporal';

export interface TestWorker {
  t: TestConnection;
  worker: Worker;
  client: Client;
  taskQueue: string;
  /** Events the worker's onEvent received (never re-emitted on replay). */
  events: AgentEvent[];
  /** The worker's transcript store directory. */
  storeDir: string;
  stop(): Promise<void>;
}

/**
 * A running worker for the test agents, against the run's dev server and the given fake model.
 * `apiKey: null` leaves the key out (to test a worker without one).
 */
export async function startTestWorker(opts: {
  name: string;
  baseURL: string;
  apiKey?: string | null;
  /** Join an existing task queue (another worker's) instead of a new one. */
  taskQueue?: string;
  /** MCP servers the worker registers. */
  mcpServers?: CreateWorkerOptions['mcpServers'];
  /** The worker's (and its client's) store: a file store in a new directory unless given. */
  store?: FileTranscriptStore;
  /** The worker's missing-blob reaper (on unless false). */
  missingBlobReaper?: CreateWorkerOptions['missingBlobReaper'];
  /** Model connections by name (a 'google' one against the fake Gemini server, say). */
  connections?: CreateWorkerOptions['connections'];
}): Promise<TestWorker> {
  const t = await testConnection();
  const store = opts.store ?? new FileTranscriptStore(await fs.mkdtemp(path.join(os.tmpdir(), 'fh-store-')));
  const storeDir = store.dir;
  const taskQueue = opts.taskQueue ?? `${opts.name}-${process.pid}-${Date.now()}`;
  const events: AgentEvent[] = [];
  const worker = await createWorker({
    agents: TEST_AGENT_MODULES,
    // Tools with execute come from the agent modules themselves; Node-only tool code from its own module.
    tools: [require.resolve('../fixtures/agent-tools')],
    connection: t.nativeConnection,
    namespace: t.namespace,
    taskQueue,
    model: { apiKey: opts.apiKey === null ? undefined : (opts.apiKey ?? 'test-key'), baseURL: opts.baseURL },
    store,
    onEvent: (e) => events.push(e),
    workflowBundle: await testBundle(),
    ...(opts.mcpServers ? { mcpServers: opts.mcpServers } : {}),
    ...(opts.missingBlobReaper !== undefined ? { missingBlobReaper: opts.missingBlobReaper } : {}),
    ...(opts.connections ? { connections: opts.connections } : {}),
  });
  const client = new Client({ connection: t.connection, namespace: t.namespace, plugins: [new FabricHarnessPlugin({ store })] });
  const running = worker.run();
  return {
    t,
    worker,
    client,
    taskQueue,
    events,
    storeDir,
    async stop() {
      worker.shutdown();
      await running;
      await t.close();
    },
  };
}
