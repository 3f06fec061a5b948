/**
 * Child process: the peer's worker (see ../side-by-side/child.js). Everything Temporal here comes from
 * bench/peer/node_modules (the release @temporalio/ai-sdk pins), not from the SDK's own.
 */
'use strict';
const { createAnthropic } = require('@ai-sdk/anthropic');
const { AiSdkPlugin } = require('@temporalio/ai-sdk');
const { Client, Connection } = require('@temporalio/client');
const { DefaultLogger, NativeConnection, Runtime, Worker, bundleWorkflowCode } = require('@temporalio/worker');
// The grow text comes from the SDK's deterministic prose (plain code, no Temporal import).
const { deterministicProse } = require('../../dist/testing/prose.js');
const { serveWorker, timeReplay, BIG_MESSAGES } = require('../side-by-side/child.js');

const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: (m) => console.error(m) };

serveWorker(async ({ address, namespace, taskQueue, fakeUrl, apiKey, growTextChars }) => {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  // @ai-sdk/anthropic appends /messages to its base URL, whose default ends in /v1.
  const plugin = new AiSdkPlugin({ modelProvider: createAnthropic({ baseURL: `${fakeUrl}/v1`, apiKey }) });
  const workflowBundle = await bundleWorkflowCode({ workflowsPath: require.resolve('./workflows.js'), plugins: [plugin], logger: quiet });
  const worker = await Worker.create({
    connection: await NativeConnection.connect({ address }),
    namespace,
    taskQueue,
    workflowBundle,
    plugins: [plugin],
    activities: { async grow({ step }) { return deterministicProse(step, growTextChars); } },
  });
  const client = new Client({ connection: await Connection.connect({ address, channelArgs: BIG_MESSAGES }), namespace });
  return {
    worker,
    replay: (workflowId) => timeReplay({ Worker, client, workflowId, replayOptions: { workflowBundle } }),
  };
});
