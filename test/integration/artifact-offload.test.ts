/**
 * Artifact offloading on Temporal (real dev server and worker): a 300 KB tool output reaches the model
 * as a reference, the model reads it back with read_artifact, the decision is the tool activity's
 * (recorded in its result, so a replay under another threshold follows it), and a run's own large
 * result is kept out of history by Temporal's external storage (a claim), not by a second mechanism.
 */
import * as path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { startAgent } from '@fabric-harness/sdk/client';
import { bundleAgents, FabricHarnessPlugin, FileTranscriptStore } from '@fabric-harness/sdk/worker';
import { callTools, FakeAnthropicServer, say, type RecordedRequest } from '@fabric-harness/sdk/testing';
import { bigAnswer, keepBench, offloadBench } from '../fixtures/payload-agents';
import { startTestWorker, type TestWorker } from '../support/test-worker';

const OUTPUT_BYTES = 'report line of text\n'.length * Math.ceil((300 * 1024) / 20);

const lastToolResult = (req: RecordedRequest): string => {
  const block = req.body.messages.at(-1).content.find((b: { type: string }) => b.type === 'tool_result');
  return typeof block?.content === 'string' ? block.content : '';
};
const historyBytes = (h: temporal.api.history.v1.IHistory) => temporal.api.history.v1.History.encode(h).finish().length;
const quiet = { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: (m: string) => console.error(m) };

describe('artifact offloading', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;
  let n = 0;
  const wid = (p: string) => `${p}-${process.pid}-${Date.now()}-${n++}`;

  beforeAll(async () => {
    // A reference in the last tool result: the model asks for a page of it (once; the page ends the route).
    fake = await FakeAnthropicServer.start({
      contextWindow: 2_000_000,
      route: (req) => {
        const m = /^\[artifact ([0-9a-f]{64}):/.exec(lastToolResult(req));
        return m ? callTools({ name: 'read_artifact', input: { ref: m[1], offset: 20, maxChars: 40 } }) : undefined;
      },
    });
    w = await startTestWorker({ name: 'artifacts', baseURL: fake.url });
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  it('a 300 KB output reaches the model as a reference, read back a page at a time; replay under another threshold follows the record', async () => {
    fake.enqueue(callTools({ name: 'big_output', input: { kb: 300 } }), say('read it'));
    const before = fake.messageRequests().length;
    const handle = await startAgent(w.client, offloadBench, { task: 'report' }, { workflowId: wid('offload'), taskQueue: w.taskQueue });
    expect(await handle.result()).toBe('read it');
    const [first, second, third] = fake.messageRequests().slice(before);
    expect(first!.body.tools.map((t: { name: string }) => t.name)).toEqual(['big_output', 'read_artifact']);

    // The model's next request holds the reference, not the 300 KB.
    const reference = lastToolResult(second!);
    expect(reference).toMatch(new RegExp(`^\\[artifact [0-9a-f]{64}: ${(OUTPUT_BYTES / 1000).toFixed(1)} KB of output from big_output\\(300\\) — 15360 lines; first lines:\\nreport line of text\\n`));
    expect(reference).toMatch(/\nRead it with read_artifact\(\{"ref":"[0-9a-f]{64}","offset":0\}\)\]$/);
    expect(JSON.stringify(second!.body).length).toBeLessThan(10_000);

    // read_artifact pages the stored output back, from the worker's store.
    expect(lastToolResult(third!)).toMatch(/^\[characters 20-60 of 307200\. More: read_artifact\(\{"ref":"[0-9a-f]{64}","offset":60\}\)\.\]\nreport line of text\nreport line of text\n$/);

    // The decision is in the tool activity's result.
    const history = await handle.fetchHistory();
    const results = history.events!.flatMap((e) => e.activityTaskCompletedEventAttributes?.result?.payloads ?? []).map((p) => Buffer.from(p.data ?? []).toString());
    expect(results.some((r) => r.includes('"artifact":{"ref":"') && r.includes('"bytes":307200'))).toBe(true);

    // Replayed by a bundle whose agent offloads only over 1 MB: the recorded result is followed.
    const changed = await bundleAgents([path.resolve(__dirname, '../fixtures/artifact-variants.ts')], { logger: quiet });
    const store = new FileTranscriptStore(w.storeDir);
    await expect(
      Worker.runReplayHistory({ workflowBundle: changed, plugins: [new FabricHarnessPlugin({ store })] }, history, handle.workflowId),
    ).resolves.toBeUndefined();
  });

  it('history bytes with and without offloading', async () => {
    const run = async (def: typeof offloadBench, prefix: string) => {
      fake.enqueue(callTools({ name: 'big_output', input: { kb: 300 } }), say('done'));
      const before = fake.messageRequests().length;
      const handle = await startAgent(w.client, def, { task: 'report' }, { workflowId: wid(prefix), taskQueue: w.taskQueue });
      expect(await handle.result()).toBe('done');
      const request = JSON.stringify(fake.messageRequests()[before + 1]!.body).length;
      return { history: historyBytes(await handle.fetchHistory()), request };
    };
    // The model reads nothing back here: the script ends the turn.
    fake.setRoute(undefined);
    const kept = await run(keepBench, 'keep');
    const offloaded = await run(offloadBench, 'offloaded');
    console.log(
      `[artifact-offload] 300 KB tool output: history ${offloaded.history} bytes offloaded vs ${kept.history} kept; ` +
        `the next model request ${offloaded.request} bytes offloaded vs ${kept.request} kept`,
    );
    // History stays small either way: a kept output is an external-storage claim, an offloaded one a ~1 KB reference.
    expect(offloaded.history).toBeLessThan(20_000);
    expect(kept.history).toBeLessThan(20_000);
    // The context is where offloading counts.
    expect(kept.request).toBeGreaterThan(OUTPUT_BYTES);
    expect(offloaded.request).toBeLessThan(10_000);
  });

  it("a run's own 300 KB result: history holds an external-storage claim, the client gets the whole text", async () => {
    const handle = await startAgent(w.client, bigAnswer, { kb: 300 }, { workflowId: wid('answer'), taskQueue: w.taskQueue });
    const answer = await handle.result();
    expect(answer.length).toBe(307_200);
    const bytes = historyBytes(await handle.fetchHistory());
    console.log(`[artifact-offload] history bytes for a run returning 300 KB: ${bytes}`);
    expect(bytes).toBeLessThan(10_000);
  });
});
