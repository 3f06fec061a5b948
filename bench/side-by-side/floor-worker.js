/** Child process: the floor workflow's worker (see child.js). */
'use strict';
const { Client, Connection } = require('@temporalio/client');
const { DefaultLogger, NativeConnection, Runtime, Worker, bundleWorkflowCode } = require('@temporalio/worker');
const { serveWorker, timeReplay, BIG_MESSAGES } = require('./child.js');
const { floorModelActivities } = require('./floor-model-activities.js');
const { DEFAULT_MODEL } = require('../../dist/core/models.js');

const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: (m) => console.error(m) };

serveWorker(async ({ address, namespace, taskQueue, fakeUrl, apiKey }) => {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const workflowBundle = await bundleWorkflowCode({ workflowsPath: require.resolve('./floor-workflow.js'), logger: quiet });
  const worker = await Worker.create({
    connection: await NativeConnection.connect({ address }),
    namespace,
    taskQueue,
    workflowBundle,
    // The model floor's activities too (used only by the `withModel` runs): the same fake, the harness's max_tokens.
    activities: { async noop() {}, async noopTool() {}, ...floorModelActivities({ baseURL: fakeUrl, apiKey, model: DEFAULT_MODEL, maxTokens: 4096 }) },
  });
  const client = new Client({ connection: await Connection.connect({ address, channelArgs: BIG_MESSAGES }), namespace });
  return {
    worker,
    replay: (workflowId) => timeReplay({ Worker, client, workflowId, replayOptions: { workflowBundle } }),
  };
});
