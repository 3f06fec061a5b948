import { promises as fs, readdirSync, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { temporal } from '@temporalio/proto';
import { startAgent } from '@fabric-harness/sdk/client';
import { FakeAnthropicServer, callTools, say } from '@fabric-harness/sdk/testing';
import { workbench } from '../fixtures/payload-agents';
import { chatter } from '../fixtures/compaction-agents';
import { startTestWorker, type TestWorker } from '../support/test-worker';
import { historyText, storeText } from './helpers/leaks';

describe('large payloads, secrets and cancellation', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;
  let dir: string;
  let n = 0;
  const wid = (p: string) => `${p}-${Date.now()}-${n++}`;

  beforeAll(async () => {
    fake = await FakeAnthropicServer.start({ contextWindow: 2_000_000 });
    w = await startTestWorker({ name: 'payloads', baseURL: fake.url });
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-payloads-'));
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  it('a big tool output goes to external storage: history holds a claim, the model gets the full text', async () => {
    fake.enqueue(callTools({ name: 'big_output', input: { kb: 600 } }), say('summarised'));
    const handle = await startAgent(w.client, workbench, { task: 'report', dir }, { workflowId: wid('big'), taskQueue: w.taskQueue });
    expect(await handle.result()).toBe('summarised');
    const json = historyToJSON(await handle.fetchHistory());
    expect(json.length).toBeLessThan(200_000); // 600 KB result, twice (tool result and model input), offloaded
    // Offloaded payloads are ExternalStorageReference claims (metadata is base64 in history JSON).
    expect(json).toContain(Buffer.from('temporal.api.sdk.v1.ExternalStorageReference').toString('base64'));
    const sent = fake.messageRequests().at(-1)!.body.messages.at(-1).content[0].content as string;
    expect(sent.length).toBeGreaterThanOrEqual(600 * 1024);
    // The API key is a worker setting: it never appears in history nor in the store. Payloads are
    // base64 in history JSON, so search the decoded payloads (and every store blob), not the JSON text.
    const decoded = historyText(await handle.fetchHistory());
    expect(decoded).toContain('"task":"report"'); // the search does see payload contents (base64 in the JSON)
    expect(json).not.toContain('"task":"report"');
    expect(decoded).not.toContain('test-key');
    expect(await storeText(w.storeDir)).not.toContain('test-key');
  });

  it('a long conversation with compaction on offloads nothing: decisions get a few numbers, not the transcript', async () => {
    const reply = (i: number) => `part ${i} `.repeat(4000); // ~32 KB each, under the offload threshold
    const dir = path.join(w.storeDir, 'payloads');
    const list = () => fs.readdir(dir).catch(() => [] as string[]);
    const before = new Set(await list());
    fake.enqueue(...Array.from({ length: 8 }, (_, i) => say(reply(i))));
    const handle = await startAgent(
      w.client,
      chatter,
      { prompts: Array.from({ length: 8 }, (_, i) => `q${i}`), contextWindowTokens: 1_000_000 },
      { workflowId: wid('decisions'), taskQueue: w.taskQueue },
    );
    const result = await handle.result();
    expect(result.state.decisions).toBe(8); // one recorded decision per model call, over a ~250 KB transcript
    // Only the run's result (eight 32 KB replies) is big enough to be offloaded; no decision input is.
    const offloaded = (await list()).filter((f) => !before.has(f));
    const contents = await Promise.all(
      offloaded.map(async (f) => JSON.parse(Buffer.from(temporal.api.common.v1.Payload.decode(await fs.readFile(path.join(dir, f))).data!).toString())),
    );
    expect(contents.map((c) => Object.keys(c).sort())).toEqual([['entries', 'replies', 'served', 'state']]);
  });

  it('refuses to schedule an activity whose input is over the payload limit, with a clear error', async () => {
    fake.enqueue(callTools({ name: 'bash', input: { command: `echo ${'x'.repeat(2_100_000)}` } }));
    const handle = await startAgent(w.client, workbench, { task: 'huge command', dir }, { workflowId: wid('huge'), taskQueue: w.taskQueue });
    const err = await handle.result().catch((e) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect(err.cause.type).toBe('PAYLOAD_TOO_LARGE');
    expect(err.cause.message).toMatch(/tool bash input is \d+ bytes, over the 1900000-byte payload limit/);
    // 6 s alone (the model streams the 2.1 MB input in small deltas); it passed 120 s once in a full run
    // on 2 cores beside the replay suite, as the whole file has gone from 12 s to 94-152 s there before.
  }, 300_000);

  it('cancelling the workflow cancels the running tool: its whole process group is killed, background children too', async () => {
    const marker = path.join(dir, `cancel-${Date.now()}`);
    const childMarker = `${marker}.child`;
    fake.enqueue(
      callTools({ name: 'bash', input: { command: `echo started > ${marker}; sleep 61.37 & echo $! > ${childMarker}; wait; echo finished >> ${marker}` } }),
    );
    const handle = await startAgent(w.client, workbench, { task: 'long', dir }, { workflowId: wid('cancel'), taskQueue: w.taskQueue });
    // bash runs confined (its own PID namespace: the PIDs it sees are not the host's), so the test finds
    // the processes on the host by their command lines: the shell's names the marker, the sleep is unique.
    const processes = () =>
      readdirSync('/proc')
        .filter((d) => /^\d+$/.test(d))
        .filter((d) => {
          let cmd = '';
          try {
            cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8').replace(/\0/g, ' ');
          } catch {
            return false;
          }
          return cmd.startsWith('sleep 61.37') || (cmd.includes(`echo started > ${marker}`) && !cmd.includes('jest'));
        })
        .map(Number);
    let started: number[] = [];
    for (let i = 0; i < 100; i++) {
      started = processes();
      const sleeping = started.some((p) => readFileSync(`/proc/${p}/cmdline`, 'utf8').startsWith('sleep'));
      if (sleeping && started.length >= 2 && (await fs.readFile(childMarker, 'utf8').catch(() => ''))) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(started.length).toBeGreaterThanOrEqual(2); // the shell (with its wrapper) and its background sleep
    await handle.workflow.cancel();
    const err = await handle.result().catch((e) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect(err.cause.name).toBe('CancelledFailure');
    const history = await handle.fetchHistory();
    expect(history.events!.some((e) => e.activityTaskCancelRequestedEventAttributes)).toBe(true);
    // The tool learns of the cancellation at its next heartbeat (every 2 s) and kills the process group.
    const alive = (p: number) => {
      try {
        process.kill(p, 0);
      } catch {
        return false;
      }
      // A killed process whose new parent has not reaped it yet is a zombie: dead, though kill(0) succeeds.
      let stat = '';
      try {
        stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      } catch {
        return false; // gone between the two looks
      }
      return !/^\d+ \(.*\) Z/.test(stat);
    };
    for (let i = 0; i < 100 && started.some(alive); i++) await new Promise((r) => setTimeout(r, 100));
    const survivors = started.filter(alive);
    survivors.forEach((p) => process.kill(p, 'SIGKILL')); // leave nothing behind even when the test fails
    expect(survivors).toEqual([]); // the shell and its background sleep, not just the shell
    expect(await fs.readFile(marker, 'utf8')).toBe('started\n'); // never reached "finished"
  }, 60_000);
});
