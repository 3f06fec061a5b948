/**
 * Store lifecycle: deleting a session, terminating and deleting a run, and a closed run leaving the
 * namespace's retention each let garbage collection remove the blobs nothing else references, on the
 * file store and on S3 (a real MinIO, built by the project's scripts when missing), while everything a
 * retained history refers to stays. Retention cannot be waited for on the dev server (a day at least):
 * deleting the closed run's execution is what the server's retention does when it expires, so that is
 * how it is simulated here. Each collection's figures (blobs and bytes before/after, histories marked,
 * mark and sweep time) are printed.
 *
 * The file runs in a namespace of its own: a collection marks every history in its namespace, and in the
 * suite's shared one that is whatever the files before it left (309 histories, 129 s, in one CI run; 2 when
 * jest ran this file first), so its time would depend on the order jest picks.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { Client } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import { collectStoreGarbage, startAgent, startSession, type CollectGarbageReport } from '@fabric-harness/sdk/client';
import { say, type FakeAnthropicServer } from '@fabric-harness/sdk/testing';
import { startMinio, type MinioServer } from '../support/provision/minio';
import { createWorker, FabricHarnessPlugin, FileTranscriptStore, S3Store, type CollectableStore } from '@fabric-harness/sdk/worker';
import { chatter } from '../fixtures/compaction-agents';
import { assistant } from '../fixtures/session-agents';
import { testBundle } from '../support/bundle';
import { TEST_AGENT_MODULES } from '../support/bundle-once';
import { startSessionFake } from '../support/session-fake';
import { testConnection, type TestConnection } from '../support/temporal';
import { main } from '../../src/cli/main';
import { FH_SEARCH_ATTRIBUTES } from '../../src/wire/search-attributes';
import { setUpNamespace } from '../support/provision/temporal-server';

const MINIO_BUILD_TIMEOUT_MS = 20 * 60_000;
/** Histories for the timing of a collection. */
const GC_RUNS = 40;
const NAMESPACE = 'fh-store-lifecycle';

async function keys(store: CollectableStore): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for await (const b of store.list('')) out.set(b.key, b.size);
  return out;
}

const sorted = (m: Map<string, number>) => [...m.keys()].sort();
const unique = (tag: string) => `${tag} ${Date.now()} ${Math.random()}`;
/** Over the 128 KiB offload threshold: the prompt itself becomes a payload blob of this run only. */
const bigPrompt = (tag: string) => `${unique(tag)} ${'lorem ipsum dolor '.repeat(9_000)}`;

function figures(what: string, before: Map<string, number>, r: CollectGarbageReport, after: Map<string, number>): string {
  const kb = (n: number) => `${(n / 1024).toFixed(0)} KB`;
  const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
  return (
    `[store-lifecycle] ${what}: ${before.size} blobs / ${kb(total(before))} before -> ${after.size} / ${kb(total(after))} after; ` +
    `removed ${r.removed.length} (${kb(r.removedBytes)}); ${r.histories} histories marked in ${r.markMs} ms, swept in ${r.sweepMs} ms`
  );
}

describe.each(['file', 's3'] as const)('store lifecycle on the %s store', (kind) => {
  let t: TestConnection;
  let fake: FakeAnthropicServer;
  let minio: MinioServer | undefined;
  let store: CollectableStore;
  let worker: Worker;
  let running: Promise<void>;
  let client: Client;
  let dir: string | undefined;
  const taskQueue = `store-lifecycle-${kind}-${process.pid}-${Date.now()}`;
  const ns = NAMESPACE;

  beforeAll(async () => {
    t = await testConnection();
    await setUpNamespace(t.address, ns, { ...FH_SEARCH_ATTRIBUTES }, (line) => process.stderr.write(`[store-lifecycle] ${line}\n`));
    fake = await startSessionFake({ contextWindow: 2_000_000 });
    if (kind === 's3') {
      minio = await startMinio({ onProgress: (line) => process.stderr.write(`[minio] ${line}\n`) });
      const credentials = { accessKeyId: minio.accessKeyId, secretAccessKey: minio.secretAccessKey };
      const bucket = `fh-lifecycle-${process.pid}`;
      const raw = new S3Client({ endpoint: minio.endpoint, region: minio.region, forcePathStyle: true, credentials });
      await raw.send(new CreateBucketCommand({ Bucket: bucket }));
      raw.destroy();
      store = new S3Store({ bucket, prefix: 'fh/lifecycle', endpoint: minio.endpoint, region: minio.region, credentials });
    } else {
      dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-lifecycle-'));
      store = new FileTranscriptStore(dir);
    }
    worker = await createWorker({
      agents: TEST_AGENT_MODULES,
      tools: [require.resolve('../fixtures/agent-tools')],
      connection: t.nativeConnection,
      namespace: ns,
      taskQueue,
      model: { apiKey: 'test-key', baseURL: fake.url },
      store,
      workflowBundle: await testBundle(),
    });
    running = worker.run();
    client = new Client({ connection: t.connection, namespace: ns, plugins: [new FabricHarnessPlugin({ store })] });
  }, MINIO_BUILD_TIMEOUT_MS);

  afterAll(async () => {
    worker?.shutdown();
    await running;
    await t?.close();
    await fake?.stop();
    await minio?.stop();
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  /** Deletes a run's execution and waits until its history is gone (the server deletes closed runs in the background). */
  async function deleteExecution(workflowId: string): Promise<void> {
    await client.workflowService.deleteWorkflowExecution({ namespace: ns, workflowExecution: { workflowId } });
    for (let i = 0; i < 600; i++) {
      try {
        await client.workflow.getHandle(workflowId).describe();
      } catch (err) {
        if ((err as Error).name === 'WorkflowNotFoundError') return;
        throw err;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`run ${workflowId} was not deleted within 60 s`);
  }

  /** Until the run's history records a completed model call (so what that call stored is referenced). */
  async function modelCallRecorded(workflowId: string): Promise<void> {
    for (let i = 0; i < 600; i++) {
      const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
      const modelCalls = new Set(
        events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'fhModel').map((e) => String(e.eventId)),
      );
      if (events.some((e) => modelCalls.has(String(e.activityTaskCompletedEventAttributes?.scheduledEventId)))) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`run ${workflowId} made no model call within 60 s`);
  }

  // What stays referenced throughout: a closed run and an open session. Their blobs must survive every collection.
  let retained: Map<string, number>;

  it('retained runs: a collection removes nothing any of them refers to', async () => {
    fake.enqueue(say(unique('kept run answer')));
    const run = await startAgent(client, chatter, { prompts: [bigPrompt('kept run')], contextWindowTokens: 1_000_000 }, { workflowId: `kept-${kind}-${Date.now()}`, taskQueue });
    await run.result();
    const keeper = await startSession(client, assistant, { id: `kept-session-${kind}-${Date.now()}`, taskQueue });
    fake.enqueue(say(unique('kept session answer')));
    await keeper.prompt(bigPrompt('kept session'));
    retained = await keys(store);
    expect(sorted(retained).some((k) => k.startsWith('payloads/'))).toBe(true);
    expect(sorted(retained).some((k) => k.startsWith('transcripts/'))).toBe(true);

    const report = await collectStoreGarbage(client, { store, olderThanMs: 0 });
    process.stderr.write(`${figures(`${kind}: nothing deleted`, retained, report, await keys(store))}\n`);
    expect(report.removed).toEqual([]);
    expect(sorted(await keys(store))).toEqual(sorted(retained));
  }, 120_000);

  it('deleting a session removes the blobs only it used', async () => {
    const s = await startSession(client, assistant, { id: `deleted-session-${kind}-${Date.now()}`, taskQueue });
    fake.enqueue(say(unique('a1')), say(unique('a2')));
    await s.prompt(bigPrompt('session to delete'));
    await s.prompt(unique('second question'));
    const before = await keys(store);
    const added = sorted(before).filter((k) => !retained.has(k));
    expect(added.some((k) => k.startsWith('payloads/'))).toBe(true);
    expect(added.some((k) => k.startsWith('transcripts/'))).toBe(true);

    const { garbage } = await s.delete({ store: { store, olderThanMs: 0 } });
    const after = await keys(store);
    process.stderr.write(`${figures(`${kind}: session deleted`, before, garbage!, after)}\n`);
    expect(garbage!.removed.sort()).toEqual(added);
    expect(sorted(after)).toEqual(sorted(retained));
  }, 120_000);

  it('terminating and deleting a run removes the blobs only it used', async () => {
    const workflowId = `terminated-${kind}-${Date.now()}`;
    fake.enqueue(say(unique('first answer')));
    const run = await startAgent(client, chatter, { prompts: [bigPrompt('run to terminate')], contextWindowTokens: 1_000_000, serveMs: 120_000 }, { workflowId, taskQueue });
    // Waits on the history, not on a query: a query's large result is offloaded too, and referenced by no history.
    await modelCallRecorded(run.workflowId);
    await run.workflow.terminate('done with it');
    const before = await keys(store);
    const added = sorted(before).filter((k) => !retained.has(k));
    expect(added.length).toBeGreaterThan(0);

    // Terminated but still retained: its history still protects its blobs.
    const kept = await collectStoreGarbage(client, { store, olderThanMs: 0 });
    expect(kept.removed).toEqual([]);

    await deleteExecution(workflowId);
    const report = await collectStoreGarbage(client, { store, olderThanMs: 0 });
    const after = await keys(store);
    process.stderr.write(`${figures(`${kind}: run terminated and deleted`, before, report, after)}\n`);
    expect(report.removed.sort()).toEqual(added);
    expect(sorted(after)).toEqual(sorted(retained));
  }, 120_000);

  it('a closed run past retention (its execution deleted, as retention does) leaves its blobs collectable after the grace period', async () => {
    const workflowId = `expired-${kind}-${Date.now()}`;
    fake.enqueue(say(unique('closed run answer')));
    const run = await startAgent(client, chatter, { prompts: [bigPrompt('closed run')], contextWindowTokens: 1_000_000 }, { workflowId, taskQueue });
    await run.result();
    const before = await keys(store);
    const added = sorted(before).filter((k) => !retained.has(k));
    expect(added.length).toBeGreaterThan(0);

    await deleteExecution(workflowId);
    // Inside the grace period nothing goes: the blobs are young.
    const young = await collectStoreGarbage(client, { store, olderThanMs: 3_600_000 });
    expect(young.removed).toEqual([]);
    expect(young.young).toBe(added.length);

    const report = await collectStoreGarbage(client, { store, olderThanMs: 0 });
    const after = await keys(store);
    process.stderr.write(`${figures(`${kind}: closed run expired`, before, report, after)}\n`);
    expect(report.removed.sort()).toEqual(added);
    expect(sorted(after)).toEqual(sorted(retained));
  }, 120_000);

  it(`marks ${GC_RUNS} more histories and sweeps: time and figures (nothing retained removed)`, async () => {
    const runs = await Promise.all(
      Array.from({ length: GC_RUNS }, async (_, i) => {
        fake.enqueue(say(unique(`answer ${i}`)));
        return startAgent(client, chatter, { prompts: [unique(`question ${i}`)], contextWindowTokens: 1_000_000 }, { workflowId: `many-${kind}-${i}-${Date.now()}`, taskQueue });
      }),
    );
    await Promise.all(runs.map((r) => r.result()));
    const before = await keys(store);
    const report = await collectStoreGarbage(client, { store, olderThanMs: 0 });
    process.stderr.write(`${figures(`${kind}: ${GC_RUNS} more runs, all retained`, before, report, await keys(store))}\n`);
    expect(report.histories).toBeGreaterThanOrEqual(GC_RUNS + 2);
    expect(report.removed).toEqual([]);
    expect(sorted(await keys(store))).toEqual(sorted(before));
  }, 300_000);

  /**
   * Wraps the client's history fetches for one collection: counts the most in flight at once, and makes the
   * `failAt`-th fetch fail with a server error. Restored afterwards.
   */
  async function withFetchSpy<T>(failAt: number | undefined, run: () => Promise<T>): Promise<{ result?: T; error?: unknown; maxInFlight: number; fetches: number }> {
    const original = client.workflow.getHandle.bind(client.workflow);
    let inFlight = 0;
    let maxInFlight = 0;
    let fetches = 0;
    const spy = jest.spyOn(client.workflow, 'getHandle').mockImplementation(((workflowId: string, runId?: string) => {
      const handle = original(workflowId, runId);
      const fetchHistory = handle.fetchHistory.bind(handle);
      handle.fetchHistory = async () => {
        const n = ++fetches;
        maxInFlight = Math.max(maxInFlight, ++inFlight);
        try {
          // Long enough that the next fetches start while this one is out, as on a remote server.
          await new Promise((r) => setTimeout(r, 20));
          if (n === failAt) throw Object.assign(new Error('UNAVAILABLE: injected by the test'), { code: 14 });
          return await fetchHistory();
        } finally {
          inFlight--;
        }
      };
      return handle;
    }) as typeof client.workflow.getHandle);
    try {
      return { result: await run(), maxInFlight, fetches };
    } catch (error) {
      return { error, maxInFlight, fetches };
    } finally {
      spy.mockRestore();
    }
  }

  if (kind === 'file') it('marks `concurrency` histories at a time (8 by default); a failed fetch fails the collection and removes nothing', async () => {
    const orphan = `payloads/${createHash('sha256').update(unique('orphan to keep')).digest('hex')}`;
    await store.put(orphan, new TextEncoder().encode('nothing refers to this'));
    const before = await keys(store);

    const byDefault = await withFetchSpy(undefined, () => collectStoreGarbage(client, { store, olderThanMs: 0, dryRun: true }));
    expect(byDefault.result!.histories).toBeGreaterThanOrEqual(GC_RUNS);
    expect(byDefault.maxInFlight).toBe(8);
    const one = await withFetchSpy(undefined, () => collectStoreGarbage(client, { store, olderThanMs: 0, dryRun: true, concurrency: 1 }));
    expect(one.maxInFlight).toBe(1);
    // The same marks whatever the concurrency.
    expect(one.result!.removed).toEqual([orphan]);
    expect(byDefault.result!.removed).toEqual([orphan]);
    expect(one.result!.referenced).toBe(byDefault.result!.referenced);

    const failed = await withFetchSpy(3, () => collectStoreGarbage(client, { store, olderThanMs: 0 }));
    expect(failed.error).toMatchObject({ message: 'UNAVAILABLE: injected by the test' });
    expect(failed.fetches).toBeLessThan(byDefault.fetches); // listing stopped at the failure
    expect(sorted(await keys(store))).toEqual(sorted(before));
    await store.delete([orphan]);
  }, 120_000);

  if (kind === 'file') it('a grace period that is not a number, and bad delete options, are refused naming the field before anything is read or deleted', async () => {
    const young = `payloads/${createHash('sha256').update(unique('young orphan')).digest('hex')}`;
    await store.put(young, new TextEncoder().encode('written a moment ago'));
    const before = await keys(store);
    for (const [opts, field] of [
      [{ store, olderThanMs: '24h' }, 'olderThanMs'],
      [{ store }, 'olderThanMs'],
      [{ store, olderThanMs: -1 }, 'olderThanMs'],
      [{ store, olderThanMs: 0, concurrency: 0 }, 'concurrency'],
      [{ store, olderThanMs: 0, concurrency: 65 }, 'concurrency'],
      [{ store, olderThanMs: 0, dryRun: 'yes' }, 'dryRun'],
    ] as const) {
      const fetched = await withFetchSpy(undefined, () => collectStoreGarbage(client, opts as unknown as Parameters<typeof collectStoreGarbage>[1]));
      expect(fetched.error).toMatchObject({ code: 'INVALID_INPUT', field });
      expect(fetched.fetches).toBe(0);
    }
    expect(sorted(await keys(store))).toEqual(sorted(before));

    // SessionHandle.delete refuses it before deleting the session.
    const s = await startSession(client, assistant, { id: `bad-grace-${Date.now()}`, taskQueue });
    fake.enqueue(say(unique('kept answer')));
    await s.prompt(unique('a question'));
    const refusal = (options: unknown) => s.delete(options as Parameters<typeof s.delete>[0]).then(() => undefined, (e: unknown) => e);
    expect(await refusal({ store: { store, olderThanMs: '1h' } })).toMatchObject({ code: 'INVALID_INPUT', field: 'store.olderThanMs' });
    // The rest of its options too, before anything is ended or deleted (a waitMs that is not a number left the wait unbounded).
    expect(await refusal({ waitMs: '5s' })).toMatchObject({ code: 'INVALID_INPUT', field: 'waitMs' });
    expect(await refusal({ wait: 'no' })).toMatchObject({ code: 'INVALID_INPUT', field: 'wait' });
    expect(await refusal({ deleteBranch: 1 })).toMatchObject({ code: 'INVALID_INPUT', field: 'deleteBranch' });
    expect(await refusal({ wiat: false })).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('Unrecognized key: "wiat"') });
    expect(await refusal({ store: { store, dryRun: true } })).toMatchObject({ code: 'INVALID_INPUT', field: 'store.dryRun', message: expect.stringContaining('"dryRun"') });
    expect((await s.workflow.describe()).status.name).toBe('RUNNING');
    expect(sorted(await keys(store)).filter((k) => !before.has(k)).length).toBeGreaterThan(0); // its blobs are all there
    await s.delete({ store: { store, olderThanMs: 0 } });
    await store.delete([young]);
  }, 120_000);

  // The file store's `fh store gc --store-dir` is test/integration/store-gc.test.ts.
  if (kind === 's3') it('fh store gc --s3-bucket collects the same bucket the workers use (credentials from the AWS environment)', async () => {
    const s3 = store as S3Store;
    const orphan = `payloads/${createHash('sha256').update(unique('orphan')).digest('hex')}`;
    await s3.put(orphan, new TextEncoder().encode('nothing refers to this'));
    const before = await keys(store);
    const saved = { ...process.env };
    Object.assign(process.env, { AWS_ACCESS_KEY_ID: minio!.accessKeyId, AWS_SECRET_ACCESS_KEY: minio!.secretAccessKey, AWS_REGION: minio!.region });
    const gc = async (...extra: string[]) => {
      let out = '';
      let err = '';
      const args = ['store', 'gc', '--s3-bucket', s3.bucket, '--s3-prefix', 'fh/lifecycle', '--s3-endpoint', minio!.endpoint];
      const code = await main([...args, '--address', t.address, '--namespace', ns, '--older-than', '0', '--json', ...extra], {
        out: (x) => void (out += x),
        err: (x) => void (err += x),
      });
      return { code, err, report: out ? JSON.parse(out) : undefined };
    };
    try {
      const dry = await gc('--dry-run');
      expect(dry.err).toBe('');
      expect(dry.report).toMatchObject({ location: `s3://${s3.bucket}/fh/lifecycle/`, blobs: before.size, removed: [orphan] });
      expect(sorted(await keys(store))).toEqual(sorted(before));
      const real = await gc();
      expect(real.code).toBe(0);
      expect(real.report.removed).toEqual([orphan]);
      expect(sorted(await keys(store))).toEqual(sorted(before).filter((k) => k !== orphan));
    } finally {
      for (const k of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_REGION']) if (saved[k] === undefined) delete process.env[k];
      Object.assign(process.env, saved);
    }
  }, 120_000);
});
