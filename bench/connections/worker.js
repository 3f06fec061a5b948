/**
 * Child process of the connections bench: one worker with every connection, each pointed at its own
 * fake (their URLs and credentials come from the parent). It runs alone in this process so that
 * `process.cpuUsage()` here is worker CPU only: the fakes, the client and the history measurement stay
 * in the parent (see ../side-by-side/child.js for the messages).
 */
'use strict';
const { DefaultLogger, Runtime, NativeConnection } = require('@temporalio/worker');
const { createWorker, bundleAgents, FileTranscriptStore } = require('../../dist/worker/index.js');
const { noteTool } = require('../fixtures/session-agents.js');
const { serveWorker } = require('../side-by-side/child.js');

const AGENTS = require.resolve('../fixtures/session-agents.js');
const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: (m) => console.error(m) };

serveWorker(async ({ address, namespace, taskQueue, storeDir, defaultModel, connections }) => {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const worker = await createWorker({
    agents: AGENTS,
    tools: [noteTool],
    connection: await NativeConnection.connect({ address }),
    namespace,
    taskQueue,
    // The default connection's endpoint is given by name like the others' (connections.anthropic).
    model: { defaultModel },
    connections,
    store: new FileTranscriptStore(storeDir),
    workflowBundle: await bundleAgents(AGENTS, { logger: quiet }),
  });
  return { worker, replay: async () => ({ error: 'not used' }) };
});
