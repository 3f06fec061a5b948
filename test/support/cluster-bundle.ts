import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { bundleAgents } from '../../src/worker/bundle';

/** The agent modules the cluster chaos test's worker processes run (their tools with execute come with them). */
export const CLUSTER_AGENT_MODULES = [path.resolve(__dirname, '../fixtures/cluster-agents.ts')];

/** Bundles {@link CLUSTER_AGENT_MODULES} once (the cluster global setup) and writes the code to a temp file; returns its path. */
export async function bundleClusterAgents(): Promise<string> {
  const noop = () => undefined;
  const bundle = await bundleAgents(CLUSTER_AGENT_MODULES, {
    logger: { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: (m: string) => console.error(m) },
  });
  const file = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'fh-cluster-bundle-')), 'workflows.js');
  await fs.writeFile(file, bundle.code);
  return file;
}
