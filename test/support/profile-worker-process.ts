/**
 * A worker in its own process configured by nothing but a Temporal config file profile
 * (TEMPORAL_CONFIG_FILE + TEMPORAL_PROFILE): createWorker gets no connection and no namespace, and every
 * other TEMPORAL_* variable is removed first, so the address and namespace can only come from the TOML.
 * Started with startTsProcess().
 */
import { promises as fs } from 'node:fs';
import { createWorker, FileTranscriptStore } from '../../src/worker';
import { TEST_AGENT_MODULES } from './bundle-once';

async function main(): Promise<void> {
  const env = process.env;
  for (const name of Object.keys(env)) {
    if (name.startsWith('TEMPORAL_') && name !== 'TEMPORAL_CONFIG_FILE' && name !== 'TEMPORAL_PROFILE') delete env[name];
  }
  delete env.FH_TEST_TEMPORAL_ADDRESS;
  delete env.FH_TEST_TEMPORAL_NAMESPACE;
  const worker = await createWorker({
    agents: TEST_AGENT_MODULES,
    tools: [require.resolve('../fixtures/agent-tools')],
    taskQueue: env.FH_TASK_QUEUE!,
    model: { apiKey: 'test-key', baseURL: env.FH_FAKE_URL },
    store: new FileTranscriptStore(env.FH_STORE_DIR!),
    workflowBundle: { code: await fs.readFile(env.FH_TEST_WORKFLOW_BUNDLE!, 'utf8') },
  });
  process.stdout.write('worker-ready\n');
  await worker.run();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
