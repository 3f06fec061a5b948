/**
 * The `fh` command as users run it: the BUILT binary (dist/cli/main.js) in subprocesses, against the
 * integration dev server. A `fh worker` subprocess serves test/fixtures/cli-agents.js (plain JS that
 * requires @fabric-harness/sdk, i.e. this checkout's dist/ by package self-reference), with the
 * scripted fake Anthropic server of this process as its model. What `fh history` reports is checked
 * against the requests the fake actually received.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { FakeAnthropicServer, callTools, say, type RecordedRequest } from '@fabric-harness/sdk/testing';
import { getFreePort } from '../../src/testing/temporal-cli';
import { isPortFree } from '../../src/testing/loopback-ports';
import { ensureBuilt, FH, runFh, type Ran } from '../support/fh-cli';
import {
  ConnectionSettingsError,
  resolveConnectionSettings,
  type EnvconfigModule,
} from '../../src/client/connection';

const ROOT = path.resolve(__dirname, '../..');
const AGENTS = 'test/fixtures/cli-agents.js';
const CHANGED = 'test/fixtures/changed-agents.ts';
const MARKER = '[fabric-harness:summarize]';
const SUMMARY = '## Goal\nRead the outputs.\n## Progress\nRead two long outputs.\n## Key Decisions\nNone.\n## Failed Approaches\nNone.\n## Open Issues\nNone.\n## Next Steps\nAdd 2 and 3.';

let env: NodeJS.ProcessEnv;

/** Runs `fh …` to completion. */
function fh(args: string[], opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number; input?: string } = {}): Promise<Ran> {
  return runFh(args, { ...env, ...opts.env }, { ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}), ...(opts.input !== undefined ? { input: opts.input } : {}) });
}

/** A long-running `fh …` (worker, server), resolved once a line matching `ready` was printed. */
async function fhBackground(args: string[], ready: RegExp, extraEnv: NodeJS.ProcessEnv = {}) {
  const child = spawn(process.execPath, [FH, ...args], { cwd: ROOT, env: { ...env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
  const out = { stdout: '', stderr: '' };
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`fh ${args[0]} never got ready\nstdout: ${out.stdout}\nstderr: ${out.stderr}`)), 90_000);
    const check = () => {
      if (ready.test(out.stdout) || ready.test(out.stderr)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', (d) => ((out.stdout += d), check()));
    child.stderr.on('data', (d) => ((out.stderr += d), check()));
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`fh ${args[0]} exited (${code}) before it was ready\nstdout: ${out.stdout}\nstderr: ${out.stderr}`));
    });
  });
  return {
    child,
    out,
    /** Ctrl-C, then the exit code. */
    async interrupt(): Promise<number | null> {
      child.kill('SIGINT');
      return exited;
    },
    exited,
  };
}

/** A session that started with its input: its task answered (within 20 s), not failed; then ended. */
async function expectAnswered(sessionId: string, reply: string): Promise<void> {
  let shown = await fh(['session', 'show', sessionId, '--messages']);
  for (const started = Date.now(); !shown.stdout.includes(reply) && Date.now() - started < 20_000; ) {
    await new Promise((r) => setTimeout(r, 250));
    shown = await fh(['session', 'show', sessionId, '--messages']);
  }
  expect(shown.stdout).toContain(reply);
  expect(shown.stdout).not.toMatch(/^failed/m);
  expect((await fh(['session', 'end', sessionId])).code).toBe(0);
}

function json<T = any>(r: Ran): T {
  try {
    return JSON.parse(r.stdout) as T;
  } catch {
    throw new Error(`not JSON (exit ${r.code}):\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  }
}

/** An error the way `fh` promises it: exactly one line on stderr, starting with `fh: `. */
function expectOneLineError(r: Ran, code: number, pattern: RegExp): void {
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code, stderr: expect.stringMatching(pattern) });
  const lines = r.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^fh: /);
}

const isSummarize = (r: RecordedRequest) => typeof r.body?.system === 'string' && r.body.system.split('\n')[0].includes(MARKER);

describe('the fh command', () => {
  let fake: FakeAnthropicServer;
  let worker: Awaited<ReturnType<typeof fhBackground>>;
  let tmp: string;
  const taskQueue = `cli-${process.pid}-${Date.now()}`;
  const id = (name: string) => `${name}-${process.pid}-${Date.now()}`;
  const calcId = id('cli-calc');
  const compactorId = id('cli-compactor');

  beforeAll(async () => {
    ensureBuilt();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'fh-cli-'));
    const address = process.env.FH_TEST_TEMPORAL_ADDRESS;
    if (!address) throw new Error('FH_TEST_TEMPORAL_ADDRESS is not set: run through the jest integration project');
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TEMPORAL_') && !k.startsWith('ANTHROPIC_') && k !== 'FH_AGENTS'));
    env = {
      ...clean,
      TEMPORAL_ADDRESS: address,
      TEMPORAL_NAMESPACE: process.env.FH_TEST_TEMPORAL_NAMESPACE ?? 'default',
      FH_STORE_DIR: path.join(tmp, 'store'),
    };
    fake = await FakeAnthropicServer.start({ route: (req) => (isSummarize(req) ? say(SUMMARY) : undefined) });
    worker = await fhBackground(['worker', '--agents', AGENTS, '--task-queue', taskQueue, '--session-cache-memory', '270MB'], /session cache: .* per cached session/, {
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: fake.url,
    });
  });

  afterAll(async () => {
    if (worker) {
      const code = await worker.interrupt();
      expect(worker.out.stderr).toMatch(/\[fh worker\] stopped/);
      expect(code).toBe(0);
    }
    await fake?.stop();
  });

  it('fh worker --session-cache-memory sizes the session cache from the budget given, and says what it chose', () => {
    // 270 MB / 2.7 MB per cached session (src/worker/session-cache.ts): the worker caches 100 sessions.
    expect(worker.out.stderr).toContain('[fh worker] session cache: up to 100 sessions (maxCachedWorkflows 100: sessionCacheMemory 270.0 MB (bytes set) / 2.7 MB per cached session)');
  });

  it('a session whose run failed at once (an agent that needs input, started without it) says so: fh session show prints the failure, fh chat will not open', async () => {
    const id = `cli-failed-${process.pid}-${Date.now() % 100000}`;
    expect((await fh(['session', 'new', 'cli-chat', '--id', id, '-q', taskQueue])).code).toBe(0);
    // The run fails on the worker's first workflow task; the worker answers queries on the failed run.
    let shown = await fh(['session', 'show', id]);
    for (const started = Date.now(); !/^failed/m.test(shown.stdout) && Date.now() - started < 20_000; ) {
      await new Promise((r) => setTimeout(r, 250));
      shown = await fh(['session', 'show', id]);
    }
    expect(shown.stdout).toMatch(new RegExp(`^id +${id} \\(ended\\)$`, 'm'));
    expect(shown.stdout).toMatch(/^failed +Invalid input for agent 'cli-chat'.*\[INVALID_INPUT\]: every message is answered with this error$/m);
    const json = JSON.parse((await fh(['session', 'show', id, '--json'])).stdout) as { info: { failure?: { code: string } } };
    expect(json.info.failure).toMatchObject({ code: 'INVALID_INPUT' });
    const chat = await fh(['chat', id]);
    expect(chat.code).toBe(1);
    expect(chat.stderr).toMatch(new RegExp(`^fh: session ${id} has ended: its run failed with Invalid input for agent 'cli-chat'.*\\[INVALID_INPUT\\]; start another with \`fh chat --new cli-chat --input '<json>'\`$`, 'm'));

    // With its input (--input, as fh run takes it) the same agent's session runs: its task answered, then it serves.
    fake.enqueue(say('Hi from the session.'));
    const withInput = `${id}-in`;
    expect((await fh(['session', 'new', 'cli-chat', '--id', withInput, '--input', '{"task":"Say hi"}', '-q', taskQueue])).code).toBe(0);
    await expectAnswered(withInput, 'Hi from the session.');
    const badJson = await fh(['session', 'new', 'cli-chat', '--input', '{task:', '-q', taskQueue]);
    expect(badJson.code).toBe(2);
    expect(badJson.stderr).toMatch(/^fh: --input is not JSON/m);

    // With the agent modules at hand (--agents, as fh run takes them) the input is checked before anything starts.
    const checkedId = `${id}-checked`;
    const refused = await fh(['session', 'new', 'cli-chat', '--id', checkedId, '--agents', AGENTS, '-q', taskQueue]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^fh: --input does not match the input schema of 'cli-chat': field '\(root\)'/m);
    expect((await fh(['session', 'show', checkedId, '--timeout', '5'])).code).toBe(3); // never started

    // fh chat --new takes the same --input and --agents: checked before anything starts, then the task answered.
    const chatRefused = await fh(['chat', '--new', 'cli-chat', '--id', `${id}-chat-refused`, '--agents', AGENTS, '-q', taskQueue], { input: '/exit\n' });
    expect(chatRefused.code).toBe(2);
    expect(chatRefused.stderr).toMatch(/^fh: --input does not match the input schema of 'cli-chat': field '\(root\)'/m);
    expect((await fh(['chat', '--new', 'cli-chat', '--input', '-', '-q', taskQueue], { input: '{}\n' })).stderr).toMatch(/^fh: fh chat reads your messages from stdin: give --input as JSON or @file$/m);
    expect((await fh(['chat', withInput, '--input', '{"task":"x"}'])).stderr).toMatch(/^fh: --input goes with --new <agent>: a session takes its input when it starts$/m);
    fake.enqueue(say('Hi from the chat.'));
    const chatId = `${id}-chat`;
    const chatted = await fh(['chat', '--new', 'cli-chat', '--id', chatId, '--input', '{"task":"Say hi"}', '--agents', AGENTS, '-q', taskQueue], { input: '/exit\n' });
    expect(chatted.code).toBe(0);
    await expectAnswered(chatId, 'Hi from the chat.');
  });

  it('prints help with commands, examples and exit codes', async () => {
    const top = await fh(['--help']);
    expect(top.code).toBe(0);
    for (const c of ['server', 'worker', 'run', 'list', 'state', 'budget', 'history', 'history export', 'replay', 'prompt', 'compact', 'close'])
      expect(top.stdout).toContain(`  ${c}`);
    expect(top.stdout).toMatch(/Exit status:[\s\S]*0 +success[\s\S]*1 +failure[\s\S]*2 +usage error[\s\S]*3 +not found[\s\S]*4 +the Temporal server cannot be reached/);
    expect(top.stdout).toContain('TEMPORAL_ADDRESS');

    const state = await fh(['state', '--help']);
    expect(state.code).toBe(0);
    expect(state.stdout).toMatch(/Usage: fh state <workflow-id>/);
    expect(state.stdout).toMatch(/Examples:\n {2}fh state /);
    expect(state.stdout).toContain('--address');

    expectOneLineError(await fh(['frob']), 2, /unknown command 'frob'.*fh --help/);
    expectOneLineError(await fh(['state', 'x', '--bogus']), 2, /unknown option '--bogus'.*fh state --help/);
    expectOneLineError(await fh(['state']), 2, /needs a workflow id/);
  });

  it('fh run starts an agent as a workflow and prints its result; fh list shows it', async () => {
    fake.enqueue(callTools({ name: 'add', input: { a: 2, b: 3 } }), say('The sum is 5.'));
    const r = await fh(['run', 'cli-calc', '--input', '{"task":"Add 2 and 3"}', '--workflow-id', calcId, '--task-queue', taskQueue, '--json']);
    expect(r.code).toBe(0);
    expect(json(r)).toMatchObject({ workflowId: calcId, agent: 'cli-calc', status: 'COMPLETED', result: { reply: 'The sum is 5.', usage: { modelCalls: 2 } } });

    // Visibility is eventually consistent: give it a moment.
    let listed: any[] = [];
    for (let i = 0; i < 50 && !listed.some((w) => w.workflowId === calcId && w.status === 'COMPLETED'); i++) {
      listed = json(await fh(['list', '--agent', 'cli-calc', '--json', '--limit', '100']));
      await new Promise((res) => setTimeout(res, 200));
    }
    expect(listed.find((w) => w.workflowId === calcId)).toMatchObject({ agent: 'cli-calc', status: 'COMPLETED', taskQueue, startTime: expect.any(String) });
    const text = await fh(['list', '--agent', 'cli-calc']);
    // The same status names in the table as in the JSON.
    expect(text.stdout).toMatch(new RegExp(`WORKFLOW ID +AGENT +STATUS +STARTED[\\s\\S]*${calcId} +cli-calc +COMPLETED `));
  });

  it('a run of an agent the worker does not have is refused at start, with exit 2', async () => {
    const r = await fh(['run', 'no-such-agent', '--input', '{}', '--task-queue', taskQueue]);
    // The worker polling the queue lacks the agent: refused as it starts (the run is terminated), one line.
    expectOneLineError(r, 2, /^fh: Unknown agent 'no-such-agent' on task queue '\S+': the worker polling it registers cli-calc, cli-compactor, cli-chat\. The run was refused as it started \(terminated\).* \[UNKNOWN_AGENT\]; a run or session runs an agent/);
  });

  it('fh history export + fh replay: ok against the same code, divergence (exit 1) against changed code', async () => {
    const file = path.join(tmp, 'calc.json');
    const exported = await fh(['history', 'export', calcId, file]);
    expect(exported.code).toBe(0);
    expect(exported.stdout).toMatch(new RegExp(`wrote \\d+ events of ${calcId} to`));
    const saved = JSON.parse(fs.readFileSync(file, 'utf8'));
    expect(saved.events[0]).toMatchObject({ eventId: '1', eventType: 'EVENT_TYPE_WORKFLOW_EXECUTION_STARTED' }); // Temporal's proto-JSON

    const same = await fh(['replay', file, '--agents', AGENTS]);
    expect(same.stderr).toBe('');
    expect(same.stdout).toMatch(/^ok: replayed \d+ events of .*calc\.json against test\/fixtures\/cli-agents\.js/);
    expect(same.code).toBe(0);

    const changed = await fh(['replay', file, '--agents', CHANGED]);
    expect(changed.stdout).toMatch(
      /^divergence at event \d+ replaying .*: The workflow code now issues a different command at event \d+ than the recorded run did: recorded (a model call \(activity fhModel\)|storing the system prompt and tools \(activity fhStorePrelude\)), code now a compaction decision \(local activity fhDecideCompaction\)/,
    );
    expect(changed.code).toBe(1);

    const asJson = await fh(['replay', file, '--agents', CHANGED, '--json']);
    expect(asJson.code).toBe(1);
    const result = json(asJson);
    // The first command of the conversation: since the fh-prelude-first patch, storing its prelude.
    const modelEvent = saved.events.find((e: any) => ['fhStorePrelude', 'fhModel'].includes(e.activityTaskScheduledEventAttributes?.activityType?.name));
    expect(result).toMatchObject({
      ok: false,
      kind: 'nondeterminism',
      eventId: Number(modelEvent.eventId),
      recorded: { kind: 'activity', name: modelEvent.activityTaskScheduledEventAttributes.activityType.name },
      current: { kind: 'local_activity', name: 'fhDecideCompaction' },
      error: expect.stringContaining('Nondeterminism'),
    });

    // A module without the run's agent: said in a line (not the worker's advice about retried tasks, or a stack).
    const other = await fh(['replay', file, '--agents', path.resolve(__dirname, '../fixtures/cli-agents-other.js')]);
    expect(other.stdout).toBe(
      "wrong agents module replaying " + file + ": The current code does not define this run's agent 'cli-calc' (it defines cli-other). Replay against the module that defines it (--agents / options.agents).\n",
    );
    expect(other.code).toBe(1);

    // By workflow id, fetched from the server.
    const live = await fh(['replay', calcId, '--agents', AGENTS, '--json']);
    expect(live.code).toBe(0);
    expect(json(live)).toMatchObject({ ok: true, workflowId: calcId, source: 'workflow' });
  });

  it('a run that compacts: fh state, fh budget, and an audit transcript that matches what the model saw', async () => {
    fake.enqueue(
      callTools({ name: 'pad', input: { words: 300 } }),
      callTools({ name: 'pad', input: { words: 300 } }),
      callTools({ name: 'add', input: { a: 2, b: 3 } }),
      say('Done: 5.'),
    );
    const before = fake.messageRequests().length;
    const requestsBefore = fake.requests.length;
    const r = await fh(['run', 'cli-compactor', '--input', '{"task":"Read the outputs, then add 2 and 3"}', '--workflow-id', compactorId, '--task-queue', taskQueue, '--json']);
    expect(r.code).toBe(0);
    const result = json(r).result;
    expect(result.reply).toBe('Done: 5.');
    expect(result.compaction.count).toBeGreaterThanOrEqual(1);
    const sent = fake.messageRequests().slice(before);
    const modelRequests = sent.filter((q) => !isSummarize(q));
    const summaryRequests = sent.filter(isSummarize);
    expect(summaryRequests.length).toBeGreaterThanOrEqual(1);

    // fh state / fh budget (queries answered by the worker subprocess).
    const state = await fh(['state', compactorId]);
    expect(state.code).toBe(0);
    expect(state.stdout).toContain(`Compaction state of ${compactorId} (session main)`);
    expect(state.stdout).toMatch(/enabled +yes: compacts above 900 of 4000 tokens, keeps 2 recent entries/);
    expect(state.stdout).toMatch(new RegExp(`compactions +${result.compaction.count} \\(after ${result.compaction.decisions} decisions\\)`));
    expect(json(await fh(['state', compactorId, '--json']))).toMatchObject({ sessionId: 'main', count: result.compaction.count, enabled: true });
    const budget = await fh(['budget', compactorId]);
    expect(budget.code).toBe(0);
    for (const layer of ['system prompt', 'tool definitions', 'summaries', 'history', 'reserved for reply', 'free']) {
      expect(budget.stdout).toMatch(new RegExp(`^ +${layer} +[█░]{40} +\\d+ +\\d+\\.\\d%$`, 'm'));
    }
    expect(json(await fh(['budget', compactorId, '--json']))).toMatchObject({ contextWindowTokens: 4000, layers: { summaries: expect.any(Number) } });

    // The audit, from history alone.
    const h = await fh(['history', compactorId, '--json']);
    expect(h.code).toBe(0);
    const audit = json(h);
    const records: any[] = audit.records;
    const of = (type: string) => records.filter((x) => x.type === type);
    expect(audit.run).toMatchObject({ workflowId: compactorId, agent: 'cli-compactor', status: 'completed', taskQueue });

    // Every model call the fake answered, in order, with the usage it reported.
    const calls = of('model_call');
    expect(calls).toHaveLength(modelRequests.length);
    expect(calls.map((c) => c.usage.inputTokens)).toEqual(modelRequests.map((q) => q.inputTokens));
    expect(calls.map((c) => c.stopReason)).toEqual(['tool_use', 'tool_use', 'tool_use', 'end_turn']);
    expect(calls.every((c) => c.model === modelRequests[0]!.body.model && c.status === 'completed')).toBe(true);
    expect(calls[0].tools).toEqual(['pad', 'add', 'read_artifact']); // the default entry offers the artifact reader
    expect(calls[3].response.text).toBe('Done: 5.');
    expect(audit.run.totals).toMatchObject({
      modelCalls: modelRequests.length,
      inputTokens: modelRequests.reduce((s, q) => s + q.inputTokens!, 0),
      summaries: summaryRequests.length,
      summarizer: { calls: summaryRequests.length, inputTokens: summaryRequests.reduce((s, q) => s + q.inputTokens!, 0) },
    });
    expect(result.usage.summarizer).toMatchObject({ calls: summaryRequests.length, inputTokens: summaryRequests.reduce((s, q) => s + q.inputTokens!, 0) });
    // The window the agent set (4000) is the one reported, and it was not looked up.
    expect(of('model_resolved')).toEqual([expect.objectContaining({ contextWindowTokens: 4000, contextWindowSource: 'agent' })]);
    expect(fake.requests.slice(requestsBefore).filter((q) => q.path.startsWith('/v1/models'))).toEqual([]);

    // Every tool call: the tool_use blocks the model sent back, and the tool_result contents the model then saw.
    const toolUses = new Map<string, any>();
    const toolResults = new Map<string, string>();
    for (const q of modelRequests) {
      for (const m of q.body.messages) {
        for (const b of Array.isArray(m.content) ? m.content : []) {
          if (b.type === 'tool_use') toolUses.set(b.id, { callId: b.id, name: b.name, arguments: b.input });
          if (b.type === 'tool_result') toolResults.set(b.tool_use_id, b.content);
        }
      }
    }
    const tools = of('tool_call');
    expect(tools.map((t) => ({ callId: t.callId, name: t.name, arguments: t.arguments }))).toEqual([...toolUses.values()]);
    expect(tools.map((t) => t.name)).toEqual(['pad', 'pad', 'add']);
    for (const t of tools) expect(t.result).toBe(toolResults.get(t.callId)); // full text kept in the JSON
    expect(tools[0].result.length).toBeGreaterThan(1000);
    expect(tools[0].resultPreview.length).toBeLessThan(tools[0].result.length);
    expect(tools[2].result).toBe('5');

    // Every compaction decision (one before each model call), and the summaries of the compactions.
    const decisions = of('compaction_decision');
    expect(decisions).toHaveLength(modelRequests.length);
    expect(decisions.every((d) => d.recorded && typeof d.estimatedTokens === 'number' && d.threshold === 900)).toBe(true);
    const compacted = decisions.filter((d) => d.compact);
    expect(compacted).toHaveLength(result.compaction.count);
    expect(compacted[0]).toMatchObject({ reason: 'threshold', cut: expect.any(Number), why: expect.stringMatching(/over the threshold of 900; compacting/) });
    const summaries = of('summary');
    expect(summaries.map((s) => s.request)).toEqual(summaryRequests.map((q) => q.body.messages[0].content[0].text));
    expect(summaries.every((s) => s.trigger === 'threshold' && s.text === SUMMARY)).toBe(true);
    // The model call after a compaction was sent the summary.
    const firstCompaction = records.indexOf(compacted[0]);
    expect(records.slice(firstCompaction).find((x) => x.type === 'model_call').context.summaries).toBe(1);

    // What the user sent, and timestamps throughout.
    expect(records[0]).toMatchObject({ type: 'input', input: { task: 'Read the outputs, then add 2 and 3' } });
    expect(of('prompt').map((p) => p.text)).toEqual(['Read the outputs, then add 2 and 3']);
    expect(records.every((x) => !Number.isNaN(Date.parse(x.at)))).toBe(true);

    // The Markdown view says the same.
    const md = await fh(['history', compactorId]);
    expect(md.code).toBe(0);
    expect(md.stdout).toContain(`# Audit: cli-compactor — ${compactorId}`);
    expect(md.stdout).toMatch(/Model resolved: .* \(context window 4000 tokens, set by the agent\)/);
    expect(md.stdout.match(/^## \d+\. Model call: /gm)).toHaveLength(calls.length);
    expect(md.stdout.match(/^## \d+\. Tool call: (pad|add) /gm)).toHaveLength(3);
    expect(md.stdout.match(/^## \d+\. Compaction decision: compact \(threshold\)/gm)).toHaveLength(compacted.length);
    expect(md.stdout.match(/^## \d+\. Compaction summary \(threshold\)/gm)).toHaveLength(summaries.length);
    expect(md.stdout).toContain('truncated here; full text in --json');

    // The same audit from an exported file, without the server.
    const file = path.join(tmp, 'compactor.json');
    expect((await fh(['history', 'export', compactorId, file])).code).toBe(0);
    const offline = json(await fh(['history', file, '--json'], { env: { TEMPORAL_ADDRESS: '127.0.0.1:1' } }));
    expect(offline.records).toEqual(records);
    // And it replays against the code that recorded it.
    expect((await fh(['replay', file, '--agents', AGENTS])).code).toBe(0);
  });

  it('fh prompt, fh compact, fh close: talk to a running agent', async () => {
    const chatId = id('cli-chat');
    fake.enqueue(say('first reply'), say('second reply'));
    const started = await fh(['run', 'cli-chat', '--input', '{"task":"hello"}', '--workflow-id', chatId, '--task-queue', taskQueue, '--no-wait']);
    expect(started.code).toBe(0);
    const prompted = await fh(['prompt', chatId, 'and again?', '--id', `${chatId}-q1`]);
    expect(prompted).toMatchObject({ code: 0, stdout: 'second reply\n' });
    expect(fake.messageRequests().at(-1)!.body.messages.at(-1).content[0].text).toBe('and again?');
    // A retry with the same idempotency key gets the first reply; the model is not asked again.
    const asked = fake.messageRequests().length;
    expect(await fh(['prompt', chatId, 'and again?', '--id', `${chatId}-q1`])).toMatchObject({ code: 0, stdout: 'second reply\n' });
    expect(fake.messageRequests().length).toBe(asked);

    const compacted = await fh(['compact', chatId, '--keep', '2', '--no-summary', '--json']);
    expect(compacted.code).toBe(0);
    expect(json(compacted)).toMatchObject({ compactedEntries: 2, summary: expect.stringContaining('## Goal') });

    expect((await fh(['close', chatId])).code).toBe(0);
    const history = json(await fh(['history', chatId, '--json']));
    expect(history.run.status).toBe('completed');
    expect(history.records.filter((r: any) => r.type === 'update').map((r: any) => r.name)).toEqual(['fh.prompt', 'fh.compact']);
    // The run has ended: say so (and how), not "no workflow".
    expectOneLineError(await fh(['prompt', chatId, 'still there?']), 1, new RegExp(`run ${chatId} has ended \\(COMPLETED\\): it takes no more prompts`));

    expectOneLineError(await fh(['prompt', 'no-such-run', 'hi']), 3, /no workflow 'no-such-run'/);
    expectOneLineError(await fh(['prompt', chatId]), 2, /needs the text/);
  });

  it('fh run says what it waits for: a serving agent (and how to end it), or no worker on the task queue', async () => {
    const chatId = id('cli-wait');
    fake.enqueue(say('first reply'));
    const hint = { FH_RUN_HINT_MS: '500' };
    const serving = /still waiting after \d+ s: the agent is serving prompts \(its run called serve\(\)\)/;
    const waiting = await fhBackground(['run', 'cli-chat', '--input', '{"task":"hello"}', '--workflow-id', chatId, '--task-queue', taskQueue], serving, hint);
    expect(waiting.out.stderr).toContain(`end it with \`fh close ${chatId}\`; it ends by itself after 120 s without a prompt`);
    expect(waiting.out.stderr).not.toMatch(/is a worker serving/);
    expect((await fh(['close', chatId])).code).toBe(0);
    expect(await waiting.exited).toBe(0);
    expect(JSON.parse(waiting.out.stdout)).toMatchObject({ first: 'first reply', served: 0 });

    // Nobody polls this task queue: say so, and what to start.
    const lonelyId = id('cli-lonely');
    const lonelyQueue = `${taskQueue}-nobody`;
    const lonely = await fhBackground(
      ['run', 'cli-calc', '--input', '{"task":"Add 2 and 3"}', '--workflow-id', lonelyId, '--task-queue', lonelyQueue],
      /still waiting after \d+ s: no worker polls task queue/,
      hint,
    );
    expect(lonely.out.stderr).toContain(`no worker polls task queue '${lonelyQueue}': start one with \`fh worker --agents <module>\``);
    await lonely.interrupt();
    const connection = await Connection.connect({ address: env.TEMPORAL_ADDRESS! });
    await new Client({ connection, namespace: env.TEMPORAL_NAMESPACE }).workflow.getHandle(lonelyId).terminate('test done');
    await connection.close();
  });

  it('a rejected API key: fh run prints the typed cause; an ended run with no worker answering is read from history', async () => {
    const strict = await FakeAnthropicServer.start({ apiKey: 'the-right-key' });
    const queue = `cli-auth-${process.pid}-${Date.now()}`;
    const badKeyWorker = await fhBackground(['worker', '--agents', AGENTS, '--task-queue', queue], /ready on task queue/, {
      ANTHROPIC_API_KEY: 'a-wrong-key',
      ANTHROPIC_BASE_URL: strict.url,
    });
    const runId = id('cli-auth');
    try {
      const r = await fh(['run', 'cli-calc', '--input', '{"task":"x"}', '--workflow-id', runId, '--task-queue', queue]);
      expect(r.code).toBe(1);
      const errors = r.stderr.trim().split('\n').filter((l) => l.startsWith('fh: '));
      expect(errors).toEqual([expect.stringMatching(/^fh: run cli-auth-\S+ failed: Anthropic API 401: invalid x-api-key \[MODEL_AUTHENTICATION\]; see `fh history /)]);
      const asJson = json(await fh(['run', 'cli-calc', '--input', '{"task":"x"}', '--task-queue', queue, '--json']));
      expect(asJson).toMatchObject({ status: 'FAILED', failure: { code: 'MODEL_AUTHENTICATION', retryable: false } });
    } finally {
      expect(await badKeyWorker.interrupt()).toBe(0);
      await strict.stop();
    }
    // The worker is gone (the server may still list its last poll): no 10 s wait, the history answers.
    const t0 = Date.now();
    const state = await fh(['state', runId, '--json']);
    expect(Date.now() - t0).toBeLessThan(8_000);
    expect(json(state)).toMatchObject({ source: 'history', status: 'FAILED', workflowId: runId, usage: { modelCalls: 0 } });
  });

  it('a running agent or session whose worker just stopped: fh state and fh chat say no worker answers and what to start, not a bare "Failed to query Workflow"', async () => {
    const queue = `cli-stopped-${process.pid}-${Date.now()}`;
    const served = await fhBackground(['worker', '--agents', AGENTS, '--task-queue', queue], /ready on task queue/, { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: fake.url });
    const runId = id('cli-stopped');
    const sessionId = `cli-stopped-session-${process.pid}-${Date.now() % 100000}`;
    fake.enqueue(say('Hello.'), say('Hi from the session.'));
    try {
      expect((await fh(['run', 'cli-chat', '--input', '{"task":"hi"}', '--workflow-id', runId, '--task-queue', queue, '--no-wait'])).code).toBe(0);
      // Answered while the worker runs, once the first turn is done (the run then serves prompts).
      let shown = await fh(['history', runId]);
      for (const t0 = Date.now(); !shown.stdout.includes('Hello.') && Date.now() - t0 < 20_000; ) shown = await fh(['history', runId]);
      expect(shown.stdout).toContain('Hello.');
      expect((await fh(['state', runId])).code).toBe(0);
      expect((await fh(['session', 'new', 'cli-chat', '--id', sessionId, '--input', '{"task":"Say hi"}', '-q', queue])).code).toBe(0);
      let session = await fh(['session', 'show', sessionId, '--messages']);
      for (const t0 = Date.now(); !session.stdout.includes('Hi from the session.') && Date.now() - t0 < 20_000; ) session = await fh(['session', 'show', sessionId, '--messages']);
      expect(session.stdout).toContain('Hi from the session.');
    } finally {
      expect(await served.interrupt()).toBe(0);
    }
    // The server still lists the stopped worker's last poll, and turns the query away with its own reason
    // ("no poller seen for task queue recently") well before this deadline.
    const state = await fh(['state', runId, '--timeout', '60'], { timeoutMs: 90_000 });
    expectOneLineError(state, 1, new RegExp(`^fh: no worker answered: the server has seen no worker poll task queue '${queue}' lately .*fh worker --agents <module> --task-queue ${queue}\``));
    const chat = await fh(['chat', sessionId], { input: '/exit\n' });
    // The session client tells this case itself (NO_WORKER), naming the worker to start once.
    expectOneLineError(chat, 1, new RegExp(`^fh: session ${sessionId}: no worker is polling task queue ${queue}, so nothing can answer it now; start one \\(\`fh worker --agents <module> --task-queue ${queue}\`\\) and ask again \\[NO_WORKER\\]\n$`));
    const connection = await Connection.connect({ address: env.TEMPORAL_ADDRESS! });
    try {
      const cleanup = new Client({ connection, namespace: env.TEMPORAL_NAMESPACE }).workflow;
      await cleanup.getHandle(sessionId).terminate('cli.test cleanup');
      await cleanup.getHandle(runId).terminate('cli.test cleanup');
    } finally {
      await connection.close();
    }
  });

  describe('errors: one line, documented exit codes', () => {
    it('unknown workflow id: exit 3', async () => {
      for (const cmd of [['state'], ['budget'], ['history'], ['replay']]) {
        const args = [...cmd, `no-such-workflow-${process.pid}`, ...(cmd[0] === 'replay' ? ['--agents', AGENTS] : [])];
        expectOneLineError(await fh(args), 3, new RegExp(`no workflow 'no-such-workflow-${process.pid}' in namespace 'default' at .*fh list`));
      }
      expectOneLineError(await fh(['history', 'export', 'no-such-workflow', path.join(tmp, 'x.json')]), 3, /no workflow 'no-such-workflow'/);
    });

    it('unreachable server (a closed port): exit 4', async () => {
      const port = await getFreePort(); // free now: nothing listens there
      for (const args of [['list'], ['state', 'x'], ['run', 'cli-calc', '--input', '{}'], ['history', 'x']]) {
        expectOneLineError(
          await fh([...args, '--address', `127.0.0.1:${port}`]),
          4,
          new RegExp(`cannot reach the Temporal server at 127\\.0\\.0\\.1:${port} \\(from --address\\): connection refused.*fh server`),
        );
      }
      // From the environment, the message says so.
      expectOneLineError(await fh(['list'], { env: { TEMPORAL_ADDRESS: `127.0.0.1:${port}` } }), 4, /\(from TEMPORAL_ADDRESS\)/);
    });

    it('malformed history files: exit 2; a missing one: exit 3', async () => {
      const notJson = path.join(tmp, 'not-json.json');
      fs.writeFileSync(notJson, '{"events": [ oops');
      const noEvents = path.join(tmp, 'no-events.json');
      fs.writeFileSync(noEvents, '{"workflowId": "x"}');
      const badEvent = path.join(tmp, 'bad-event.json');
      fs.writeFileSync(badEvent, '{"events": [{"eventId": "1"}]}');
      for (const [file, why] of [
        [notJson, /is not JSON/],
        [noEvents, /is not a workflow history: expected a JSON object with an "events" array/],
        [badEvent, /is not a valid workflow history/],
      ] as const) {
        expectOneLineError(await fh(['replay', file, '--agents', AGENTS]), 2, why);
        expectOneLineError(await fh(['history', file]), 2, new RegExp(`${why.source}.*fh history export`));
      }
      expectOneLineError(await fh(['replay', path.join(tmp, 'missing.json'), '--agents', AGENTS]), 3, /history file .*missing\.json not found/);
    });

    it('bad input: exit 2 before anything is started', async () => {
      expectOneLineError(await fh(['run', 'cli-calc', '--input', '{bad']), 2, /--input is not JSON/);
      expectOneLineError(await fh(['run', 'cli-calc', '--input', `@${path.join(tmp, 'nope.json')}`]), 3, /input file .* not found/);
      expectOneLineError(await fh(['replay', 'x.json']), 2, /needs --agents <module>/);
      // With the agent modules at hand, the input is checked against the agent's schema: nothing is started.
      const badId = `bad-input-${process.pid}`;
      expectOneLineError(
        await fh(['run', 'cli-calc', '--input', '{"task":5}', '--agents', AGENTS, '--workflow-id', badId]),
        2,
        /--input does not match the input schema of 'cli-calc': field 'task': .*expected string/i,
      );
      expectOneLineError(await fh(['run', 'cli-calc', '--input', '{}'], { env: { FH_AGENTS: AGENTS } }), 2, /field 'task'/);
      expectOneLineError(await fh(['run', 'nope', '--input', '{}', '--agents', AGENTS]), 2, /agent 'nope' is not defined in .*cli-agents\.js \(agents there: cli-calc, cli-compactor, cli-chat\)/);
      expectOneLineError(await fh(['history', badId]), 3, /no workflow/);
    });

    it('a query nobody answers: exit 1 with what to do', async () => {
      const queue = `nobody-${process.pid}`;
      const started = await fh(['run', 'cli-calc', '--input', '{"task":"x"}', '--task-queue', queue, '--no-wait']);
      expect(started.code).toBe(0);
      const workflowId = started.stdout.trim();
      expect(workflowId).toMatch(/^cli-calc-\d{8}-\d{6}Z-[0-9a-f]{6}$/);
      expectOneLineError(await fh(['state', workflowId, '--timeout', '1']), 1, new RegExp(`no worker answered within 1 s.*task queue '${queue}'.*fh worker`));
      // Nobody will ever run it: do not leave it behind on a shared server.
      const connection = await Connection.connect({ address: env.TEMPORAL_ADDRESS! });
      try {
        await new Client({ connection, namespace: env.TEMPORAL_NAMESPACE }).workflow.getHandle(workflowId).terminate('cli.test cleanup');
      } finally {
        await connection.close();
      }
      // Ended, and no worker polls its queue: read from history at once, not after a 10 s wait.
      const t0 = Date.now();
      const state = await fh(['state', workflowId]);
      expect(Date.now() - t0).toBeLessThan(8_000);
      expect(state.code).toBe(0);
      expect(state.stdout).toMatch(new RegExp(`^Compaction state of ${workflowId} \\(TERMINATED\\), from history: the run has ended \\(TERMINATED\\) and no worker polls task queue '${queue}'`));
      expect(json(await fh(['budget', workflowId, '--json']))).toMatchObject({ source: 'history', status: 'TERMINATED', usage: { modelCalls: 0 } });
    });
    it('fh prompt --timeout on a run no worker polls: says so, and names the key to wait for the same prompt with', async () => {
      const queue = `nobody-prompt-${process.pid}`;
      const started = await fh(['run', 'cli-chat', '--input', '{}', '--task-queue', queue, '--no-wait']);
      expect(started.code).toBe(0);
      const workflowId = started.stdout.trim();
      const r = await fh(['prompt', workflowId, 'hello?', '--timeout', '2']);
      expectOneLineError(r, 1, new RegExp(`no reply within 2 s: no worker is polling task queue ${queue}.*--id [0-9a-f-]{36}`));
      const connection = await Connection.connect({ address: env.TEMPORAL_ADDRESS! });
      try {
        await new Client({ connection, namespace: env.TEMPORAL_NAMESPACE }).workflow.getHandle(workflowId).terminate('cli.test cleanup');
      } finally {
        await connection.close();
      }
    });
  });

  it('fh server: a dev server with the Web UI, a database file and the FhAgent search attribute; stops on Ctrl-C', async () => {
    const port = await getFreePort();
    const uiPort = await getFreePort();
    const db = path.join(tmp, 'server', 'temporal.db');
    const server = await fhBackground(
      ['server', '--port', String(port), '--ui-port', String(uiPort), '--db', db, '--dynamic-config-value', 'limit.maxIDLength=40'],
      /Press Ctrl\+C to stop/,
    );
    try {
      expect(server.out.stdout).toContain(`address:     127.0.0.1:${port}`);
      expect(server.out.stdout).toContain(`web UI:      http://127.0.0.1:${uiPort}`);
      expect(server.out.stdout).toContain('settings:    history.transferProcessorUpdateAckInterval="1s", limit.maxIDLength=40');
      expect(server.out.stderr).toMatch(/\[fh server\] .*ready/);
      expect(fs.existsSync(db)).toBe(true);
      const connection = await Connection.connect({ address: `127.0.0.1:${port}` });
      try {
        const attrs = await connection.operatorService.listSearchAttributes({ namespace: 'default' });
        expect(Object.keys(attrs.customAttributes ?? {})).toContain('FhAgent');
        // The setting reached the server: an id over its limit of 40 is refused (its default is 1,000).
        const client = new Client({ connection });
        const refused = await client.workflow
          .start('fhProbe', { taskQueue: 'probe', workflowId: `probe-${'x'.repeat(50)}`, args: [] })
          .then(() => undefined, (e: unknown) => e as Error);
        expect(`${refused?.message}: ${(refused?.cause as Error | undefined)?.message}`).toMatch(/WorkflowId length exceeds limit/);
      } finally {
        await connection.close();
      }
      const listed = await fh(['list', '--address', `127.0.0.1:${port}`]);
      expect(listed.code).toBe(0);
      expect(listed.stdout).toMatch(/No agent runs found/);
    } finally {
      expect(await server.interrupt()).toBe(0);
    }
    expect(server.out.stderr).toMatch(/\[fh server\] stopped/);
  });

  it('fh server: closing its terminal (SIGHUP) stops the dev server with it, and frees its port', async () => {
    const port = await getFreePort();
    const server = await fhBackground(['server', '--port', String(port), '--ephemeral'], /Press Ctrl\+C to stop/);
    expect(await isPortFree(port)).toBe(false);
    server.child.kill('SIGHUP');
    // Node's default for SIGHUP is to exit at once (no code), before fh server has stopped its dev server.
    expect(await server.exited).toBe(0);
    expect(server.out.stderr).toMatch(/\[fh server\] SIGHUP: stopping the dev server/);
    expect(server.out.stderr).toMatch(/\[fh server\] stopped/);
    expect(await isPortFree(port)).toBe(true);
  });

  it('fh server: a --dynamic-config-value the server could not take exits 2 naming it, before starting anything', async () => {
    for (const [flag, named] of [
      ['limit.maxIDLength', /--dynamic-config-value 'limit\.maxIDLength' must be KEY=VALUE/],
      ['=40', /--dynamic-config-value '=40' must be KEY=VALUE/],
      ['limit max=40', /--dynamic-config-value 'limit max=40': limit max is not a dynamic config key/],
      ['limit.maxIDLength={"a":1}', /--dynamic-config-value 'limit\.maxIDLength=\{"a":1\}': limit\.maxIDLength must be a string, a finite number or a boolean/],
    ] as const) {
      const r = await fh(['server', '--ephemeral', '--dynamic-config-value', flag]);
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 2, stderr: expect.stringMatching(named) });
      expect(r.stderr).not.toMatch(/starting the Temporal dev server/);
    }
  });
});

describe('connection settings (Temporal environment conventions)', () => {
  const none = null; // act as if @temporalio/envconfig were not installed

  it('defaults, environment, and flags over environment', () => {
    expect(resolveConnectionSettings({}, {}, none)).toMatchObject({
      address: 'localhost:7233',
      namespace: 'default',
      sources: { address: 'default', namespace: 'default' },
    });
    const fromEnv = resolveConnectionSettings({}, { TEMPORAL_ADDRESS: 'tmp.example:7233', TEMPORAL_NAMESPACE: 'ns1' }, none);
    expect(fromEnv).toMatchObject({ address: 'tmp.example:7233', namespace: 'ns1', sources: { address: 'environment', namespace: 'environment' } });
    expect(fromEnv.tls).toBeUndefined();
    const flagged = resolveConnectionSettings({ address: 'flag.example:7233', namespace: 'ns2' }, { TEMPORAL_ADDRESS: 'env:1', TEMPORAL_NAMESPACE: 'x' }, none);
    expect(flagged).toMatchObject({ address: 'flag.example:7233', namespace: 'ns2', sources: { address: 'flag', namespace: 'flag' } });
  });

  it('an API key turns TLS on unless TLS is turned off; TEMPORAL_GRPC_META_* become metadata', () => {
    expect(resolveConnectionSettings({}, { TEMPORAL_API_KEY: 'k' }, none)).toMatchObject({ apiKey: 'k', tls: true });
    expect(resolveConnectionSettings({ apiKey: 'flag-key' }, { TEMPORAL_API_KEY: 'k', TEMPORAL_TLS: 'false' }, none)).toMatchObject({
      apiKey: 'flag-key',
      tls: false,
    });
    expect(resolveConnectionSettings({}, { TEMPORAL_TLS: 'true' }, none).tls).toBe(true);
    expect(resolveConnectionSettings({}, { TEMPORAL_GRPC_META_X_TENANT: 'a' }, none).metadata).toEqual({ 'x-tenant': 'a' });
    expect(() => resolveConnectionSettings({}, { TEMPORAL_TLS: 'maybe' }, none)).toThrow(/TEMPORAL_TLS must be true or false/);
  });

  it('mTLS files from the environment or flags (flags win); a cert without its key is an error', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fh-tls-'));
    for (const f of ['env.crt', 'env.key', 'flag.crt', 'flag.key', 'ca.pem']) fs.writeFileSync(path.join(dir, f), `-- ${f} --`);
    const p = (f: string) => path.join(dir, f);
    const fromEnv = resolveConnectionSettings(
      {},
      {
        TEMPORAL_TLS_CLIENT_CERT_PATH: p('env.crt'),
        TEMPORAL_TLS_CLIENT_KEY_PATH: p('env.key'),
        TEMPORAL_TLS_SERVER_CA_CERT_PATH: p('ca.pem'),
        TEMPORAL_TLS_SERVER_NAME: 'sni.example',
      },
      none,
    );
    const tls = fromEnv.tls as any;
    expect(Buffer.from(tls.clientCertPair.crt).toString()).toBe('-- env.crt --');
    expect(Buffer.from(tls.clientCertPair.key).toString()).toBe('-- env.key --');
    expect(Buffer.from(tls.serverRootCACertificate).toString()).toBe('-- ca.pem --');
    expect(tls.serverNameOverride).toBe('sni.example');
    const flagged = resolveConnectionSettings(
      { tlsCertPath: p('flag.crt'), tlsKeyPath: p('flag.key') },
      { TEMPORAL_TLS_CLIENT_CERT_PATH: p('env.crt'), TEMPORAL_TLS_CLIENT_KEY_PATH: p('env.key') },
      none,
    ).tls as any;
    expect(Buffer.from(flagged.clientCertPair.crt).toString()).toBe('-- flag.crt --');
    expect(() => resolveConnectionSettings({ tlsCertPath: p('flag.crt') }, {}, none)).toThrow(ConnectionSettingsError);
    expect(() => resolveConnectionSettings({ tlsCaPath: p('missing.pem') }, {}, none)).toThrow(/cannot read --tls-ca-path .*missing\.pem: ENOENT/);
  });

  it('uses @temporalio/envconfig when installed (config-file profiles), flags still win', () => {
    const calls: unknown[] = [];
    const envconfig: EnvconfigModule = {
      loadClientConnectConfig(options) {
        calls.push(options);
        return { namespace: 'from-profile', connectionOptions: { address: 'profile.example:7233', apiKey: 'profile-key' } };
      },
    };
    const s = resolveConnectionSettings({ profile: 'prod', namespace: 'flag-ns' }, { HOME: '/x' }, envconfig);
    expect(s).toMatchObject({
      address: 'profile.example:7233',
      namespace: 'flag-ns',
      apiKey: 'profile-key',
      tls: true,
      resolvedWith: 'envconfig',
      sources: { address: 'config file', namespace: 'flag' },
    });
    expect(calls).toEqual([{ profile: 'prod', configSource: undefined, overrideEnvVars: { HOME: '/x' } }]);
    // Without the package, a profile cannot be honoured: say how to get it.
    expect(() => resolveConnectionSettings({ profile: 'prod' }, {}, none)).toThrow(/npm install @temporalio\/envconfig/);
  });
});
