/**
 * `fh replay <id> --reset`, on the dev server with `fh worker` subprocesses: a run recorded by one
 * version of an agent, then served by a worker whose code diverges from it (a deploy without
 * patched()), is stuck — `fh replay` names the divergence. `--reset` resets the run to the newest
 * workflow task the new code replays: the new run replays against the new code, the prompt the old run
 * got after that point is applied again and answered, and the conversation holds every prompt once.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FakeAnthropicServer, say, type RecordedRequest } from '@fabric-harness/sdk/testing';
import { ensureBuilt, FH, runFh, type Ran } from '../support/fh-cli';
import { lastUserText } from '../support/session-fake';

const ROOT = path.resolve(__dirname, '../..');
const ORIGINAL = 'test/fixtures/cli-agents.js';
const CHANGED = 'test/fixtures/cli-agents-changed.js';
const OTHER = 'test/fixtures/cli-agents-other.js';

describe('fh replay --reset', () => {
  let fake: FakeAnthropicServer;
  let env: NodeJS.ProcessEnv;
  const fh = (...args: string[]): Promise<Ran> => runFh(args, env);
  const taskQueue = `cli-reset-${process.pid}-${Date.now()}`;

  /** `fh worker --agents <module>` on the test's queue, once it polls; stop() is Ctrl-C and its exit. */
  async function worker(agents: string): Promise<{ stop(): Promise<void> }> {
    const child = spawn(process.execPath, [FH, 'worker', '--agents', agents, '--task-queue', taskQueue], { cwd: ROOT, env: { ...env, ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: fake.url }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`fh worker never got ready:\n${out}`)), 90_000);
      const read = (d: Buffer) => {
        out += d;
        if (/ready on task queue/.test(out)) (clearTimeout(timer), resolve());
      };
      child.stdout.on('data', read);
      child.stderr.on('data', read);
      void exited.then((code) => (clearTimeout(timer), reject(new Error(`fh worker exited (${code}):\n${out}`))));
    });
    return {
      async stop() {
        child.kill('SIGINT');
        await exited;
      },
    };
  }

  beforeAll(async () => {
    ensureBuilt();
    fake = await FakeAnthropicServer.start({ route: (req) => say(`answer to ${lastUserText(req)}`) });
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TEMPORAL_') && !k.startsWith('ANTHROPIC_') && k !== 'FH_AGENTS'));
    env = {
      ...clean,
      TEMPORAL_ADDRESS: process.env.FH_TEST_TEMPORAL_ADDRESS,
      TEMPORAL_NAMESPACE: process.env.FH_TEST_TEMPORAL_NAMESPACE ?? 'default',
      FH_STORE_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'fh-reset-')),
    };
  });
  afterAll(async () => {
    await fake?.stop();
  });

  /** The user texts of a model request, in order. */
  const userTexts = (r: RecordedRequest): string[] =>
    (r.body.messages as Array<{ role: string; content: string | Array<{ type: string; text?: string }> }>)
      .filter((m) => m.role === 'user')
      .flatMap((m) => (typeof m.content === 'string' ? [m.content] : m.content.filter((c) => c.type === 'text').map((c) => c.text!)));

  it('resets a run the new code diverges from to the newest task the code replays: it replays, and every prompt is answered once', async () => {
    const runId = `cli-reset-${process.pid}-${Date.now()}`;
    const original = await worker(ORIGINAL);
    try {
      expect((await fh('run', 'cli-chat', '--input', '{"task":"hello"}', '--workflow-id', runId, '--task-queue', taskQueue, '--no-wait')).code).toBe(0);
      expect(await fh('prompt', runId, 'second', '--id', `${runId}-second`)).toMatchObject({ code: 0, stdout: 'answer to second\n' });
    } finally {
      await original.stop();
    }
    const changed = await worker(CHANGED);
    try {
      // The changed code cannot replay the run: without --reset, said and left alone (exit 1).
      const diverged = await fh('replay', runId, '--agents', CHANGED);
      expect(diverged.code).toBe(1);
      expect(diverged.stdout).toMatch(/^divergence at event \d+ replaying /);
      expect((await fh('replay', runId, '--agents', ORIGINAL)).code).toBe(0);
      const asked = fake.messageRequests().length;

      // --dry-run: where it would reset and what would run again; the run is left as it is.
      const dry = await fh('replay', runId, '--agents', CHANGED, '--reset', '--dry-run', '--json');
      expect(dry.code).toBe(0);
      const wouldReset = (JSON.parse(dry.stdout) as { reset: Record<string, unknown> }).reset;
      expect(wouldReset).toEqual({ eventId: expect.any(Number), reapplied: 1, discarded: expect.any(Number), again: { modelCalls: 2, toolCalls: [] }, dryRun: true });
      const dryText = await fh('replay', runId, '--agents', CHANGED, '--reset', '--dry-run');
      expect(dryText.stdout.split('\n')[1]).toBe(
        `would reset ${runId} (--dry-run: nothing changed): a new run would keep the history before the workflow task completed at event ${wouldReset.eventId} (the latest the current code replays) and run the current code from there; ` +
          `1 signal or update sent after it would be applied again; ${wouldReset.discarded} later events of the old run would be dropped, among them 2 model calls, which would run again`,
      );
      expect((await fh('replay', runId, '--agents', CHANGED)).stdout).toBe(diverged.stdout);
      expect(fake.messageRequests().length).toBe(asked);

      const reset = await fh('replay', runId, '--agents', CHANGED, '--reset', '--reason', 'deployed without patched()');
      expect(reset.stderr).toBe('');
      expect(reset.code).toBe(0);
      const said = reset.stdout.split('\n')[1]!;
      // The new run keeps less than the full replay's divergence suggests: the markers of the patches the
      // code no longer reaches in the same order are checked once they end the history (see findResetPoint).
      const divergedAt = Number(/^divergence at event (\d+)/.exec(diverged.stdout)![1]);
      expect(Number(/completed at event (\d+)/.exec(said)?.[1])).toBeLessThan(divergedAt);
      expect(said).toMatch(
        new RegExp(
          `^reset ${runId}: new run \\S+ keeps the history before the workflow task completed at event ${wouldReset.eventId} \\(the latest the current code replays\\) and runs the current code from there; ` +
            `1 signal or update sent after it is applied again; ${wouldReset.discarded} later events of the old run are dropped, among them 2 model calls, which run again$`,
        ),
      );

      // The new run answers the prompt it was sent after that point again (nobody waits for it), and takes new ones.
      const third = await fh('prompt', runId, 'third', '--id', `${runId}-third`);
      expect(third).toMatchObject({ code: 0, stdout: 'answer to third\n' });
      const after = fake.messageRequests().slice(asked);
      // The two model calls it named ran again (hello, second), then the new prompt's.
      expect(after.map((r) => lastUserText(r))).toEqual(['hello', 'second', 'third']);
      // Each prompt is in the conversation once.
      expect(userTexts(after.at(-1)!)).toEqual(['hello', 'second', 'third']);
      // The prompt's idempotency key held across the reset: sent again, the reply comes from history.
      expect(await fh('prompt', runId, 'second', '--id', `${runId}-second`)).toMatchObject({ code: 0, stdout: 'answer to second\n' });
      expect(fake.messageRequests().length).toBe(asked + 3);

      // The new run replays against the code that serves it now.
      const replayed = await fh('replay', runId, '--agents', CHANGED, '--reset');
      expect(replayed.stdout).toMatch(/^ok: replayed \d+ events of .*: the current code makes the same decisions; nothing to reset\n$/);
      // Against a module without the run's agent, --reset says why it does not reset, and leaves the run alone.
      const wrong = await fh('replay', runId, '--agents', OTHER, '--reset');
      expect(wrong).toMatchObject({ code: 1, stderr: '' });
      expect(wrong.stdout.split('\n')).toEqual([
        expect.stringMatching(/^wrong agents module replaying .*: The current code does not define this run's agent 'cli-chat' \(it defines cli-other\)\./),
        'not reset: --reset repairs a divergence (the code issues other commands than the run recorded), and this is not one; the run is unchanged',
        '',
      ]);
      // The audit transcript says where the run was reset (once), why, and from which run.
      const audit = JSON.parse((await fh('history', runId, '--json')).stdout) as { records: Array<{ type: string; reason?: string; baseRunId?: string; eventId: number }> };
      expect(audit.records.filter((r) => r.type === 'run_reset')).toEqual([
        expect.objectContaining({ reason: 'deployed without patched()', baseRunId: expect.any(String), eventId: Number(/completed at event (\d+)/.exec(said)![1]) }),
      ]);
      expect((await fh('history', runId)).stdout).toMatch(/Run reset: the history before this point is kept from the run reset.*\n+- Reason: deployed without patched\(\)/);
      expect((await fh('close', runId)).code).toBe(0);
    } finally {
      await changed.stop();
    }
  });

  it('refuses what it cannot reset, at once: a history file, --strict-inputs with it, --reason or --dry-run alone', async () => {
    expect(await fh('replay', 'saved.json', '--agents', CHANGED, '--reset')).toMatchObject({ code: 2, stderr: expect.stringMatching(/^fh: --reset resets a run on the server: give its workflow id, not a history file\n$/) });
    expect(await fh('replay', 'some-run', '--agents', CHANGED, '--reset', '--strict-inputs')).toMatchObject({ code: 2, stderr: expect.stringMatching(/^fh: --reset repairs a run the code diverges from/) });
    expect(await fh('replay', 'some-run', '--agents', CHANGED, '--reason', 'why')).toMatchObject({ code: 2, stderr: expect.stringMatching(/^fh: --reason goes with --reset/) });
    expect(await fh('replay', 'some-run', '--agents', CHANGED, '--dry-run')).toMatchObject({ code: 2, stderr: expect.stringMatching(/^fh: --dry-run goes with --reset/) });
  });
});
