#!/usr/bin/env node
/**
 * `npm run demo`: a small multi-step agent task run as a durable Temporal workflow.
 * Starts (building it first if needed) a Temporal dev server with its UI, a worker, and the agent;
 * prints the workflow id, each tool call as it happens, the result and where to look in the UI.
 * With ANTHROPIC_API_KEY set it talks to Claude; without, to the scripted fake Anthropic server.
 * Keeps the server up for the UI until Ctrl-C when run in a terminal (--exit stops at once, --stay keeps
 * it up even without a terminal).
 */
'use strict';

const { promises: fs } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Client } = require('@temporalio/client');
const { DefaultLogger, Runtime } = require('@temporalio/worker');
const { startAgent } = require('../dist/client');
const { createWorker, FabricHarnessPlugin, FileTranscriptStore } = require('../dist/worker');
const { FakeAnthropicServer, startDevServer } = require('../dist/testing');
const { FH_SEARCH_ATTRIBUTES } = require('../dist/wire/search-attributes');
const { TASK, scriptedReplies } = require('./demo/script');

const projectDir = path.resolve(__dirname, '..');

async function main() {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const realModel = Boolean(process.env.ANTHROPIC_API_KEY);
  let fake;
  let model;
  if (realModel) {
    model = {};
    console.log(`Model: Claude via the Anthropic API (${process.env.ANTHROPIC_MODEL ?? 'the SDK default model'}).`);
  } else {
    fake = await FakeAnthropicServer.start({ script: scriptedReplies() });
    model = { apiKey: 'scripted-demo', baseURL: fake.url };
    console.log('Model: none. ANTHROPIC_API_KEY is not set, so the demo uses the SCRIPTED fake Anthropic server');
    console.log(`       (${fake.url}): it replays canned responses, it is not a model. Set ANTHROPIC_API_KEY for Claude.`);
  }

  const server = await startDevServer({
    ui: true,
    projectDir,
    searchAttributes: { ...FH_SEARCH_ATTRIBUTES },
    onProgress: (l) => console.log(`[temporal] ${l}`),
  });
  const store = new FileTranscriptStore(path.join(projectDir, '.fh', 'store'));
  const connection = server.env.nativeConnection;
  const taskQueue = 'fabric-harness-demo';
  const worker = await createWorker({
    agents: path.join(__dirname, 'demo', 'agents.js'),
    connection,
    namespace: server.namespace,
    taskQueue,
    model,
    store,
    onEvent: (event) => {
      if (event.type === 'tool_call') console.log(`  → tool ${event.data.name} ${JSON.stringify(event.data.input).slice(0, 120)}`);
      if (event.type === 'tool_result') console.log(`  ← ${event.data.isError ? 'error' : 'ok'}: ${event.data.content.replace(/\s+/g, ' ').slice(0, 100)}`);
      if (event.type === 'model_call' || event.type === 'compaction') console.log(`  · ${event.type} ${JSON.stringify(event.data)}`);
    },
  });
  const client = new Client({ connection: server.env.connection, namespace: server.namespace, plugins: [new FabricHarnessPlugin({ store })] });
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-demo-'));
  const workflowId = `demo-notes-keeper-${Date.now()}`;

  const result = await worker.runUntil(async () => {
    const handle = await startAgent(client, 'notes-keeper', { task: TASK, dir }, { workflowId, taskQueue });
    console.log(`\nStarted workflow ${workflowId} (agent notes-keeper, sandbox ${dir})`);
    console.log(`Task: ${TASK}\n`);
    return handle.result();
  });

  console.log(`\nResult: ${result.reply}`);
  console.log(`Usage: ${result.usage.modelCalls} model calls, ${result.usage.inputTokens} input / ${result.usage.outputTokens} output tokens`);
  console.log(`notes.md now reads:\n${await fs.readFile(path.join(dir, 'notes.md'), 'utf8').catch(() => '(missing)')}`);
  console.log(`Temporal UI: ${server.uiUrl}/namespaces/${server.namespace}/workflows/${workflowId}`);

  const stay = process.argv.includes('--stay') || (process.stdout.isTTY && !process.argv.includes('--exit'));
  if (stay) {
    console.log('\nThe dev server stays up for the UI. Press Ctrl-C to stop.');
    await new Promise((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
  }
  await server.stop();
  await fake?.stop();
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
