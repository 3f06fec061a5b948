/**
 * Records this release's workflow histories under test/histories/<version>/ (run: `npm run histories:record`). The replay
 * suite replays them against the current workflow code in CI, so a change that breaks replay of runs
 * recorded by an earlier version fails CI. Re-record only when such a break is intended (and say so).
 * `FH_RECORD_RELEASE=0.6.7` records into another release's folder; `FH_RECORD_ONLY=worktrees` (or
 * `npm run histories:record -- worktrees`; names comma-separated) records only those groups (`gate`: the
 * gated-compaction history alone).
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { Client, type WorkflowHandle } from '@temporalio/client';
import { startAgent, startSession, type AgentHandle } from '../../src/client';
import { FakeAnthropicServer, callTools, fail, say, type FakeModel, type FakeRoute, type RecordedRequest } from '../../src/testing';
import { assistant, longAssistant } from '../fixtures/session-agents';
import { startDevServer } from '../../src/testing/temporal-cli';
import { FH_SEARCH_ATTRIBUTES } from '../../src/wire/search-attributes';
import { bundleAgents } from '../../src/worker/bundle';
import { createWorker, FabricHarnessPlugin, FileTranscriptStore, type CreateWorkerOptions } from '../../src/worker';
import { MEMORY_COMPACT_MARKER, MEMORY_EXTRACT_MARKER } from '../../src/core/context/memory-extract';
import { calculator } from '../fixtures/agents';
import { chatter } from '../fixtures/compaction-agents';
import { ladderer, ladderSession } from '../fixtures/ladder-agents';
import { rememberer } from '../fixtures/memory-agents';
import { offloadBench } from '../fixtures/payload-agents';
import { strategist } from '../fixtures/strategy-agents';
import { isTitleRequest, SCRIPTED_TITLE } from '../support/session-fake';
import { testConnection } from '../support/temporal';
import { masker } from './support/history-agents';
import { recordEcosystem } from './record-ecosystem';
import { recordWorktrees } from './record-worktrees';
import { recordGate } from './record-gate';
import { HISTORY_AGENT_MODULES } from './support/modules';

const MARKER = '[fabric-harness:summarize]';
const SUMMARY = '## Goal\nHelp the user.\n## Progress\nAnswered questions.\n## Key Decisions\nNone.\n## Failed Approaches\nNone.\n## Open Issues\nNone.\n## Next Steps\nKeep answering.';
const words = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag}${String.fromCharCode(97 + (i % 26))}`).join(' ');

/** Histories go to test/histories/<package version>/: every release keeps its own, and CI replays them all. */
const RELEASE_DIR = path.join(__dirname, process.env.FH_RECORD_RELEASE ?? (require('../../package.json') as { version: string }).version);

/**
 * The groups of histories: `core` (agent runs, compaction, sessions, context management), `ecosystem`
 * (0.5.0: MCP, sub-agents), `worktrees` (0.6.7: worktree sessions and sub-agents, carried MCP pins),
 * `gate` (0.6.7: a compaction checked by the compaction gate).
 */
const GROUPS = ['core', 'ecosystem', 'worktrees', 'gate'] as const;
type Group = (typeof GROUPS)[number];
/** The groups asked for (FH_RECORD_ONLY or the command line, comma-separated); all when none is named. */
function selectedGroups(): Set<Group> {
  const named = [process.env.FH_RECORD_ONLY ?? '', ...process.argv.slice(2)].flatMap((a) => a.split(',')).map((a) => a.trim()).filter(Boolean);
  const unknown = named.filter((n) => !(GROUPS as readonly string[]).includes(n));
  if (unknown.length) throw new Error(`unknown history group ${unknown.join(', ')}: the groups are ${GROUPS.join(', ')}`);
  return new Set(named.length ? (named as Group[]) : GROUPS);
}

async function save(name: string, handle: AgentHandle): Promise<void> {
  await handle.result();
  await fs.mkdir(RELEASE_DIR, { recursive: true });
  const file = path.join(RELEASE_DIR, `${name}.json`);
  await fs.writeFile(file, historyToJSON(await handle.fetchHistory()) + '\n');
  console.log(`recorded ${path.relative(process.cwd(), file)}`);
}

async function main(): Promise<void> {
  const groups = selectedGroups();
  const started = Date.now();
  const server = await startDevServer({ onProgress: (l) => console.log(`[temporal] ${l}`), searchAttributes: { ...FH_SEARCH_ATTRIBUTES } });
  process.env.FH_TEST_TEMPORAL_ADDRESS = server.address;
  process.env.FH_TEST_TEMPORAL_NAMESPACE = server.namespace;
  const bundle = await bundleAgents(HISTORY_AGENT_MODULES, { logger: quietLogger() });
  const fake = await FakeAnthropicServer.start({ contextWindow: 1500 });
  fake.setRoute((req) => (typeof req.body?.system === 'string' && req.body.system.startsWith(MARKER) ? say(SUMMARY) : undefined));
  const w = await startRecordWorker('record', fake.url, bundle);
  // The context-management scenarios (from 0.4.0): their own fake, with a model that has server-side
  // context management, and a route each scenario sets.
  let route: FakeRoute | undefined;
  const cm = await FakeAnthropicServer.start({ models: STRATEGY_MODELS, route: (req) => route?.(req) });
  const cw = await startRecordWorker('record-context', cm.url, bundle);
  try {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-record-'));
    if (groups.has('ecosystem')) await recordEcosystem(w, fake, dir, saveHistory);
    if (groups.has('worktrees')) await recordWorktrees((name, url, mcpServers) => startRecordWorker(name, url, bundle, mcpServers), saveHistory);
    if (groups.has('gate')) await recordGate((name, url) => startRecordWorker(name, url, bundle), saveHistory);
    if (groups.has('core')) await recordCore(w, fake, dir, cw, cm, (r) => (route = r));
    console.log(`recorded ${[...groups].join(', ')} in ${Math.round((Date.now() - started) / 1000)} s`);
  } finally {
    await cw.stop();
    await cm.stop();
    await w.stop();
    await fake.stop();
    await server.stop();
  }
}

/** The core group: agent runs with tools and compaction, session workflows, context management. */
async function recordCore(w: RecordWorker, fake: FakeAnthropicServer, dir: string, cw: RecordWorker, cm: FakeAnthropicServer, setRoute: (r: FakeRoute | undefined) => void): Promise<void> {
  const start = <I>(agent: any, input: I, id: string) => startAgent(w.client, agent, input, { workflowId: `recorded-${id}`, taskQueue: w.taskQueue });
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
    // The gate off: in a 1,000-token window its restated facts leave no room to shrink (the gated history is
    // recorded on its own, test/histories/record-gate.ts); this one keeps recording plain threshold compaction.
    await start(chatter, { prompts, contextWindowTokens: 1400, compaction: { reserveTokens: 150, keepRecentEntries: 4, gate: { enabled: false } } }, 'threshold'),
  );

  fake.enqueue(...Array.from({ length: 10 }, () => say(words(150, 'o'))));
  await save(
    'overflow-compaction',
    await start(chatter, { prompts: Array.from({ length: 10 }, (_, i) => `q${i}`), contextWindowTokens: 1500, compaction: { compactAtTokens: 1500, gate: { enabled: false } } }, 'overflow'),
  );

  fake.enqueue(say(words(40, 'm')), say(words(40, 'n')), say('after compaction'));
  const manual = await start(chatter, { prompts: ['one', 'two'], contextWindowTokens: 50_000, serveMs: 60_000 }, 'manual');
  while ((await manual.messages()).length < 4) await new Promise((r) => setTimeout(r, 100));
  await manual.compact({ keepRecentEntries: 2 });
  await manual.prompt('and now?');
  await manual.close();
  await save('manual-compaction', manual);

  await recordSessions(w, fake, dir);
  await recordContextManagement(cw, cm, setRoute);
}

const STRATEGY_MODELS: Record<string, FakeModel> = {
  'fake-cm': { maxInputTokens: 200_000, capabilities: { contextManagement: ['clear_tool_uses_20250919', 'clear_thinking_20251015', 'compact_20260112'] } },
};

const body = (r: RecordedRequest) => JSON.stringify(r.body?.messages ?? []);
const isSummary = (r: RecordedRequest) => String(r.body?.system ?? '').startsWith(MARKER);

/**
 * 0.4.0's context management, each scripted as its integration suite scripts it: the overflow ladder
 * (to purge-tool-results, and all the way to session-reset; overflow-ladder.test.ts), a compaction with
 * memory flush (memory-flush.test.ts), a tool result offloaded as an artifact and read back
 * (artifact-offload.test.ts), compaction.strategy 'auto' on a capable model (server-strategy.test.ts),
 * observation masking, and SessionHandle.reset() (its afterCompact hook injects memory on every climb).
 */
async function recordContextManagement(w: RecordWorker, fake: FakeAnthropicServer, setRoute: (r: FakeRoute | undefined) => void): Promise<void> {
  const start = <I>(agent: any, input: I, id: string) => startAgent(w.client, agent, input, { workflowId: `recorded-${id}`, taskQueue: w.taskQueue });

  // The ladder: the last prompt's requests are rejected as too long until the step has happened.
  const TRANSFER = '## Outcome\n- TRANSFER-NOTE: pages 0 to 2 were read';
  const FINAL = 'read page 3 please';
  const bigResults = (r: RecordedRequest) => (body(r).match(/lorem ipsum dolor lorem/g) ?? []).length / 299;
  const isTransfer = (r: RecordedRequest) => isSummary(r) && String(r.body.system).includes('hand-over note');
  const ladderRoute =
    (fits: (r: RecordedRequest) => boolean): FakeRoute =>
    (req) => {
      if (isTitleRequest(req)) return say(SCRIPTED_TITLE);
      if (isTransfer(req)) return say(TRANSFER);
      if (isSummary(req)) return say('## Goal\nRead the manual.\n## Progress\nRead pages.');
      return !body(req).includes(FINAL) || fits(req) ? undefined : fail(400, { message: 'prompt is too long: 250000 tokens > 200000 maximum' });
    };
  const climbs: Array<[string, (r: RecordedRequest) => boolean]> = [
    ['ladder-purge-tool-results', (r) => bigResults(r) <= 1],
    ['ladder-session-reset', (r) => body(r).includes('TRANSFER-NOTE')],
  ];
  for (const [name, fits] of climbs) {
    setRoute(ladderRoute(fits));
    for (let i = 0; i < 3; i++) fake.enqueue(callTools({ name: 'read_page', input: { n: i } }), callTools({ name: 'read_page', input: { n: i + 10 } }), say(`read ${i}`));
    fake.enqueue(say('answered'));
    const handle = await start(ladderer, { prompts: ['read page 0', 'read page 1', 'read page 2', FINAL] }, name);
    const result = (await handle.result()) as { replies: string[] };
    if (result.replies.at(-1) !== 'answered') throw new Error(`${name}: the final prompt was not answered`);
    await saveHistory(name, handle);
  }

  // SessionHandle.reset(): a transfer summary, then a fresh conversation in the same run.
  setRoute(ladderRoute(() => true));
  const s = await startSession(w.client, ladderSession, { id: 'recorded-session-reset', taskQueue: w.taskQueue });
  fake.enqueue(callTools({ name: 'read_page', input: { n: 1 } }), say('read it'));
  await s.prompt('read page 1');
  const reset = await s.reset();
  if (!reset.summary?.includes('TRANSFER-NOTE')) throw new Error('the session reset made no transfer summary');
  fake.enqueue(say('fresh start'));
  await s.prompt('what next?');
  await s.end();
  await saveHistory('session-reset', s.workflow);

  // Memory flush: a threshold compaction asks for the memory file; a new run of the agent loads it.
  const memoryText = '- Decided: ship on Fridays only\n- Prefers: short answers';
  setRoute((req) => {
    if (isSummary(req)) return say('## Goal\nShip it.');
    if (body(req).includes(MEMORY_EXTRACT_MARKER)) return say(memoryText);
    if (body(req).includes(MEMORY_COMPACT_MARKER)) return say('- Compacted');
    return say('ok');
  });
  const prompt = (tag: string) => `${tag}: ${Array.from({ length: 100 }, (_, i) => `word${i}`).join(' ')}`;
  const flush = await start(rememberer, { prompts: ['p1', 'p2', 'p3', 'p4'].map(prompt) }, 'memory-flush');
  if (!((await flush.result()) as { compactions: number }).compactions) throw new Error('memory-flush: no compaction happened');
  await saveHistory('memory-flush', flush);
  await save('memory-flush-next-run', await start(rememberer, { prompts: ['hello', 'again'] }, 'memory-flush-next-run'));

  // Artifact offloading: a 300 KB tool output reaches the model as a reference, read back with read_artifact.
  const lastToolResult = (req: RecordedRequest): string => {
    const block = req.body.messages.at(-1)?.content?.find?.((b: { type: string }) => b.type === 'tool_result');
    return typeof block?.content === 'string' ? block.content : '';
  };
  setRoute((req) => {
    const m = /^\[artifact ([0-9a-f]{64}):/.exec(lastToolResult(req));
    return m ? callTools({ name: 'read_artifact', input: { ref: m[1], offset: 20, maxChars: 40 } }) : undefined;
  });
  fake.enqueue(callTools({ name: 'big_output', input: { kb: 300 } }), say('read it'));
  const before = fake.messageRequests().length;
  await save('artifact-offload', await start(offloadBench, { task: 'report' }, 'artifact-offload'));
  if (!fake.messageRequests().slice(before).some((r) => lastToolResult(r).startsWith('[characters 20-60 of 307200'))) {
    throw new Error('artifact-offload: the model did not read the artifact back');
  }

  // compaction.strategy 'auto' on a model with server-side context management: the edits go to the server.
  setRoute((req) => (isSummary(req) ? say(SUMMARY) : undefined));
  fake.enqueue(...[1, 2, 3, 4, 5].map((page) => callTools({ name: 'fetch_page', input: { page } })), say('The manual says yes.'));
  const strategy = await start(strategist, { prompts: ['Read pages 1 to 5.'], model: 'fake-cm' }, 'server-strategy');
  const decided = (await strategy.result()) as { state: { strategy?: { strategy: string } } };
  if (decided.state.strategy?.strategy !== 'server') throw new Error(`server-strategy: chose ${JSON.stringify(decided.state.strategy)}`);
  await saveHistory('server-strategy', strategy);

  // Observation masking: old read_source results become placeholders once enough have gone stale.
  setRoute(undefined);
  fake.enqueue(
    callTools({ name: 'run', input: { command: 'npm test' } }),
    ...Array.from({ length: 8 }, (_, i) => callTools({ name: 'read_source', input: { path: `src/f${i}.ts` } })),
    say('done'),
  );
  const masking = await start(masker, { task: 'read the sources' }, 'masking');
  await masking.result();
  if (!JSON.stringify(fake.messageRequests().at(-1)!.body.messages).includes('[tool: read_source(')) throw new Error('masking: nothing was masked');
  await saveHistory('masking', masking);
}

interface RecordWorker {
  client: Client;
  taskQueue: string;
  stop(): Promise<void>;
}

/** A worker for every module the histories run (HISTORY_AGENT_MODULES), on the recording's dev server. */
async function startRecordWorker(name: string, baseURL: string, workflowBundle: { code: string }, mcpServers?: CreateWorkerOptions['mcpServers']): Promise<RecordWorker> {
  const t = await testConnection();
  const store = new FileTranscriptStore(await fs.mkdtemp(path.join(os.tmpdir(), 'fh-record-store-')));
  const taskQueue = `${name}-${process.pid}`;
  const worker = await createWorker({
    agents: HISTORY_AGENT_MODULES,
    tools: [require.resolve('../fixtures/agent-tools')],
    connection: t.nativeConnection,
    namespace: t.namespace,
    taskQueue,
    model: { apiKey: 'test-key', baseURL },
    store,
    workflowBundle,
    ...(mcpServers ? { mcpServers } : {}),
  });
  const client = new Client({ connection: t.connection, namespace: t.namespace, plugins: [new FabricHarnessPlugin({ store })] });
  const running = worker.run();
  return {
    client,
    taskQueue,
    async stop() {
      worker.shutdown();
      await running;
      await t.close();
    },
  };
}

function quietLogger() {
  const noop = () => undefined;
  return { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: (m: string) => console.error(m) };
}

/** Session workflows: approvals, an interrupt, catalogue edits; and one that continues as new. */
async function recordSessions(w: RecordWorker, fake: FakeAnthropicServer, dir: string): Promise<void> {
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

async function saveHistory(name: string, handle: Pick<WorkflowHandle, 'result' | 'fetchHistory'>): Promise<void> {
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
