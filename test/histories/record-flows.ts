/**
 * Records flow histories under test/histories/<version>/ (run: `node -r ./test/support/swc-register.js
 * test/histories/record-flows.ts`), as record.ts does for agent runs: a dev server of its own, the
 * history modules' bundle, the scripted fake model. The replay suite replays them against the current
 * workflow code. Re-record only when a break of replay is intended (and say so).
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { Client, type WorkflowHandle } from '@temporalio/client';
import { startFlow } from '../../src/client/flows';
import { FakeAnthropicServer, callTools, say } from '../../src/testing';
import { startDevServer } from '../../src/testing/temporal-cli';
import { FH_SEARCH_ATTRIBUTES } from '../../src/wire/search-attributes';
import { bundleAgents } from '../../src/worker/bundle';
import { createWorker, FabricHarnessPlugin, FileTranscriptStore } from '../../src/worker';
import { testConnection } from '../support/temporal';
import { HISTORY_AGENT_MODULES } from './support/modules';

const RELEASE_DIR = path.join(__dirname, process.env.FH_RECORD_RELEASE ?? (require('../../package.json') as { version: string }).version);

/** Every kind of stage: commands (one retried), a fan-out with a failing branch, a prompt node with a tool call, a gate, a route. */
export const RECORDED_FLOW = `digraph Recorded {
  graph [goal="Record a flow"]
  start  [shape=Mdiamond]
  prep   [label="Prep", script="echo prepared"]
  flaky  [label="Flaky", max_retries=1, script="if [ -f tried ]; then echo ok; else touch tried; exit 1; fi"]
  checks [shape=component, label="Checks"]
  a      [label="A", script="echo a-ok"]
  b      [label="B", script="echo b-broke >&2; exit 2"]
  join   [shape=tripleoctagon]
  draft  [label="Draft", prompt="Draft the notes."]
  review [shape=hexagon, label="Ship?"]
  route  [shape=diamond]
  ship   [label="Ship", script="echo shipped"]
  exit   [shape=Msquare]
  start -> prep -> flaky -> checks
  checks -> a
  checks -> b
  a -> join
  b -> join
  join -> draft -> review
  review -> route [label="[A] Approve"]
  review -> exit  [label="[S] Stop"]
  route -> ship   [condition="human.gate.selected=A && parallel.fan_in.best_id=a"]
  route -> exit
  ship -> exit
}`;

async function main(): Promise<void> {
  const server = await startDevServer({ onProgress: (l) => console.log(`[temporal] ${l}`), searchAttributes: { ...FH_SEARCH_ATTRIBUTES } });
  process.env.FH_TEST_TEMPORAL_ADDRESS = server.address;
  process.env.FH_TEST_TEMPORAL_NAMESPACE = server.namespace;
  const noop = () => undefined;
  const bundle = await bundleAgents(HISTORY_AGENT_MODULES, { logger: { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: (m: string) => console.error(m) } });
  const fake = await FakeAnthropicServer.start();
  const t = await testConnection();
  const store = new FileTranscriptStore(await fs.mkdtemp(path.join(os.tmpdir(), 'fh-record-store-')));
  const taskQueue = `record-flows-${process.pid}`;
  const worker = await createWorker({
    agents: HISTORY_AGENT_MODULES,
    tools: [require.resolve('../fixtures/agent-tools')],
    connection: t.nativeConnection,
    namespace: t.namespace,
    taskQueue,
    model: { apiKey: 'test-key', baseURL: fake.url },
    store,
    workflowBundle: bundle,
  });
  const running = worker.run();
  try {
    const client = new Client({ connection: t.connection, namespace: t.namespace, plugins: [new FabricHarnessPlugin({ store })] });
    const workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-record-flow-'));
    fake.enqueue(callTools({ name: 'write_file', input: { path: 'NOTES.md', content: 'notes' } }), say('Drafted NOTES.md.'));
    const h = await startFlow(client, RECORDED_FLOW, { workDir, taskQueue, workflowId: 'recorded-flow', context: { channel: 'stable' } });
    for (let i = 0; (await h.state()).status !== 'waiting'; i++) {
      if (i > 300) throw new Error('the flow never reached its gate');
      await new Promise((r) => setTimeout(r, 100));
    }
    await h.gate('A');
    await h.result();
    await save('flow-release', h.workflow);
    await save('flow-branch-failed', client.workflow.getHandle('recorded-flow/b-1'));
  } finally {
    worker.shutdown();
    await running;
    await t.close();
    await fake.stop();
    await server.stop();
  }
}

async function save(name: string, handle: Pick<WorkflowHandle, 'result' | 'fetchHistory'>): Promise<void> {
  await handle.result().catch(() => undefined);
  await fs.mkdir(RELEASE_DIR, { recursive: true });
  const file = path.join(RELEASE_DIR, `${name}.json`);
  await fs.writeFile(file, historyToJSON(await handle.fetchHistory()) + '\n');
  console.log(`recorded ${path.relative(process.cwd(), file)}`);
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
