/**
 * A tool result capped in the conversation is read back in full from the worker's store with
 * read_artifact (offered to the model automatically when capping is on), a page at a time, verified
 * against its ref; read_tool_result, its 0.3.0 name, is still answered. Real dev server and worker.
 */
import { startSession } from '@fabric-harness/sdk/client';
import { callTools, say, type FakeAnthropicServer, type RecordedRequest } from '@fabric-harness/sdk/testing';
import { capper } from '../fixtures/session-agents';
import { startSessionFake } from '../support/session-fake';
import { startTestWorker, type TestWorker } from '../support/test-worker';

const lastToolResult = (req: RecordedRequest): string => {
  const msgs = req.body.messages as Array<{ role: string; content: Array<{ type: string; content?: unknown }> }>;
  const block = msgs.at(-1)!.content.find((b) => b.type === 'tool_result');
  return typeof block?.content === 'string' ? block.content : JSON.stringify(block?.content ?? '');
};

describe('read_artifact on a capped result', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;

  beforeAll(async () => {
    // After the capped result, the model asks for the page the marker points at; after that page, for
    // the next one by the 0.3.0 name (a running workflow's model may still use it).
    fake = await startSessionFake({
      route: (req) => {
        const result = lastToolResult(req);
        const marker = /\[full output: read_artifact\(\{"ref":"([0-9a-f]{64})","offset":0\}\)\]/.exec(result);
        if (marker) return callTools({ name: 'read_artifact', input: { ref: marker[1], offset: 10_000, maxChars: 40 } });
        const page = /^\[characters 10000-10040 of \d+\. More: read_artifact\(\{"ref":"([0-9a-f]{64})"/.exec(result);
        return page ? callTools({ name: 'read_tool_result', input: { ref: page[1], offset: 10_040, maxChars: 40 } }) : undefined;
      },
    });
    w = await startTestWorker({ name: 'readback', baseURL: fake.url });
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  it('caps the output, offers the tool, and pages the full output back from the store', async () => {
    const s = await startSession(w.client, capper, { id: `readback-${process.pid}-${Date.now() % 100000}`, taskQueue: w.taskQueue, title: 'Readback' });
    fake.enqueue(callTools({ name: 'bash', input: { command: 'seq 1 5000' } }), say('read it'));
    expect(await s.prompt('count')).toBe('read it');
    const requests = fake.messageRequests();
    expect(requests[0]!.body.tools.map((t: { name: string }) => t.name)).toEqual(['bash', 'read_artifact']);
    const capped = lastToolResult(requests[1]!);
    expect(capped).toMatch(/\[truncated, \d+ tokens omitted\]/);
    expect(capped).not.toContain('\n2500\n');
    const page = lastToolResult(requests.at(-2)!);
    expect(page).toMatch(/^\[characters 10000-10040 of \d+\. More: read_artifact\(/);
    // seq 1 5000 printed in full: the characters at 10,000 are the numbers around 2,270.
    expect(page).toMatch(/\n(?:\d+\n?){5,}/);
    // The old name reads the next page from the same store.
    expect(lastToolResult(requests.at(-1)!)).toMatch(/^\[characters 10040-10080 of \d+\. More: read_artifact\(\{"ref":"[0-9a-f]{64}","offset":10080\}\)\.\]\n(?:\d+\n?){5,}/);
    await s.end();
  });
});
