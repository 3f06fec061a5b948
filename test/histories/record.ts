/**
 * Records this release's workflow histories under test/histories/<version>/ (run: `npm run histories:record`). The replay
 * suite replays them against the current workflow code in CI, so a change that breaks replay of runs
 * recorded by an earlier version fails CI. Re-record only when such a break is intended (and say so).
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { startAgent, type AgentHandle } from '../../src/client';
import { FakeAnthropicServer, callTools, say } from '../../src/testing';
import { startDevServer } from '../../src/testing/temporal-cli';
import { calculator } from '../fixtures/agents';
import { chatter } from '../fixtures/compaction-agents';
import { bundleTestAgents } from '../support/bundle-once';
import { startTestWorker } from '../support/test-worker';

const MARKER = '[fabric-harness:summarize]';
const SUMMARY = '## Goal\nHelp the user.\n## Progress\nAnswered questions.\n## Key Decisions\nNone.\n## Failed Approaches\nNone.\n## Open Issues\nNone.\n## Next Steps\nKeep answering.';
const words = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag}${String.fromCharCode(97 + (i % 26))}`).join(' ');

/** Histories go to test/histories/<package version>/: every release keeps its own, and CI replays them all. */
const RELEASE_DIR = path.join(__dirname, (require('../../package.json') as { version: string }).version);

async function save(name: string, handle: AgentHandle): Promise<void> {
  await handle.result();
  await fs.mkdir(RELEASE_DIR, { recursive: true });
  const file = path.join(RELEASE_DIR, `${name}.json`);
  await fs.writeFile(file, historyToJSON(await handle.fetchHistory()) + '\n');
  console.log(`recorded ${path.relative(process.cwd(), file)}`);
}

async function main(): Promise<void> {
  const server = await startDevServer({ onProgress: (l) => console.log(`[temporal] ${l}`) });
  process.env.FH_TEST_TEMPORAL_ADDRESS = server.address;
  process.env.FH_TEST_TEMPORAL_NAMESPACE = server.namespace;
  process.env.FH_TEST_WORKFLOW_BUNDLE = await bundleTestAgents();
  const fake = await FakeAnthropicServer.start({ contextWindow: 1500 });
  fake.setRoute((req) => (typeof req.body?.system === 'string' && req.body.system.startsWith(MARKER) ? say(SUMMARY) : undefined));
  const w = await startTestWorker({ name: 'record', baseURL: fake.url });
  const start = <I>(agent: any, input: I, id: string) => startAgent(w.client, agent, input, { workflowId: `recorded-${id}`, taskQueue: w.taskQueue });
  try {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-record-'));
    fake.enqueue(
      callTools({ name: 'add', input: { a: 2, b: 3 } }),
      callTools({ name: 'write_file', input: { path: 'sum.txt', content: '5' } }),
      say('The sum is 5.'),
    );
    await save('calculator-tools', await start(calculator, { task: 'Add 2 and 3 and save it', dir }, 'calculator'));

    fake.enqueue(say(words(60, 'a')), callTools({ name: 'note', input: { text: 'keep' } }), ...Array.from({ length: 7 }, () => say(words(60, 'b'))));
    const prompts = Array.from({ length: 8 }, (_, i) => `Question ${i}: ${words(60, 'q')}`);
    await save(
      'threshold-compaction',
      await start(chatter, { prompts, contextWindowTokens: 1000, compaction: { reserveTokens: 150, keepRecentEntries: 4 } }, 'threshold'),
    );

    fake.enqueue(...Array.from({ length: 10 }, () => say(words(150, 'o'))));
    await save(
      'overflow-compaction',
      await start(chatter, { prompts: Array.from({ length: 10 }, (_, i) => `q${i}`), contextWindowTokens: 1500, compaction: { compactAtTokens: 1500 } }, 'overflow'),
    );

    fake.enqueue(say(words(40, 'm')), say(words(40, 'n')), say('after compaction'));
    const manual = await start(chatter, { prompts: ['one', 'two'], contextWindowTokens: 50_000, serveMs: 60_000 }, 'manual');
    while ((await manual.messages()).length < 4) await new Promise((r) => setTimeout(r, 100));
    await manual.compact({ keepRecentEntries: 2 });
    await manual.prompt('and now?');
    await manual.close();
    await save('manual-compaction', manual);
  } finally {
    await w.stop();
    await fake.stop();
    await server.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
