/**
 * A lost offloaded payload on the real dev server: a blob the store proves absent ends the run (or, for
 * a session, the turn) with STORE_BLOB_MISSING naming it, within seconds, whether an activity or a
 * workflow task needs it (the latter through the worker's missing-blob reaper); a store that does not
 * answer is not proof of absence, and the run carries on once it is back.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { startAgent, startSession } from '@fabric-harness/sdk/client';
import { callTools, fail, say, type FakeAnthropicServer } from '@fabric-harness/sdk/testing';
import { FileTranscriptStore } from '../../src/activities/stores/transcript-store';
import { MissingBlobReaper } from '../../src/worker/missing-blob-reaper';
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

/**
 * A file store that loses every payload blob written while `losing`, right after acknowledging it (a
 * disk or bucket that lost it, a gc that ran too early): the next read gets the store's "not found".
 * With `downAfterWrite`, it goes "off the network" instead, right after the first payload write.
 */
class LosingStore extends FlakyStore {
  losing = false;
  downAfterWrite = false;
  readonly lost: string[] = [];
  override async put(key: string, bytes: Uint8Array): Promise<void> {
    await super.put(key, bytes);
    if (!key.startsWith('payloads/')) return;
    if (this.losing) {
      await fs.rm(path.join(this.dir, key));
      this.lost.push(key);
    }
    if (this.downAfterWrite) {
      this.downAfterWrite = false;
      this.down = true;
    }
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

/** The run's result rejects within 30 s, a WorkflowFailedError that decodes to STORE_BLOB_MISSING: that error. */
async function endsWithMissingBlob(handle: { result(): Promise<unknown> }): Promise<NonNullable<ReturnType<typeof decodeFailure>>> {
  const started = Date.now();
  const failed = await rejection(within30s(handle.result()));
  expect(Date.now() - started).toBeLessThan(30_000);
  expect(failed).toBeInstanceOf(WorkflowFailedError);
  const err = decodeFailure(failed)!;
  expect(err.code).toBe('STORE_BLOB_MISSING');
  return err;
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
    const asked = modelCalls();

    const err = await endsWithMissingBlob(handle);
    expect(lost.some((b) => err.message.includes(`payloads/${b}`))).toBe(true); // names the missing hash
    expect(err.message).toContain(w.storeDir); // and where it was looked for
    expect((await handle.workflow.describe()).status.name).toBe('FAILED');
    expect(modelCalls()).toBe(asked); // the retry never reached the model
  }, 60_000);

  /** A worker of its own whose store loses (or stops answering for) the payloads it is given. */
  async function losingWorker(name: string, options: { missingBlobReaper?: false } = {}): Promise<{ store: LosingStore; lw: TestWorker }> {
    const store = new LosingStore(await fs.mkdtemp(path.join(os.tmpdir(), `fh-store-${name}-`)));
    return { store, lw: await startTestWorker({ name, baseURL: fake.url, store, ...options }) };
  }

  /** The run's WorkflowTaskFailed failures, oldest first. */
  async function taskFailures(handle: { workflow: WorkflowHandle }) {
    const events = (await handle.workflow.fetchHistory()).events ?? [];
    return events.flatMap((e) => (e.workflowTaskFailedEventAttributes?.failure ? [e.workflowTaskFailedEventAttributes.failure] : []));
  }

  it('a run whose workflow task needs a lost blob (an activity result) is terminated with STORE_BLOB_MISSING naming it, within 30 s', async () => {
    const { store, lw } = await losingWorker('blob-lost-result');
    try {
      // The tool's ~200 KB output is the activity's result: offloaded by the worker that ran it, and lost
      // at once, so the workflow task that delivers it to the run fails before any workflow code runs.
      store.losing = true;
      fake.enqueue(callTools({ name: 'big_output', input: { kb: 200 } })); // nothing after it: the run never gets there
      const handle = await startAgent(lw.client, workbench, { task: 'report', dir }, { workflowId: id('lost-result'), taskQueue: lw.taskQueue });
      await until('the tool result stored and lost', async () => store.lost.length > 0);
      const asked = modelCalls();

      const err = await endsWithMissingBlob(handle); // the typed error, from the termination's reason
      expect(err.message).toContain(store.lost[0]!); // names the missing hash
      expect((err as unknown as { key: string }).key).toBe(store.lost[0]);
      expect(err.message).toContain(store.dir); // where it was looked for
      expect(err.message).toContain('docs/deploying.md, When a blob is missing'); // and the way out
      expect((await handle.workflow.describe()).status.name).toBe('TERMINATED');
      // It was a workflow task that failed of it (not an activity): what the reaper acts on.
      const failures = await taskFailures(handle);
      expect(failures.some((f) => f.applicationFailureInfo?.type === 'STORE_BLOB_MISSING' && f.message?.includes(store.lost[0]!))).toBe(true);
      expect(modelCalls()).toBe(asked); // the run never got further
    } finally {
      await lw.stop();
    }
  }, 60_000);

  it('a worker whose store is not the one the blob was put in never ends the run: absence there proves nothing', async () => {
    const { store, lw } = await losingWorker('blob-wrong-store', { missingBlobReaper: false });
    try {
      store.losing = true;
      fake.enqueue(callTools({ name: 'big_output', input: { kb: 200 } }));
      const handle = await startAgent(lw.client, workbench, { task: 'report', dir }, { workflowId: id('wrong-store'), taskQueue: lw.taskQueue });
      await until('the workflow task failed twice of the lost blob', async () => {
        const f = await taskFailures(handle);
        return f.filter((x) => x.applicationFailureInfo?.type === 'STORE_BLOB_MISSING').length >= 2 ? f : undefined;
      }, 30_000);
      const missing = {
        key: store.lost[0]!,
        location: store.dir,
        origin: 'test',
        workflowId: handle.workflowId,
        namespace: lw.t.namespace,
        storedIn: store.location, // as the claim records it
      };
      const svc = lw.t.nativeConnection.workflowService;
      // A worker pointed at another directory (a misconfigured store) finds the blob absent too.
      const elsewhere = new MissingBlobReaper({ workflowService: svc, namespace: lw.t.namespace, store: new FileTranscriptStore(dir) });
      expect(await elsewhere.check(missing)).toBe('left');
      expect(await elsewhere.check({ ...missing, storedIn: undefined })).toBe('left'); // a claim that names no store proves nothing either
      expect((await handle.workflow.describe()).status.name).toBe('RUNNING');
      // The store it was put in, still without it: the run is ended.
      const own = new MissingBlobReaper({ workflowService: svc, namespace: lw.t.namespace, store });
      expect(await own.check(missing)).toBe('terminated');
      expect((await handle.workflow.describe()).status.name).toBe('TERMINATED');
    } finally {
      await lw.stop();
    }
  }, 60_000);

  it('the reaper leaves a run whose workflow task fails of something else, and never looks at another namespace', async () => {
    // An agent no worker on the queue has: its workflow task fails (UNKNOWN_AGENT), retried, the run RUNNING.
    const handle = await w.client.workflow.start('no-such-agent', { taskQueue: w.taskQueue, workflowId: id('other-failure'), args: [{}] });
    const failures = await until('its workflow task failed', async () => {
      const f = await taskFailures({ workflow: handle });
      return f.length > 0 ? f : undefined;
    });
    expect(failures[0]!.applicationFailureInfo?.type).not.toBe('STORE_BLOB_MISSING');
    const reaper = new MissingBlobReaper({ workflowService: w.t.nativeConnection.workflowService, namespace: w.t.namespace, store: new FileTranscriptStore(dir) });
    const missing = { key: `payloads/${'0'.repeat(64)}`, location: dir, origin: 'test', workflowId: handle.workflowId, runId: handle.firstExecutionRunId, namespace: w.t.namespace };
    try {
      expect(await reaper.check(missing)).toBe('left'); // the blob is absent, but that is not why its task fails
      expect(reaper.report({ ...missing, namespace: `${w.t.namespace}-elsewhere` })).toBe(false);
      expect((await handle.describe()).status.name).toBe('RUNNING');
    } finally {
      reaper.stop();
      await handle.terminate('test done').catch(() => undefined); // (ended already if the reaper got it wrong)
    }
  }, 60_000);

  it('a session whose message (an update argument the client offloaded) is lost is ended, and its pending prompt rejects with STORE_BLOB_MISSING', async () => {
    const { store, lw } = await losingWorker('blob-lost-message');
    try {
      const s = await startSession(lw.client, assistant, { id: id('lost-message'), taskQueue: lw.taskQueue, settings: { workingDirectory: dir } });
      store.losing = true; // the client's ~180 KB message is stored, acknowledged, and lost
      const started = Date.now();
      const err = await rejection(within30s(s.prompt(BIG_TASK)));
      expect(Date.now() - started).toBeLessThan(30_000);
      expect(err.code).toBe('STORE_BLOB_MISSING');
      expect(store.lost.length).toBeGreaterThan(0);
      expect(err.message).toContain(store.lost[0]!);
      expect((await s.workflow.describe()).status.name).toBe('TERMINATED');
    } finally {
      await lw.stop();
    }
  }, 60_000);

  it('a workflow task whose store does not answer is retried, never terminated: the run completes once the store is back', async () => {
    const { store, lw } = await losingWorker('blob-result-unreachable');
    try {
      store.downAfterWrite = true; // the tool result is written, then the store stops answering
      fake.enqueue(callTools({ name: 'big_output', input: { kb: 200 } }), say('done'));
      const handle = await startAgent(lw.client, workbench, { task: 'report', dir }, { workflowId: id('result-unreachable'), taskQueue: lw.taskQueue });
      // The task that delivers the result fails with a retryable STORE_UNREACHABLE, and is retried
      // (attempt 2 and on) for longer than the reaper waits before it acts on a proven absence.
      const retried = await until('the task failed of STORE_UNREACHABLE and retried past the reaper\'s wait', async () => {
        const failures = await taskFailures(handle);
        const d = await handle.workflow.describe();
        return failures.some((f) => f.applicationFailureInfo?.type === 'STORE_UNREACHABLE') && (d.raw.pendingWorkflowTask?.attempt ?? 0) >= 3 ? d : undefined;
      });
      expect(retried.status.name).toBe('RUNNING');
      expect((await taskFailures(handle)).some((f) => f.applicationFailureInfo?.type === 'STORE_BLOB_MISSING')).toBe(false);
      store.down = false;
      expect(await handle.result()).toBe('done');
    } finally {
      store.down = false;
      await lw.stop();
    }
  }, 120_000);

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
