/**
 * A lost offloaded payload on the real dev server: a blob the store proves absent ends the run (or, for
 * a session, the turn) with STORE_BLOB_MISSING naming it, within seconds; a store that does not answer
 * is not proof of absence, and the run carries on once it is back.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import { startAgent, startSession } from '@fabric-harness/sdk/client';
import { fail, say, type FakeAnthropicServer } from '@fabric-harness/sdk/testing';
import { FileTranscriptStore } from '../../src/edge/transcript-store';
import { decodeFailure } from '../../src/wire/failures';
import { workbench } from '../fixtures/payload-agents';
import { assistant } from '../fixtures/session-agents';
import { isTitleRequest, startSessionFake } from '../support/session-fake';
import { startTestWorker, type TestWorker } from '../support/test-worker';
import { rejection, until } from '../support/waiting';

/** A pasted log of ~180 KB: over the 128 KB offload threshold, so every payload carrying it is a claim. */
const BIG_TASK = `summarise this:\n${'a long pasted log line\n'.repeat(8000)}`;

/** A file store that can be taken "off the network": its reads then fail as a dropped connection does. */
class FlakyStore extends FileTranscriptStore {
  down = false;
  failedReads = 0;
  override async get(key: string): Promise<Uint8Array | undefined> {
    if (this.down) {
      this.failedReads++;
      throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    }
    return super.get(key);
  }
}

/** `p`, or a failure saying it was still unsettled after 30 s (a run that retries instead of ending). */
function within30s<T>(p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('still running 30 s after the blob was lost')), 30_000);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

describe('a lost offloaded payload', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;
  let dir: string;
  let n = 0;
  const id = (p: string) => `${p}-${process.pid}-${Date.now()}-${n++}`;

  beforeAll(async () => {
    fake = await startSessionFake({ contextWindow: 2_000_000 });
    w = await startTestWorker({ name: 'blob-missing', baseURL: fake.url });
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-blob-missing-'));
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  /** Model calls that reached the fake (not its title requests, nor model look-ups). */
  const modelCalls = () => fake.requests.filter((r) => r.path === '/v1/messages' && !isTitleRequest(r)).length;
  const payloadDir = () => path.join(w.storeDir, 'payloads');
  const blobs = async () => new Set(await fs.readdir(payloadDir()).catch(() => [] as string[]));

  /** Deletes every payload blob written since `before`: what the retried model call needs. */
  async function loseBlobsSince(before: Set<string>): Promise<string[]> {
    const lost = [...(await blobs())].filter((b) => !before.has(b));
    expect(lost.length).toBeGreaterThan(0);
    await Promise.all(lost.map((b) => fs.rm(path.join(payloadDir(), b))));
    return lost;
  }

  it('an agent run ends with STORE_BLOB_MISSING naming the blob, within seconds, instead of retrying', async () => {
    const before = await blobs();
    const requests = modelCalls();
    // The model call carries the ~180 KB task (offloaded: its input is a claim); its first attempt is
    // refused with a retryable 529, and the blob is lost before the retry fetches it.
    fake.enqueue(fail(529));
    const handle = await startAgent(w.client, workbench, { task: BIG_TASK, dir }, { workflowId: id('lost-run'), taskQueue: w.taskQueue });
    await until('the refused model call', async () => modelCalls() - requests >= 1);
    const lost = await loseBlobsSince(before);
    const started = Date.now();
    const asked = modelCalls();

    const failed = await rejection(within30s(handle.result()));
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(failed).toBeInstanceOf(WorkflowFailedError);
    const err = decodeFailure(failed)!;
    expect(err.code).toBe('STORE_BLOB_MISSING');
    expect(lost.some((b) => err.message.includes(`payloads/${b}`))).toBe(true); // names the missing hash
    expect(err.message).toContain(w.storeDir); // and where it was looked for
    expect((await handle.workflow.describe()).status.name).toBe('FAILED');
    expect(modelCalls()).toBe(asked); // the retry never reached the model
  }, 60_000);

  it('a session turn is answered with STORE_BLOB_MISSING, and the session takes the next message', async () => {
    const s = await startSession(w.client, assistant, { id: id('lost-turn'), taskQueue: w.taskQueue, settings: { workingDirectory: dir } });
    const before = await blobs();
    const requests = modelCalls();
    fake.enqueue(fail(529));
    const reply = s.prompt(BIG_TASK);
    await until('the refused model call', async () => modelCalls() - requests >= 1);
    const lost = await loseBlobsSince(before);
    const started = Date.now();

    const err = await rejection(within30s(reply));
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(err.code).toBe('STORE_BLOB_MISSING');
    expect(lost.some((b) => err.message.includes(`payloads/${b}`))).toBe(true);

    fake.enqueue(say('still here'));
    expect(await s.prompt('are you there?')).toBe('still here');
    expect((await s.workflow.describe()).status.name).toBe('RUNNING');
    await s.end();
  }, 60_000);

  it('an unreachable store is not proof of absence: the run waits for it and completes once it is back', async () => {
    const storeDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-store-flaky-'));
    const store = new FlakyStore(storeDir);
    const flaky = await startTestWorker({ name: 'blob-unreachable', baseURL: fake.url, store });
    try {
      const requests = modelCalls();
      fake.enqueue(fail(529), say('done'));
      const handle = await startAgent(flaky.client, workbench, { task: BIG_TASK, dir }, { workflowId: id('unreachable'), taskQueue: flaky.taskQueue });
      await until('the refused model call', async () => modelCalls() - requests >= 1);
      store.down = true;
      // The retry cannot read its input: a retryable STORE_UNREACHABLE, and the run is still running.
      const pending = await until('a failed read recorded on the model call', async () => {
        const d = await handle.workflow.describe();
        const failure = d.raw.pendingActivities?.[0]?.lastFailure;
        return failure?.applicationFailureInfo?.type === 'STORE_UNREACHABLE' ? d : undefined;
      });
      expect(pending.status.name).toBe('RUNNING');
      expect(pending.raw.pendingActivities![0]!.lastFailure!.message).toContain('ECONNRESET');
      expect(pending.raw.pendingActivities![0]!.lastFailure!.applicationFailureInfo!.nonRetryable).toBeFalsy();
      expect(store.failedReads).toBeGreaterThan(0);
      store.down = false;
      expect(await handle.result()).toBe('done');
    } finally {
      store.down = false;
      await flaky.stop();
    }
  }, 90_000);
});
