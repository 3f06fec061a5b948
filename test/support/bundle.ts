import { promises as fs } from 'node:fs';
import type { WorkflowBundle } from '@temporalio/worker';

/**
 * The workflow bundle of test/fixtures/agents.ts, made once by the global setup (FH_TEST_WORKFLOW_BUNDLE)
 * so the suites do not each spend seconds in webpack.
 */
export async function testBundle(): Promise<WorkflowBundle> {
  const file = process.env.FH_TEST_WORKFLOW_BUNDLE;
  if (!file) throw new Error('FH_TEST_WORKFLOW_BUNDLE is not set: run through the jest integration project (its global setup bundles)');
  return { code: await fs.readFile(file, 'utf8') };
}
