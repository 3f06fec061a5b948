/**
 * Records this release's workflow histories under test/histories/<version>/ (run: `npm run histories:record`). The replay
 * suite replays them against the current workflow code in CI, so a change that breaks replay of runs
 * recorded by an earlier version fails CI. Re-record only when such a break is intended (and say so).
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import type { WorkflowHandle } from '@temporalio/client';
import { startAgent, startSession, type AgentHandle } from '../../src/client';
import { FakeAnthropicServer, callTools, say } from '../../src/testing';
import { assistant, longAssistant } from '../fixtures/session-agents';
import { startDevServer } from '../../src/testing/temporal-cli';
import { FH_SEARCH_ATTRIBUTES } from '../../src/wire/search-attributes';
import { calculator } from '../fixtures/agents';
import { chatter } from '../fixtures/compaction-agents';
import { bundleTestAgents } from '../support/bundle-once';
import { startTestWorker, type TestWorker } from '../support/test-worker';

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
  const server = await startDevServer({ onProgress: (l) => console.log(`[temporal] ${l}`), searchAttributes: { ...FH_SEARCH_ATTRIBUTES } });
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

    await recordSessions(w, fake, dir);
  } finally {
    await w.stop();
    await fake.stop();
    await server.stop();
  }
}

/** Session workflows: approvals, an interrupt, catalogue edits; and one that continues as new. */
async function recordSessions(w: TestWorker, fake: FakeAnthropicServer, dir: string): Promise<void> {
  fake.setRoute((req) =>
    typeof req.body?.system === 'string' && req.body.system.startsWith(MARKER)
      ? say(SUMMARY)
      : typeof req.body?.system === 'string' && /title/i.test(req.body.system)
        ? say('Recorded Session Title')
        : undefined,
  );
  const s = await startSession(w.client, assistant, {
    id: 'recorded-session',
    taskQueue: w.taskQueue,
    labels: { area: 'records' },
    settings: { permissionMode: 'ask', workingDirectory: dir },
  });
  fake.enqueue(callTools({ name: 'write_file', input: { path: 'approved.txt', content: 'ok' } }), say('Written.'));
  const first = s.prompt('Write approved.txt');
  await s.approve((await until(async () => (await s.pendingApprovals())[0])).callId);
  await first;
  await s.updateSettings({ permissionMode: 'execute' }); // so the interrupt cancels a running tool activity
  fake.enqueue(callTools({ name: 'bash', input: { command: 'sleep 30' } }));
  const slow = s.prompt('Take your time').catch(() => 'interrupted');
  await until(async () => (await s.events()).some((e) => e.type === 'tool_call' && e.data.name === 'bash'));
  await new Promise((r) => setTimeout(r, 500));
  await s.interrupt();
  await slow;
  await s.setStatus('blocked');
  fake.enqueue(say('Back again.'));
  await s.prompt('Carry on');
  await s.end();
  await saveHistory('session-approvals', s.workflow);

  const long = await startSession(w.client, longAssistant, { id: 'recorded-long-session', taskQueue: w.taskQueue, historyLimit: 40, settings: { workingDirectory: dir } });
  const runs: string[] = [];
  for (let i = 0; i < 6; i++) {
    fake.enqueue(say(`Answer ${i}.`));
    await long.prompt(`Question ${i}`);
    const runId = (await long.info()).runId;
    if (!runs.includes(runId)) runs.push(runId);
  }
  await long.end();
  if (runs.length < 2) throw new Error('the long session did not continue as new');
  await saveHistory('session-continued-first-run', w.client.workflow.getHandle(long.id, runs[0]));
  await saveHistory('session-continued-last-run', w.client.workflow.getHandle(long.id, runs.at(-1)));
}

async function until<T>(probe: () => Promise<T | undefined | false>): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const v = await probe();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('timed out');
}

async function saveHistory(name: string, handle: WorkflowHandle): Promise<void> {
  await handle.result().catch(() => undefined);
  await fs.mkdir(RELEASE_DIR, { recursive: true });
  const file = path.join(RELEASE_DIR, `${name}.json`);
  await fs.writeFile(file, historyToJSON(await handle.fetchHistory()) + '\n');
  console.log(`recorded ${path.relative(process.cwd(), file)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
