/**
 * A worker in its own process, so a test can kill it (SIGKILL) mid-activity. Started by
 * startWorkerProcess() below through test/support/swc-register.js.
 */
import { promises as fs, writeFileSync } from 'node:fs';
import { NativeConnection, type ActivityInterceptorsFactory } from '@temporalio/worker';
import { createWorker, FileTranscriptStore } from '../../src/worker';
import { TEST_AGENT_MODULES } from './bundle-once';

/**
 * An activity interceptor that never lets activity type `activity` run (a store or disk that hangs), after
 * writing `signal`: the test kills this worker there, mid-activity.
 */
function hangingIn(activity: string, signal: string): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      execute: (input, next) => {
        if (ctx.info.activityType !== activity) return next(input);
        writeFileSync(signal, activity);
        return new Promise(() => undefined);
      },
    },
  });
}

async function main(): Promise<void> {
  const env = process.env;
  const connection = await NativeConnection.connect({ address: env.FH_TEST_TEMPORAL_ADDRESS! });
  const worker = await createWorker({
    agents: TEST_AGENT_MODULES, // the modules the bundle was made from: their agent set names the tool queue
    tools: [require.resolve('../fixtures/agent-tools')],
    connection,
    namespace: env.FH_TEST_TEMPORAL_NAMESPACE,
    taskQueue: env.FH_TASK_QUEUE!,
    model: { apiKey: 'test-key', baseURL: env.FH_FAKE_URL },
    // Named model connections (each to its own fake), as JSON: the per-connection suites' workers.
    ...(env.FH_CONNECTIONS ? { connections: JSON.parse(env.FH_CONNECTIONS) } : {}),
    store: new FileTranscriptStore(env.FH_STORE_DIR),
    ...(env.FH_HANG_IN_ACTIVITY ? { interceptors: { activity: [hangingIn(env.FH_HANG_IN_ACTIVITY, env.FH_HANG_SIGNAL!)] } } : {}),
    workflowBundle: { code: await fs.readFile(env.FH_TEST_WORKFLOW_BUNDLE!, 'utf8') },
    ...(env.FH_WORKER_IDENTITY ? { identity: env.FH_WORKER_IDENTITY } : {}),
    // A stateful MCP server this worker registers; it knows which worker started it (FH_OWNER).
    ...(env.FH_MCP_COUNTER ? { mcpServers: { counter: { command: process.execPath, args: [env.FH_MCP_COUNTER], env: { FH_OWNER: env.FH_WORKER_IDENTITY ?? '?' } } } } : {}),
  });
  process.stdout.write('worker-ready\n');
  await worker.run();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
