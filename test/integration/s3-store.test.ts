/**
 * The S3 store against a real MinIO (built by the project's scripts when missing, started by this file
 * only, so the other suites do not wait for it), and a run that moves from one worker to another
 * process whose only shared state with the first is the bucket.
 */
import type { ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CreateBucketCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Client } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { temporal } from '@temporalio/proto';
import { getAgentHandle, startAgent } from '@fabric-harness/sdk/client';
import { FakeAnthropicServer, say } from '@fabric-harness/sdk/testing';
import { startMinio, type MinioServer } from '../support/provision/minio';
import { FabricHarnessPlugin, S3Store, createWorker } from '@fabric-harness/sdk/worker';
import { Transcripts, segmentKey } from '../../src/activities/stores/transcripts';
import { ToolResultStore, toolResultKey } from '../../src/activities/stores/tool-results';
import { TranscriptStoreDriver } from '../../src/activities/stores/external-storage';
import type { Entry } from '../../src/core/entries';
import { chatter } from '../fixtures/compaction-agents';
import { testBundle } from '../support/bundle';
import { TEST_AGENT_MODULES } from '../support/bundle-once';
import { testConnection } from '../support/temporal';
import { killHard, startTsProcess } from '../support/worker-process-control';

// A missing minio binary is built with Go (a few minutes the first time), never skipped.
const MINIO_BUILD_TIMEOUT_MS = 20 * 60_000;

describe('S3Store on MinIO', () => {
  let minio: MinioServer;
  let raw: S3Client;
  const bucket = `fh-test-${process.pid}`;
  let n = 0;
  const store = (prefix = `t${n++}`) =>
    new S3Store({
      bucket,
      prefix,
      endpoint: minio.endpoint,
      region: minio.region,
      credentials: { accessKeyId: minio.accessKeyId, secretAccessKey: minio.secretAccessKey },
    });
  const bytes = (s: string) => new TextEncoder().encode(s);
  const text = (b: Uint8Array | undefined) => (b ? new TextDecoder().decode(b) : b);

  beforeAll(async () => {
    minio = await startMinio({ onProgress: (line) => process.stderr.write(`[minio] ${line}\n`) });
    raw = new S3Client({
      endpoint: minio.endpoint,
      region: minio.region,
      forcePathStyle: true,
      credentials: { accessKeyId: minio.accessKeyId, secretAccessKey: minio.secretAccessKey },
    });
    await raw.send(new CreateBucketCommand({ Bucket: bucket }));
  }, MINIO_BUILD_TIMEOUT_MS);
  afterAll(async () => {
    raw?.destroy();
    await minio?.stop();
  });

  it('puts and gets blobs under its prefix; a missing key is undefined', async () => {
    const s = store('fh/prod');
    expect(s.location).toBe(`s3://${bucket}/fh/prod/`);
    await s.put('transcripts/ab/abc.json', bytes('{"x":1}'));
    expect(text(await s.get('transcripts/ab/abc.json'))).toBe('{"x":1}');
    expect(await s.get('transcripts/ab/nothing.json')).toBeUndefined();
    const listed = await raw.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'fh/prod/' }));
    expect(listed.Contents?.map((o) => o.Key)).toEqual(['fh/prod/transcripts/ab/abc.json']);
    // Another prefix is another store.
    expect(await store('fh/dev').get('transcripts/ab/abc.json')).toBeUndefined();
  });

  it('touch renews LastModified and keeps the content; touching a missing key is not an error', async () => {
    const s = store();
    await s.put('payloads/p1', bytes('payload'));
    const head = () => raw.send(new HeadObjectCommand({ Bucket: bucket, Key: `${s.prefix}payloads/p1` }));
    const before = (await head()).LastModified!;
    await new Promise((r) => setTimeout(r, 1100)); // LastModified has a resolution of one second
    await s.touch('payloads/p1');
    expect((await head()).LastModified!.getTime()).toBeGreaterThan(before.getTime());
    expect(text(await s.get('payloads/p1'))).toBe('payload');
    await expect(s.touch('payloads/absent')).resolves.toBeUndefined();
  });

  it('refuses bad options naming the field, and reports a refused request instead of calling it a miss', async () => {
    expect(() => new S3Store({ bucket: 'Not_A_Bucket' })).toThrow(expect.objectContaining({ code: 'INVALID_INPUT', field: 'bucket' }));
    expect(() => new S3Store({ bucket, prefix: '../up' })).toThrow(expect.objectContaining({ code: 'INVALID_INPUT', field: 'prefix' }));
    const wrong = new S3Store({ bucket, endpoint: minio.endpoint, credentials: { accessKeyId: minio.accessKeyId, secretAccessKey: 'wrong-secret' } });
    await expect(wrong.get('transcripts/ab/abc.json')).rejects.toMatchObject({ code: 'STORE_S3_REQUEST', name: 'S3StoreRequestError' });
    const noBucket = new S3Store({ bucket: 'no-such-bucket-here', endpoint: minio.endpoint, credentials: { accessKeyId: minio.accessKeyId, secretAccessKey: minio.secretAccessKey } });
    await expect(noBucket.get('transcripts/ab/abc.json')).rejects.toMatchObject({ code: 'STORE_S3_REQUEST' });
  });

  it('a tampered object fails its readers with STORE_INTEGRITY (transcript segment, tool result, payload)', async () => {
    const s = store();
    const tamper = (key: string, body: string | Uint8Array) => raw.send(new PutObjectCommand({ Bucket: bucket, Key: `${s.prefix}${key}`, Body: body }));

    const entries: Entry[] = [{ type: 'user', text: 'transfer 10 EUR to Alice' }];
    const ref = await new Transcripts(s).append(null, [], entries);
    expect(await new Transcripts(s).load(ref)).toEqual(entries);
    const key = segmentKey(ref.head);
    await tamper(key, text(await s.get(key))!.replace('10 EUR', '9000 EUR'));
    await expect(new Transcripts(s).load(ref)).rejects.toMatchObject({ code: 'STORE_INTEGRITY' });

    const results = new ToolResultStore(s);
    const content = 'balance: 10 EUR\n'.repeat(40);
    const contentRef = (await results.save(content))!;
    const delta = [{ type: 'tool_results', results: [{ type: 'tool_result', tool_use_id: 't1', contentRef }] }] as unknown as Entry[];
    expect(JSON.stringify(await results.resolve(delta))).toContain('balance: 10 EUR');
    await tamper(toolResultKey(contentRef), content.replace('10 EUR', '9000 EUR'));
    // Another worker reads the object and refuses it; the worker that stored it sends what it hashed.
    await expect(new ToolResultStore(s).resolve(delta)).rejects.toMatchObject({ code: 'STORE_INTEGRITY' });
    expect(JSON.stringify(await results.resolve(delta))).not.toContain('9000 EUR');

    const driver = new TranscriptStoreDriver(s);
    const payload = { metadata: { encoding: bytes('json/plain') }, data: bytes('"10 EUR"') };
    const [claim] = await driver.store(undefined, [payload]);
    expect(text((await driver.retrieve(undefined, [claim]))[0].data!)).toBe('"10 EUR"');
    await tamper(claim.claimData.key, temporal.api.common.v1.Payload.encode({ ...payload, data: bytes('"9000 EUR"') }).finish());
    await expect(driver.retrieve(undefined, [claim])).rejects.toMatchObject({ code: 'STORE_INTEGRITY' });
  });

  it('a run moves to a worker process that shares only the bucket: transcript and offloaded payloads come from S3', async () => {
    const prefix = `run-${Date.now()}`;
    const s3 = store(prefix);
    const fake = await FakeAnthropicServer.start({ contextWindow: 2_000_000, script: [say('first answer'), say('second answer')] });
    const t = await testConnection();
    const taskQueue = `s3-store-${process.pid}-${Date.now()}`;
    const emptyDisk = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-empty-disk-'));
    let second: ChildProcess | undefined;
    try {
      const first = await createWorker({
        agents: TEST_AGENT_MODULES,
        tools: [require.resolve('../fixtures/agent-tools')],
        connection: t.nativeConnection,
        namespace: t.namespace,
        taskQueue,
        model: { apiKey: 'test-key', baseURL: fake.url },
        store: s3,
        workflowBundle: await testBundle(),
      });
      const client = new Client({ connection: t.connection, namespace: t.namespace, plugins: [new FabricHarnessPlugin({ store: s3 })] });
      const running = first.run();
      // A first prompt over the offload threshold: the workflow input itself is an S3 object, which
      // the second worker must fetch to replay the run.
      const bigPrompt = `please read this: ${'lorem ipsum '.repeat(20_000)}`;
      const workflowId = `s3-move-${Date.now()}`;
      const started = await startAgent(
        client,
        chatter,
        { prompts: [bigPrompt], contextWindowTokens: 1_000_000, serveMs: 60_000 },
        { workflowId, taskQueue },
      );
      while ((await started.messages()).length < 2) await new Promise((r) => setTimeout(r, 100));
      first.shutdown();
      await running;

      second = await startTsProcess(path.join(__dirname, '../support/s3-worker-process.ts'), {
        FH_TASK_QUEUE: taskQueue,
        FH_FAKE_URL: fake.url,
        FH_S3_BUCKET: bucket,
        FH_S3_PREFIX: prefix,
        AWS_ENDPOINT_URL_S3: minio.endpoint,
        AWS_ACCESS_KEY_ID: minio.accessKeyId,
        AWS_SECRET_ACCESS_KEY: minio.secretAccessKey,
        AWS_REGION: minio.region,
        FH_STORE_DIR: emptyDisk, // where a file store would write
      });
      const handle = getAgentHandle<{ replies: string[] }>(client, workflowId);
      expect(await handle.prompt('second question')).toBe('second answer');
      await handle.close();
      expect((await handle.result()).replies).toEqual(['first answer']);

      const history = await handle.fetchHistory();
      const events = history.events!;
      // The second worker found the transcript in S3: no miss, no resend, one model call per prompt.
      expect(events.find((e) => e.activityTaskFailedEventAttributes?.failure?.applicationFailureInfo?.type === 'TRANSCRIPT_STORE_MISS')).toBeUndefined();
      const modelCalls = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'fhModel');
      expect(modelCalls).toHaveLength(2);
      // …and it is the other process that made the second call.
      const starts = events.filter((e) => e.activityTaskStartedEventAttributes).map((e) => e.activityTaskStartedEventAttributes!.identity);
      expect(starts.at(-1)).toMatch(new RegExp(`^${second.pid}@`));
      expect(starts[0]).not.toMatch(new RegExp(`^${second.pid}@`));
      expect(historyToJSON(history)).toContain(Buffer.from('temporal.api.sdk.v1.ExternalStorageReference').toString('base64'));
      const last = fake.messageRequests().at(-1)!.body.messages;
      expect(last.map((m: any) => m.content[0].text)).toEqual([bigPrompt, 'first answer', 'second question']);

      const keys = ((await raw.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: `${prefix}/` }))).Contents ?? []).map((o) => o.Key!);
      expect(keys.some((k) => k.startsWith(`${prefix}/payloads/`))).toBe(true);
      expect(keys.filter((k) => k.startsWith(`${prefix}/transcripts/`)).length).toBeGreaterThanOrEqual(2);
      expect(await fs.readdir(emptyDisk)).toEqual([]); // the second worker kept nothing on its local disk
    } finally {
      if (second) await killHard(second);
      await t.close();
      await fake.stop();
      await fs.rm(emptyDisk, { recursive: true, force: true });
    }
  });
});
