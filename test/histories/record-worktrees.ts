/**
 * 0.6.7's worktree and MCP-pin histories (called by record.ts; `npm run histories:record -- worktrees`
 * records only these): a session forked into a child session with isolation 'worktree' whose tool
 * writes a file there (fhWorktreeCreate on its first run, fhWorktreeFinish at its end); a sub-agent
 * (agentAsTool with `worktree: true`) working in its own worktree, with its child workflow; and a
 * session with a stateful MCP server that continues as new with its pin carried (its first run pins,
 * a later run lists and calls the server on the carried queue without pinning again). Each runs in a
 * fresh git repository with one commit, on its own fake model and worker (the worker registers the
 * counter server), and checks what it recorded for before it saves.
 */
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { startAgent, startSession, type AgentHandle } from '../../src/client';
import { callTools, FakeAnthropicServer, say, type FakeRoute, type RecordedRequest } from '../../src/testing';
import { MCP_PIN_CARRIED_PATCH } from '../../src/workflows/mcp-pin';
import { mcpSession, worktreeDelegator, worktreeSession } from '../fixtures/ecosystem-agents';
import { isTitleRequest } from '../support/session-fake';

export const WORKTREE_HISTORIES = [
  'worktree-session-child',
  'worktree-sub-agent-run',
  'worktree-sub-agent-child',
  'mcp-pin-continued-first-run',
  'mcp-pin-continued-later-run',
];

interface RecordWorker {
  client: Client;
  taskQueue: string;
  stop(): Promise<void>;
}
type McpServers = Record<string, { command: string; args: string[]; env?: Record<string, string> }>;
type Save = (name: string, handle: Pick<WorkflowHandle, 'result' | 'fetchHistory'> | AgentHandle) => Promise<void>;
type Events = temporal.api.history.v1.IHistoryEvent[];

const COUNTER = path.resolve(__dirname, '../fixtures/mcp-counter-server.js');

export async function recordWorktrees(startWorker: (name: string, baseURL: string, mcpServers: McpServers) => Promise<RecordWorker>, save: Save): Promise<void> {
  let route: FakeRoute | undefined;
  const fake = await FakeAnthropicServer.start({ route: (req) => (isTitleRequest(req) ? say('Recorded Worktree Session') : route?.(req)) });
  const w = await startWorker('record-worktrees', fake.url, { counter: { command: process.execPath, args: [COUNTER], env: { FH_OWNER: 'recorder' } } });
  try {
    await recordWorktreeSession(w, fake, save);
    await recordWorktreeSubAgent(w, fake, save);
    await recordCarriedPins(w, (r) => (route = r), save);
  } finally {
    await w.stop();
    await fake.stop();
  }
}

/** A temporary git repository with one commit (a worktree needs a commit to branch from). */
async function gitRepo(): Promise<{ dir: string; git: (...args: string[]) => string }> {
  const dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'fh-record-git-')));
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: dir, encoding: 'utf8' }).trim();
  git('init', '-q', '-b', 'main');
  await fs.writeFile(path.join(dir, 'README'), 'base\n');
  git('add', '-A');
  git('commit', '-q', '-m', 'base');
  return { dir, git };
}

const scheduled = (events: Events) => events.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);

function expectThat(ok: boolean, what: string): void {
  if (!ok) throw new Error(`recording: ${what}`);
}

/** A step that hangs fails the recording, naming the step (one recording once sat ten minutes, unexplained). */
const within = <T>(what: string, p: Promise<T>, ms = 90_000): Promise<T> =>
  Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`recording: ${what}: no answer in ${ms / 1000} s`)), ms).unref())]);

/** (a) A session forked at its first message into a child with its own worktree; the child writes a file there and answers. */
async function recordWorktreeSession(w: RecordWorker, fake: FakeAnthropicServer, save: Save): Promise<void> {
  const { dir, git } = await gitRepo();
  const parent = await startSession(w.client, worktreeSession, { id: 'recorded-worktree-parent', taskQueue: w.taskQueue, title: 'Parent', settings: { workingDirectory: dir } });
  fake.enqueue(say('ready'));
  await within('the parent session answers', parent.prompt('hello'));
  const child = await parent.fork({ atMessage: 1, isolation: 'worktree', id: 'recorded-worktree-session-child' });
  fake.enqueue(callTools({ name: 'write_file', input: { path: 'child.txt', content: 'from the child' } }), say('written'));
  expectThat((await within('the child session answers', child.prompt('write child.txt'))) === 'written', 'the child session did not answer');
  const wt = (await child.info()).worktree;
  expectThat(wt !== undefined && wt.path !== dir, 'the child session has no worktree');
  const ended = await within('the child session ends', child.end());
  expectThat(ended.worktree?.removed === true, 'the child session did not remove its worktree');
  expectThat(git('show', `${wt!.branch}:child.txt`) === 'from the child', "the child's file is not on its branch");
  await parent.end();
  const events = (await child.workflow.fetchHistory()).events ?? [];
  expectThat(['fhWorktreeCreate', 'fhTool', 'fhWorktreeFinish'].every((a) => scheduled(events).includes(a)), 'the child session history misses a worktree activity');
  await save('worktree-session-child', child.workflow);
}

/** (b) An agent whose sub-agent (agentAsTool with worktree: true) writes a file in its own worktree. */
async function recordWorktreeSubAgent(w: RecordWorker, fake: FakeAnthropicServer, save: Save): Promise<void> {
  const { dir, git } = await gitRepo();
  fake.enqueue(
    callTools({ name: 'eco-helper', input: { task: 'write child.txt' } }), // the parent hands over
    callTools({ name: 'write_file', input: { path: 'child.txt', content: 'from the sub-agent' } }), // the sub-agent
    say('written'),
    say('The helper wrote it.'), // the parent
  );
  const run = await startAgent(w.client, worktreeDelegator, { task: 'delegate', dir }, { workflowId: 'recorded-worktree-sub-agent-run', taskQueue: w.taskQueue });
  expectThat((await within('the delegating run ends', run.result())) === 'The helper wrote it.', 'the delegating run did not finish');
  const events = (await run.fetchHistory()).events ?? [];
  expectThat(scheduled(events).filter((a) => a === 'fhWorktreeCreate' || a === 'fhWorktreeFinish').length === 2, 'the run did not make and finish one worktree');
  const childId = events.find((e) => e.startChildWorkflowExecutionInitiatedEventAttributes)?.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId;
  expectThat(!!childId, 'no child workflow was started');
  const branch = git('branch', '--list', 'fh/*').replace(/^[*+ ]+/, '');
  expectThat(git('show', `${branch}:child.txt`) === 'from the sub-agent', "the sub-agent's file is not on its branch");
  await save('worktree-sub-agent-run', run);
  await save('worktree-sub-agent-child', w.client.workflow.getHandle(childId!));
}

type Block = { type: string; text?: string; content?: unknown };
const toolResults = (req: RecordedRequest): string[] =>
  (req.body.messages as Array<{ content: Block[] | string }>).flatMap((m) =>
    (Array.isArray(m.content) ? m.content : []).filter((b) => b.type === 'tool_result').map((b) => (typeof b.content === 'string' ? b.content : JSON.stringify(b.content))),
  );
const patchIds = (events: Events) =>
  events
    .filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')
    .flatMap((e) => e.markerRecordedEventAttributes!.details?.['patch-data']?.payloads ?? [])
    .map((p) => (JSON.parse(Buffer.from(p.data!).toString('utf8')) as { id: string }).id);

/**
 * (c) A session with the registered counter server (stateful) that continues as new twice: the first
 * run pins the server, a later run counts on the same connection through the carried pin.
 */
async function recordCarriedPins(w: RecordWorker, setRoute: (r: FakeRoute) => void, save: Save): Promise<void> {
  const { dir } = await gitRepo();
  // "count" calls the counter once and the reply is its result; anything else is answered "ok".
  setRoute((req) => {
    const last = (req.body.messages as Array<{ content: Block[] | string }>).at(-1)!;
    if (Array.isArray(last.content) && last.content.some((b) => b.type === 'tool_result')) return say(toolResults(req).at(-1)!);
    const text = typeof last.content === 'string' ? last.content : last.content.map((b) => b.text ?? '').join('');
    return text.includes('count') ? callTools({ name: 'counter__count', input: {} }) : say('ok');
  });
  // historyLimit 40: a run's start-up with an MCP server is 19 events, so each run serves a few prompts.
  const s = await startSession(w.client, mcpSession, { id: 'recorded-mcp-pin-session', taskQueue: w.taskQueue, historyLimit: 40, input: { dir, servers: ['counter'] } });
  const firstRun = (await s.workflow.describe()).runId;
  const before = await within('the first count', s.prompt('count'));
  for (let i = 0; i < 20 && (await s.info()).continuedRuns < 2; i++) await within(`prompt ${i} of the MCP session`, s.prompt(`hello ${i}`));
  expectThat((await s.info()).continuedRuns >= 2, 'the session did not continue as new twice');
  const after = await within('the later count', s.prompt('count'));
  const [b, a] = [before, after].map((x) => x.trim().split(' '));
  expectThat(a![1] === b![1] && Number(a![2]) === Number(b![2]) + 1, `the later count was not on the same connection (${before} then ${after})`);
  await within('the MCP session ends', s.end());

  // The chain of runs: the first pinned; a later one listed the server's tools on the carried pin.
  const runs: Array<{ runId: string; events: Events }> = [];
  for (let runId: string | undefined = firstRun; runId; ) {
    const events: Events = (await w.client.workflow.getHandle(s.workflow.workflowId, runId).fetchHistory()).events ?? [];
    runs.push({ runId, events });
    runId = events.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  expectThat(scheduled(runs[0]!.events).includes('fhMcpPin'), 'the first run did not pin the server');
  const later = runs
    .slice(1)
    .filter((r) => ['fhMcpList', 'fhTool'].every((a) => scheduled(r.events).includes(a)) && patchIds(r.events).includes(MCP_PIN_CARRIED_PATCH))
    .at(-1);
  expectThat(later !== undefined && !scheduled(later.events).includes('fhMcpPin'), 'no later run listed and called the server on its carried pin without pinning');
  await save('mcp-pin-continued-first-run', w.client.workflow.getHandle(s.workflow.workflowId, firstRun));
  await save('mcp-pin-continued-later-run', w.client.workflow.getHandle(s.workflow.workflowId, later!.runId));
}
