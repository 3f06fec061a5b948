/**
 * A worker in its own process whose only store is S3: its bucket and prefix come from FH_S3_BUCKET /
 * FH_S3_PREFIX, and everything else (endpoint, credentials, region) from the standard AWS environment
 * (AWS_ENDPOINT_URL_S3, AWS_ACCESS_KEY_ID, …), as on a worker machine. Started with startTsProcess().
 */
import { promises as fs } from 'node:fs';
import { NativeConnection } from '@temporalio/worker';
import { createWorker, S3Store } from '../../src/worker';
import { TEST_AGENT_MODULES } from './bundle-once';

async function main(): Promise<void> {
  const env = process.env;
  const connection = await NativeConnection.connect({ address: env.FH_TEST_TEMPORAL_ADDRESS! });
  const worker = await createWorker({
    agents: TEST_AGENT_MODULES,
    tools: [require.resolve('../fixtures/agent-tools')],
    connection,
    namespace: env.FH_TEST_TEMPORAL_NAMESPACE,
    taskQueue: env.FH_TASK_QUEUE!,
    model: { apiKey: 'test-key', baseURL: env.FH_FAKE_URL },
    store: new S3Store({ bucket: env.FH_S3_BUCKET!, prefix: env.FH_S3_PREFIX, forcePathStyle: true }),
    workflowBundle: { code: await fs.readFile(env.FH_TEST_WORKFLOW_BUNDLE!, 'utf8') },
  });
  process.stdout.write('worker-ready\n');
  await worker.run();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
