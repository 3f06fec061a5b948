/**
 * A worker in its own process whose environment holds the API key (as a real deployment's would), so
 * tests can check the key never reaches tools, history or the store, and can kill and replace it.
 * Started by startEnvWorker() in leaks.ts through test/support/swc-register.js.
 */
import { promises as fs } from 'node:fs';
import { NativeConnection } from '@temporalio/worker';
import { createWorker, FileTranscriptStore } from '../../../src/worker';
import { bigOutputTool } from '../../fixtures/payload-agents';
import { TEST_AGENT_MODULES } from '../../support/bundle-once';

async function main(): Promise<void> {
  const env = process.env;
  const connection = await NativeConnection.connect({ address: env.FH_TEST_TEMPORAL_ADDRESS! });
  const worker = await createWorker({
    agents: TEST_AGENT_MODULES, // the modules the bundle was made from: their agent set names the tool queue
    tools: [bigOutputTool, require.resolve('../../fixtures/agent-tools')],
    connection,
    namespace: env.FH_TEST_TEMPORAL_NAMESPACE,
    taskQueue: env.FH_TASK_QUEUE!,
    model: { baseURL: env.FH_FAKE_URL }, // the key comes from ANTHROPIC_API_KEY in this process's env
    store: new FileTranscriptStore(env.FH_STORE_DIR),
    // No workflow cache: every workflow task replays the history from the start (and fetches its claims).
    maxCachedWorkflows: 0,
    workflowBundle: { code: await fs.readFile(env.FH_TEST_WORKFLOW_BUNDLE!, 'utf8') },
  });
  process.stdout.write('worker-ready\n');
  await worker.run();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
