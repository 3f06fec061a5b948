/**
 * Workflow history grows linearly with the conversation, not quadratically: the model activity gets a
 * transcript reference and the entries added since its last call, never the whole conversation.
 *
 * 300 model calls, each adding a ~2 KB tool result. Sending the whole conversation every call would put
 * ~90 MB of activity inputs in history (over Temporal's 50 MB limit); we stay far below 5 MB.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { Worker } from '@temporalio/worker';
import { startAgent } from '@fabric-harness/sdk/client';
import { FabricHarnessPlugin, createWorker, FileTranscriptStore } from '@fabric-harness/sdk/worker';
import { FakeAnthropicServer, callTools, say, type RecordedRequest } from '@fabric-harness/sdk/testing';
import { GROW_TEXT_CHARS, growText, grower, testTools } from '../fixtures/agents';
import { testConnection, type TestConnection } from '../support/temporal';
import { testBundle } from '../support/bundle';

const AGENTS = require.resolve('../fixtures/agents');
const CALLS = 300;

/**
 * Answers the grower: reads `[model calls: N]` from the first message; calls `grow` with the next step
 * while the request holds fewer than N-1 tool results, then says done. So a run makes exactly N calls.
 */
function growerRoute(req: RecordedRequest) {
  const messages: any[] = req.body?.messages ?? [];
  const marker = /\[model calls: (\d+)\]/.exec(JSON.stringify(messages[0]?.content ?? ''));
  if (!marker) return undefined;
  const calls = Number(marker[1]);
  let results = 0;
  for (const m of messages) {
    if (Array.isArray(m.content)) results += m.content.filter((b: any) => b?.type === 'tool_result').length;
  }
  return results < calls - 1 ? callTools({ name: 'grow', input: { step: results + 1 } }) : say('done');
}

function encodedBytes(message: temporal.api.common.v1.IPayload): number {
  return temporal.api.common.v1.Payload.encode(message).finish().length;
}

describe('workflow history of a long conversation', () => {
  let t: TestConnection;
  let fake: FakeAnthropicServer;
  let worker: Worker;
  let client: Client;
  const taskQueue = `history-growth-${process.pid}`;

  beforeAll(async () => {
    t = await testConnection();
    fake = await FakeAnthropicServer.start({ route: growerRoute, contextWindow: 10_000_000 });
    const store = new FileTranscriptStore(await fs.mkdtemp(path.join(os.tmpdir(), 'fh-store-')));
    worker = await createWorker({
      agents: AGENTS,
      tools: testTools,
      connection: t.nativeConnection,
      namespace: t.namespace,
      taskQueue,
      model: { apiKey: 'test-key', baseURL: fake.url },
      store,
      workflowBundle: await testBundle(),
    });
    client = new Client({ connection: t.connection, namespace: t.namespace, plugins: [new FabricHarnessPlugin({ store })] });
  });

  afterAll(async () => {
    await fake?.stop();
    await t?.close();
  });

  it('the grow tool returns ~2 KB of deterministic prose', () => {
    expect(growText(7)).toBe(growText(7));
    expect(growText(7)).not.toBe(growText(8));
    expect(growText(7)).toHaveLength(GROW_TEXT_CHARS);
    expect(growText(7)).toMatch(/^Step 7\. [a-z]+ [a-z]+/);
  });

  it(`${CALLS} model calls stay under 5 MB of history, each model input a small delta`, async () => {
    const workflowId = `grower-${Date.now()}`;
    const started = Date.now();
    const result = await worker.runUntil(async () => {
      const handle = await startAgent(client, grower, { calls: CALLS }, { workflowId, taskQueue });
      return handle.result();
    });
    const seconds = (Date.now() - started) / 1000;
    expect(result.reply).toBe('done');
    expect(result.usage.modelCalls).toBe(CALLS);

    const history = await client.workflow.getHandle(workflowId).fetchHistory();
    const historyBytes = temporal.api.history.v1.History.encode(history).finish().length;
    const scheduled = history.events!.flatMap((e) => (e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes] : []));
    const model = scheduled.filter((a) => a.activityType!.name === 'fhModel');
    expect(model).toHaveLength(CALLS);
    expect(scheduled.filter((a) => a.activityType!.name === 'fhTool')).toHaveLength(CALLS - 1);

    // The model really saw the whole conversation: the last request carried every tool result.
    const last = fake.messageRequests().at(-1)!.body;
    expect(last.messages).toHaveLength(2 * CALLS - 1);
    expect(last.messages.at(-1).content[0].content).toBe(growText(CALLS - 1));

    const inputBytes = model.map((a) => (a.input?.payloads ?? []).reduce((n, p) => n + encodedBytes(p), 0));
    const largestInput = Math.max(...inputBytes);
    const conversationBytes = Buffer.byteLength(JSON.stringify(last.messages));
    process.stderr.write(
      `[history-growth] ${CALLS} model calls in ${seconds.toFixed(1)} s: history ${(historyBytes / 1e6).toFixed(2)} MB ` +
        `(${history.events!.length} events); conversation ${(conversationBytes / 1e6).toFixed(2)} MB; ` +
        `largest fhModel input ${largestInput} B\n`,
    );
    expect(conversationBytes).toBeGreaterThan(CALLS * GROW_TEXT_CHARS); // the conversation really grew
    expect(historyBytes).toBeLessThan(5_000_000);
    expect(largestInput).toBeLessThan(20_000);
    // The last input is a delta (one tool result), not the ~600 KB conversation.
    expect(inputBytes.at(-1)!).toBeLessThan(GROW_TEXT_CHARS + 2_000);
  }, 300_000);
});
