/** Child process: our agent worker (createWorker with the harness plugin; see child.js). */
'use strict';
const { Client, Connection } = require('@temporalio/client');
const { DefaultLogger, Runtime, NativeConnection, Worker } = require('@temporalio/worker');
const { createWorker, bundleAgents, FileTranscriptStore, FabricHarnessPlugin } = require('../../dist/worker/index.js');
const { DEFAULT_MODEL } = require('../../dist/core/models.js');
const { growTool } = require('../fixtures/grower-agents.js');
const { serveWorker, timeReplay, BIG_MESSAGES } = require('./child.js');

const AGENTS = require.resolve('./agents.js');
const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: (m) => console.error(m) };

serveWorker(async ({ address, namespace, taskQueue, fakeUrl, apiKey, storeDir, caches, maxCachedWorkflows }) => {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const store = new FileTranscriptStore(storeDir);
  const workflowBundle = await bundleAgents(AGENTS, { logger: quiet });
  const worker = await createWorker({
    agents: AGENTS,
    tools: [growTool],
    connection: await NativeConnection.connect({ address }),
    namespace,
    taskQueue,
    model: { apiKey, baseURL: fakeUrl, defaultModel: DEFAULT_MODEL },
    store,
    workflowBundle,
    ...(caches ? { caches } : {}),
    ...(maxCachedWorkflows !== undefined ? { maxCachedWorkflows } : {}),
  });
  const client = new Client({ connection: await Connection.connect({ address, channelArgs: BIG_MESSAGES }), namespace });
  return {
    worker,
    replay: (workflowId) =>
      timeReplay({ Worker, client, workflowId, replayOptions: { workflowBundle, plugins: [new FabricHarnessPlugin({ store })] } }),
  };
});
