/**
 * The overflow ladder and session reset on Temporal. The fake rejects the last prompt's requests as
 * "prompt is too long" until a given ladder step has happened; each step's decision must be in
 * workflow history (a local activity marker), and the prompt answered. Then: a manual reset through
 * SessionHandle.reset(), and a recorded full climb replayed by a bundle with other settings.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Worker } from '@temporalio/worker';
import type { temporal } from '@temporalio/proto';
import { getSession, startAgent, startSession } from '@fabric-harness/sdk/client';
import { bundleAgents, FabricHarnessPlugin } from '@fabric-harness/sdk/worker';
import { FakeAnthropicServer, callTools, fail, say, type RecordedRequest } from '@fabric-harness/sdk/testing';
import { isEvent } from '@fabric-harness/sdk';
import { ladderer, ladderSession, MEMORY_LINE } from '../fixtures/ladder-agents';
import { startTestWorker, type TestWorker } from '../support/test-worker';
import { isTitleRequest, SCRIPTED_TITLE } from '../support/session-fake';

const MARKER = '[fabric-harness:summarize]';
const TRANSFER = '## Outcome\n- TRANSFER-NOTE: pages 0 to 2 were read';
const FINAL = 'read page 3 please';
const WARM = ['read page 0', 'read page 1', 'read page 2'];
const isSummary = (r: RecordedRequest) => String(r.body?.system ?? '').startsWith(MARKER);
const isTransfer = (r: RecordedRequest) => isSummary(r) && String(r.body.system).includes('hand-over note');
const isTurn = (r: RecordedRequest) => r.path === '/v1/messages' && !isSummary(r) && !isTitleRequest(r);
const body = (r: RecordedRequest) => JSON.stringify(r.body.messages);
/** How many full page results a request carries (each is 300 repetitions). */
const bigResults = (r: RecordedRequest) => (body(r).match(/lorem ipsum dolor lorem/g) ?? []).length / 299;

type Fits = (r: RecordedRequest) => boolean;
const STEP_FITS: Record<string, Fits> = {
  'emergency-compaction': (r) => bigResults(r) <= 2,
  'purge-tool-results': (r) => bigResults(r) <= 1,
  'drop-injected': (r) => bigResults(r) <= 1 && !body(r).includes('MEMORY:'),
  'session-reset': (r) => body(r).includes('TRANSFER-NOTE'),
};
const ORDER = Object.keys(STEP_FITS);

interface RecordedDecision {
  ladderStep?: string;
  apply?: boolean;
  why: string;
}

/** Every compaction decision recorded by a local activity (its marker's result payloads). */
function recordedLadderDecisions(history: temporal.api.history.v1.IHistory): RecordedDecision[] {
  const found: RecordedDecision[] = [];
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(visit);
    else if (v && typeof v === 'object') {
      if ('ladderStep' in v && 'why' in v) found.push(v as RecordedDecision);
      else Object.values(v).forEach(visit);
    }
  };
  for (const e of history.events ?? []) {
    const details = e.markerRecordedEventAttributes?.details ?? {};
    for (const d of Object.values(details)) {
      for (const p of d.payloads ?? []) {
        try {
          visit(JSON.parse(Buffer.from(p.data!).toString()));
        } catch {
          // not JSON: not a decision
        }
      }
    }
  }
  return found;
}

const noop = () => undefined;
const quiet = { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: noop };

describe('the overflow ladder on Temporal', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;
  let fits: Fits = () => true;
  let n = 0;

  beforeAll(async () => {
    fake = await FakeAnthropicServer.start({
      route: (req) => {
        if (isTitleRequest(req)) return say(SCRIPTED_TITLE); // a session titles itself with its own call
        if (isTransfer(req)) return say(TRANSFER);
        if (isSummary(req)) return say('## Goal\nRead the manual.\n## Progress\nRead pages.');
        // Only the last prompt's requests are gated: the warm-up turns always fit.
        return !body(req).includes(FINAL) || fits(req) ? undefined : fail(400, { message: 'prompt is too long: 250000 tokens > 200000 maximum' });
      },
    });
    w = await startTestWorker({ name: 'ladder', baseURL: fake.url });
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  function enqueueWarmUp() {
    for (let i = 0; i < 3; i++) fake.enqueue(callTools({ name: 'read_page', input: { n: i } }), callTools({ name: 'read_page', input: { n: i + 10 } }), say(`read ${i}`));
  }

  async function climbTo(step: string) {
    fits = STEP_FITS[step]!;
    enqueueWarmUp();
    fake.enqueue(say('answered'));
    const before = fake.requests.length;
    const eventsBefore = w.events.length;
    const handle = await startAgent(w.client, ladderer, { prompts: [...WARM, FINAL] }, { workflowId: `ladder-${step}-${Date.now()}-${n++}`, taskQueue: w.taskQueue });
    const result = await handle.result();
    return { handle, result, requests: fake.requests.slice(before), events: w.events.slice(eventsBefore) };
  }

  it.each(ORDER)('climbs to %s: every step up to it is a recorded decision, and the prompt is answered', async (step) => {
    const { handle, result, requests, events } = await climbTo(step);
    expect(result.replies.at(-1)).toBe('answered');
    const expected = ORDER.slice(0, ORDER.indexOf(step) + 1);
    const decisions = recordedLadderDecisions(await handle.fetchHistory());
    expect(decisions.map((d) => [d.ladderStep, d.apply])).toEqual(expected.map((s) => [s, true]));
    expect(events.flatMap((e) => (isEvent(e, 'overflow_step') ? [e.data.step] : []))).toEqual(expected);
    // The final prompt was sent once, then once after each step; the last request carried it and fit.
    const finals = requests.filter(isTurn).filter((r) => body(r).includes(FINAL));
    expect(finals).toHaveLength(expected.length + 1);
    expect(fits(finals.at(-1)!)).toBe(true);
    if (step === 'session-reset') {
      expect(requests.filter(isTransfer)).toHaveLength(1);
      expect(body(requests.find(isTransfer)!)).not.toContain('lorem ipsum'); // conclusions, not raw tool output
      // History stays flat: the transfer summary's activity input carries placeholders, not the pages.
      const summarizeInputs = (await handle.fetchHistory()).events!
        .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'fhSummarize')
        .map((e) => (e.activityTaskScheduledEventAttributes!.input?.payloads ?? []).reduce((n, p) => n + (p.data?.length ?? 0), 0));
      const transferBytes = summarizeInputs.at(-1)!;
      console.log(`ladder: summarize activity inputs ${summarizeInputs.join(', ')} bytes (the last is the transfer summary)`);
      expect(transferBytes).toBeLessThan(4_000);
    }
  });

  it('a recorded full climb replays under other compaction settings (keep window, recovery off)', async () => {
    const { handle } = await climbTo('session-reset');
    const history = await handle.fetchHistory();
    const changed = await bundleAgents([path.resolve(__dirname, '../fixtures/ladder-variants.ts')], { logger: quiet });
    await expect(Worker.runReplayHistory({ workflowBundle: changed, plugins: [new FabricHarnessPlugin()] }, history, handle.workflowId)).resolves.toBeUndefined();
  });

  it('SessionHandle.reset(): same session id, a fresh conversation from the transfer summary and memory; the old transcript stays stored', async () => {
    fits = () => true;
    const s = await startSession(w.client, ladderSession, { id: `ladder-session-${Date.now()}-${n++}`, taskQueue: w.taskQueue });
    fake.enqueue(callTools({ name: 'read_page', input: { n: 1 } }), say('read it'));
    expect(await s.prompt('read page 1')).toBe('read it');
    const before = fake.requests.length;
    const r = await s.reset();
    expect(r.summary).toContain('TRANSFER-NOTE');
    expect(r.entriesBefore).toBe(4);
    expect(r.previousTranscript).not.toBeNull();
    expect(fake.requests.slice(before).filter(isTransfer)).toHaveLength(1);
    fake.enqueue(say('fresh start'));
    expect(await s.prompt('what next?')).toBe('fresh start');
    const next = fake.requests.slice(before).filter(isTurn).at(-1)!;
    expect(body(next)).toContain('TRANSFER-NOTE');
    expect(body(next)).not.toContain('lorem ipsum');
    expect(body(next)).not.toContain(MEMORY_LINE); // no memory configured: nothing re-injected
    await expect(s.reset({ transferSummary: 'yes' } as never)).rejects.toThrow(/transferSummary/);
    await s.end();
  });

  // A prompt racing a reset, in both orders (each forced): test/integration/sessions-reset-race.test.ts.

  it('fh session reset <id> --no-summary resets the same session from the terminal (the built binary)', async () => {
    const fh = path.resolve(__dirname, '../../dist/cli/main.js');
    if (!fs.existsSync(fh)) throw new Error('dist/cli/main.js is missing: npm run build first');
    fits = () => true;
    const id = `ladder-cli-${Date.now()}-${n++}`;
    const s = await startSession(w.client, ladderSession, { id, taskQueue: w.taskQueue });
    fake.enqueue(say('hello back'));
    await s.prompt('hello');
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TEMPORAL_') && !k.startsWith('ANTHROPIC_')));
    const env = { ...clean, TEMPORAL_ADDRESS: w.t.address, TEMPORAL_NAMESPACE: w.t.namespace, FH_STORE_DIR: w.storeDir, NO_COLOR: '1' };
    const before = fake.requests.filter(isTransfer).length;
    const out = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, [fh, 'session', 'reset', id, '--no-summary', '--json'], { env, timeout: 60_000 }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout))),
    );
    expect(JSON.parse(out)).toMatchObject({ id, entriesBefore: 2 });
    expect(fake.requests.filter(isTransfer).length).toBe(before); // --no-summary: no summarize call
    const again = getSession(w.client, id);
    expect(await again.messages()).toEqual([]); // no summary asked for and no memory: an empty conversation
    await again.end();
  });
});
