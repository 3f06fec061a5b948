/** Child process: a worker of the bench's session agent (createWorker; see child.js), for sessions-per-worker. */
'use strict';
const { DefaultLogger, Runtime, NativeConnection } = require('@temporalio/worker');
const { createWorker, bundleAgents, FileTranscriptStore } = require('../../dist/worker/index.js');
const { DEFAULT_MODEL } = require('../../dist/core/models.js');
const { noteTool } = require('../fixtures/session-agents.js');
const { serveWorker } = require('./child.js');

const AGENTS = require.resolve('../fixtures/session-agents.js');
const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: (m) => console.error(m) };

serveWorker(async ({ address, namespace, taskQueue, fakeUrl, apiKey, storeDir, sessionCacheMemory, maxCachedWorkflows }) => {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const worker = await createWorker({
    agents: AGENTS,
    tools: [noteTool],
    connection: await NativeConnection.connect({ address }),
    namespace,
    taskQueue,
    model: { apiKey, baseURL: fakeUrl, defaultModel: DEFAULT_MODEL },
    store: new FileTranscriptStore(storeDir),
    workflowBundle: await bundleAgents(AGENTS, { logger: quiet }),
    ...(sessionCacheMemory !== undefined ? { sessionCacheMemory } : {}),
    ...(maxCachedWorkflows !== undefined ? { maxCachedWorkflows } : {}),
  });
  return { worker, replay: async () => ({ error: 'no replay here' }) };
});
