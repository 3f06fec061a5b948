/**
 * Jest global setup for the `cluster` tier (jest.cluster.config.js, `npm run test:cluster`): bundles the
 * test agents and the chaos test's agents once, and makes sure PostgreSQL, the Temporal server and MinIO
 * binaries exist (building them with Go the first time, with progress). Each test file starts its own cluster with
 * startTemporalCluster(), because these tests stop and restart the server.
 */
import { ensurePostgres } from '../support/provision/postgres';
import { ensureMinio } from '../support/provision/minio';
import { ensureTemporalServer } from '../support/provision/temporal-server';
import { bundleTestAgents } from '../support/bundle-once';
import { bundleClusterAgents } from '../support/cluster-bundle';

export default async function globalSetup(): Promise<void> {
  const log = (line: string): void => {
    process.stderr.write(`[cluster] ${line}\n`);
  };
  process.stderr.write('\n');
  await ensurePostgres(log);
  await ensureTemporalServer({ onProgress: log });
  await ensureMinio({ onProgress: log });
  process.env.FH_TEST_WORKFLOW_BUNDLE = await bundleTestAgents();
  process.env.FH_CLUSTER_WORKFLOW_BUNDLE = await bundleClusterAgents();
}
