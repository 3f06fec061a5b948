/**
 * One worker machine of the cluster chaos test (test/cluster/chaos.test.ts), in its own process so the test
 * can SIGKILL it. It shares nothing with the other workers but the Temporal cluster and the S3 store:
 * transcripts and large payloads go to S3 (bucket / prefix from FH_S3_BUCKET / FH_S3_PREFIX, endpoint and
 * credentials from the standard AWS environment), and FH_STORE_DIR / TMPDIR point at a directory of its
 * own that the test checks stays empty. Started with startTsProcess(); prints worker-ready once it polls.
 */
import { promises as fs } from 'node:fs';
import { NativeConnection } from '@temporalio/worker';
import { createWorker, S3Store } from '../../src/worker';
import { CLUSTER_AGENT_MODULES } from './cluster-bundle';

/** The test process: if it dies without stopping us (a crashed jest), exit rather than leak. */
function exitWithParent(parentPid: number): void {
  setInterval(() => {
    try {
      process.kill(parentPid, 0);
    } catch {
      process.exit(2);
    }
  }, 1000).unref();
}

async function main(): Promise<void> {
  const env = process.env;
  if (env.FH_PARENT_PID) exitWithParent(Number(env.FH_PARENT_PID));
  const connection = await NativeConnection.connect({ address: env.FH_TEST_TEMPORAL_ADDRESS! });
  const worker = await createWorker({
    agents: CLUSTER_AGENT_MODULES,
    connection,
    namespace: env.FH_TEST_TEMPORAL_NAMESPACE,
    taskQueue: env.FH_TASK_QUEUE!,
    model: { apiKey: 'test-key', baseURL: env.FH_FAKE_URL },
    store: new S3Store({ bucket: env.FH_S3_BUCKET!, prefix: env.FH_S3_PREFIX, forcePathStyle: true }),
    workflowBundle: { code: await fs.readFile(env.FH_CLUSTER_WORKFLOW_BUNDLE!, 'utf8') },
  });
  process.stdout.write('worker-ready\n');
  await worker.run();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
