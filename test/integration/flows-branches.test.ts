/**
 * Parallel branches on the real dev server: in a git work dir each branch works in its own git
 * worktree (from the work dir as the earlier stages left it), its changes end up committed on a branch
 * named after the run and the branch node, the fan-in records each head and the best one, and the
 * worktrees are gone afterwards; in a plain dir the branches share it and the run says so. Gates inside
 * branches wait durably (a new worker answers them) and are answered through the run's handle. The
 * run's command output files (`.fh-flow/`) are gone from the work dir when it ends. Command stages'
 * tool calls run on the agent set's tool queue.
 */
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FakeAnthropicServer } from '@fabric-harness/sdk/testing';
import { getFlowHandle, startFlow } from '../../src/client/flows';
import { FLOW_GATES_MEMO_KEY } from '../../src/wire/flow-messages';
import type { FlowEvent } from '../../src/core/flows/events';
import { startTestWorker, type TestWorker } from '../support/test-worker';
import { rejection, until } from '../support/waiting';

const fid = (p: string) => `${p}-${process.pid}-${Date.now() % 1_000_000}`;
const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd, encoding: 'utf8' }).trim();
const exists = (p: string) => fs.stat(p).then(() => true, () => false);

const FAN_OUT = `digraph Fan {
  start   [shape=Mdiamond]
  prepare [script="echo prepared > prep.txt"]
  fan     [shape=component]
  a       [script="test ! -e b.txt && cat prep.txt > a.txt && echo a-ok"]
  b       [script="test ! -e a.txt && echo b-work > b.txt && echo b-broke >&2 && exit 3"]
  join    [shape=tripleoctagon]
  after   [script="ls -A"]
  exit    [shape=Msquare]
  start -> prepare -> fan
  fan -> a
  fan -> b
  a -> join
  b -> join
  join -> after -> exit
}`;

const GATED_BRANCHES = `digraph Gated {
  start  [shape=Mdiamond]
  fan    [shape=component]
  ui     [script="echo ui-built"]
  ui_ok  [shape=hexagon, label="UI?"]
  api    [script="echo api-built"]
  api_ok [shape=hexagon, label="API?"]
  keep_ui [script="echo ui-kept"]
  keep_api [script="echo api-kept"]
  join   [shape=tripleoctagon]
  exit   [shape=Msquare]
  start -> fan
  fan -> ui
  fan -> api
  ui -> ui_ok
  ui_ok -> keep_ui [label="[A] Accept"]
  ui_ok -> join [label="[D] Drop"]
  keep_ui -> join
  api -> api_ok
  api_ok -> keep_api [label="[A] Accept"]
  api_ok -> join [label="[D] Drop"]
  keep_api -> join
  join -> exit
}`;

type Result = { id: string; outcome: string; updates: Record<string, unknown>; head_sha?: string; git_branch?: string; work_dir?: string; work_dir_reason?: string };

describe('parallel branches', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;

  beforeAll(async () => {
    fake = await FakeAnthropicServer.start();
    w = await startTestWorker({ name: 'flows-branches', baseURL: fake.url });
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  it('in a git work dir: one worktree per branch, each head recorded, the best head set, worktrees removed, no .fh-flow left', async () => {
    const repo = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-flow-git-'));
    git(repo, 'init', '-q', '-b', 'main');
    await fs.writeFile(path.join(repo, 'README'), 'hello\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'first');
    const mainHead = git(repo, 'rev-parse', 'HEAD');

    const h = await startFlow(w.client, FAN_OUT, { workDir: repo, taskQueue: w.taskQueue, workflowId: fid('fan-git') });
    const result = await h.result();
    const ctx = result.context;
    const results = ctx['parallel.fan_in.results'] as Result[];
    expect(results.map((r) => [r.id, r.outcome])).toEqual([['a', 'success'], ['b', 'fail']]);

    // Each branch's branch is named after the run and the branch node; its head holds its own work.
    const slug = h.workflowId.replace(/[^a-zA-Z0-9._-]/g, '-');
    const named = (node: string) => expect.stringMatching(new RegExp(`^fh/${`flow-${slug}-${node}-1`.slice(0, 80)}-[0-9a-f]{12}/work$`));
    expect(results.map((r) => r.git_branch)).toEqual([named('a'), named('b')]);
    for (const r of results) expect(r.head_sha).toBe(git(repo, 'rev-parse', r.git_branch!));
    expect(ctx['parallel.fan_in.best_id']).toBe('a');
    expect(ctx['parallel.fan_in.best_head_sha']).toBe(results[0]!.head_sha);
    const filesAt = (sha: string) => git(repo, 'ls-tree', '-r', '--name-only', sha).split('\n').sort();
    // From the work dir as `prepare` left it (prep.txt was never committed), each with only its own file.
    expect(filesAt(results[0]!.head_sha!)).toEqual(['README', 'a.txt', 'prep.txt']);
    expect(filesAt(results[1]!.head_sha!)).toEqual(['README', 'b.txt', 'prep.txt']);
    expect(git(repo, 'show', `${results[0]!.head_sha}:a.txt`)).toBe('prepared');
    // Both branched off the same snapshot, whose parent is the user's HEAD.
    expect(git(repo, 'rev-parse', `${results[0]!.head_sha}~2`)).toBe(mainHead);
    expect(git(repo, 'rev-parse', `${results[0]!.head_sha}~1`)).toBe(git(repo, 'rev-parse', `${results[1]!.head_sha}~1`));

    // The user's checkout is untouched: same HEAD and branch, no branch files, only prepare's own file.
    expect(git(repo, 'rev-parse', 'HEAD')).toBe(mainHead);
    expect(git(repo, 'status', '--porcelain')).toBe('?? prep.txt');
    // The worktrees are removed (the failed branch's too).
    expect(git(repo, 'worktree', 'list', '--porcelain').split('\n').filter((l) => l.startsWith('worktree '))).toHaveLength(1);
    // The run's output files are gone, and no branch committed them.
    expect(await exists(path.join(repo, '.fh-flow'))).toBe(false);
    for (const r of results) expect(filesAt(r.head_sha!).some((f) => f.startsWith('.fh-flow'))).toBe(false);
    // While the run went on they were there (after's own listing shows them), and only there.
    expect(ctx['command.output']).toMatch(/^\.fh-flow$/m);
    const joined = (await h.state()).events.filter((e): e is Extract<FlowEvent, { type: 'flow.branch_joined' }> => e.type === 'flow.branch_joined');
    expect(joined.map((e) => [e.branch, e.gitBranch, e.headSha]).sort()).toEqual(results.map((r) => [r.id, r.git_branch, r.head_sha]));
  });

  it('in a plain dir: the branches share it, the results and events say so, no best head, no .fh-flow left', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-flow-plain-'));
    const h = await startFlow(w.client, FAN_OUT.replace('test ! -e b.txt && ', '').replace('test ! -e a.txt && ', ''), { workDir: dir, taskQueue: w.taskQueue, workflowId: fid('fan-plain') });
    const { context: ctx } = await h.result();
    const results = ctx['parallel.fan_in.results'] as Result[];
    for (const r of results) {
      expect(r.work_dir).toBe('shared');
      expect(r.work_dir_reason).toBe(`work dir ${dir} is not in a git repository: the branches share it`);
      expect(r.head_sha).toBeUndefined();
    }
    expect(ctx).not.toHaveProperty('parallel.fan_in.best_head_sha');
    const joined = (await h.state()).events.filter((e): e is Extract<FlowEvent, { type: 'flow.branch_joined' }> => e.type === 'flow.branch_joined');
    expect(joined.map((e) => e.sharedWorkDir)).toEqual([results[0]!.work_dir_reason, results[1]!.work_dir_reason]);
    // Shared: both branches' files are in the one dir.
    expect((await fs.readdir(dir)).sort()).toEqual(['a.txt', 'b.txt', 'prep.txt']);
    // Command stages' tool calls (bash, then reading its output back) ran on the agent set's tool queue.
    const history = await h.workflow.fetchHistory();
    const toolQueues = history.events!
      .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'fhTool')
      .map((e) => e.activityTaskScheduledEventAttributes!.taskQueue!.name!);
    expect(toolQueues).toHaveLength(6); // prepare and after: bash, stdout, stderr
    for (const q of toolQueues) expect(q).toMatch(new RegExp(`^${w.taskQueue}:tools-[0-9a-f]+$`));
  });

  it('gates inside branches wait durably and are answered through the run: ambiguous, wrong choice, by branch, by gate', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-flow-gates-'));
    const started = await startFlow(w.client, GATED_BRANCHES, { workDir: dir, taskQueue: w.taskQueue, workflowId: fid('gated') });
    const waiting = await until('both branch gates', async () => {
      const s = await started.state();
      return s.waitingGates?.length === 2 ? s : undefined;
    });
    expect(waiting.status).toBe('waiting');
    expect(waiting.nodeStates).toMatchObject({ ui_ok: 'waiting', api_ok: 'waiting' });
    expect(waiting.waitingGates!.map((g) => [g.branch, g.node]).sort()).toEqual([['api', 'api_ok'], ['ui', 'ui_ok']]);
    expect(waiting.waitingGate!.choices).toEqual([{ key: 'A', label: '[A] Accept', freeform: false }, { key: 'D', label: '[D] Drop', freeform: false }]);
    // The run's memo names the gates it waits at, for lists (Temporal says RUNNING either way).
    let run = started.workflow;
    const gatesInMemo = async () => ((await run.describe()).memo?.[FLOW_GATES_MEMO_KEY] as string[] | undefined)?.slice().sort();
    expect(await gatesInMemo()).toEqual(['api_ok', 'ui_ok']);

    // The waits are in history, not in a worker: a new worker takes the answers.
    await w.stop();
    w = await startTestWorker({ name: 'flows-branches', baseURL: fake.url, taskQueue: w.taskQueue });
    const h = getFlowHandle(w.client, started.workflowId);
    run = h.workflow;

    const ambiguous = await rejection(h.gate('A'));
    expect(ambiguous.code).toBe('FLOW_GATE_AMBIGUOUS');
    expect(ambiguous.message).toContain('gate ui_ok in branch ui');
    expect((await rejection(h.gate('Z', { branch: 'ui' }))).code).toBe('FLOW_UNKNOWN_CHOICE');
    expect((await rejection(h.gate('A', { branch: 'nope' }))).code).toBe('FLOW_NOT_WAITING');
    expect(await h.gate('A', { branch: 'ui' })).toEqual({ gate: 'ui_ok', selected: 'A', label: '[A] Accept' });
    // Answered once: the same branch gate answered again is refused, the other still waits.
    expect((await rejection(h.gate('D', { branch: 'ui' }))).code).toBe('FLOW_NOT_WAITING');
    expect(await gatesInMemo()).toEqual(['api_ok']);
    expect(await h.gate('D', { gate: 'api_ok' })).toEqual({ gate: 'api_ok', selected: 'D', label: '[D] Drop' });
    expect(await gatesInMemo()).toBeUndefined();

    const { context: ctx } = await h.result();
    const results = ctx['parallel.fan_in.results'] as Result[];
    expect(results.map((r) => [r.id, r.outcome, r.updates['human.gate.selected'], r.updates['command.output']])).toEqual([
      ['ui', 'success', 'A', 'ui-kept\n'],
      ['api', 'success', 'D', 'api-built\n'],
    ]);
    // Each branch's gate keys stayed in its copy.
    expect(ctx).not.toHaveProperty('human.gate.selected');
    const history = await h.workflow.fetchHistory();
    expect(history.events!.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes)).toHaveLength(2);
    expect(await exists(path.join(dir, '.fh-flow'))).toBe(false);
  });
});
