/**
 * Audit bundles of live runs, on the real dev server with the S3 store on MinIO: a session that
 * continues as new, hands a task to a sub-agent, gets a 300 KB tool output (an artifact: the model saw a
 * reference) and a prompt big enough for Temporal's external storage; and a flow with two branches.
 * Both are exported with `fh audit export`; then MinIO is stopped and no server is named, and
 * `fh audit verify` (with replay against the agent code) and `fh audit show` work from the bundle alone.
 * One flipped byte in a history, a blob or the manifest fails verify, which names it; a bundle signed
 * with one key fails with another; exporting twice gives the same bytes.
 */
import { generateKeyPairSync } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { Client } from '@temporalio/client';
import { startSession } from '@fabric-harness/sdk/client';
import { FakeAnthropicServer, callTools, say, type RecordedRequest } from '@fabric-harness/sdk/testing';
import { FabricHarnessPlugin, S3Store, createWorker } from '@fabric-harness/sdk/worker';
import { startFlow } from '../../src/client/flows';
import { bundleAgents } from '../../src/worker/bundle';
import { readTar } from '../../src/audit/bundle/tar';
import { auditedAssistant } from '../fixtures/audit-agents';
import { startMinio, type MinioServer } from '../support/provision/minio';
import { TEST_AGENT_MODULES } from '../support/bundle-once';
import { ensureBuilt, runFh, type Ran } from '../support/fh-cli';
import { testConnection, type TestConnection } from '../support/temporal';

const MINIO_BUILD_TIMEOUT_MS = 20 * 60_000;
/** A secret-shaped token a user pasted: recorded in history, hidden by `fh audit show`. */
const SECRET = 'sk-ant-api03-Zx9fakeFAKEfake0123456789';
const MODULES = [...TEST_AGENT_MODULES, path.resolve(__dirname, '../fixtures/audit-agents.ts')];
const FAN_OUT = `digraph Fan {
  start [shape=Mdiamond]
  fan   [shape=component]
  a     [script="echo a-ok"]
  b     [script="echo b-ok"]
  join  [shape=tripleoctagon]
  exit  [shape=Msquare]
  start -> fan
  fan -> a
  fan -> b
  a -> join
  b -> join
  join -> exit
}`;

/** What the fake model answers: by the last user message (or tool result) of each request. */
function route(req: RecordedRequest) {
  if (req.path !== '/v1/messages') return undefined;
  const msgs = req.body.messages as Array<{ role: string; content: Array<{ type: string; text?: string }> }>;
  const last = msgs[msgs.length - 1]!;
  if (last.content.some((b) => b.type === 'tool_result')) return say('recorded the tool result');
  const text = last.content.filter((b) => b.type === 'text').map((b) => b.text).join('');
  if (text === 'make the report') return callTools({ name: 'big_output', input: { kb: 300 } });
  if (text === 'delegate it') return callTools({ name: 'eco-helper', input: { task: 'say what 6 times 7 is' } });
  if (text === 'say what 6 times 7 is') return say('42');
  if (text.startsWith('read this:')) return say(`read ${text.length} characters`);
  return say(`answer to ${text}`);
}

describe('fh audit: bundles of live runs, verified and shown offline', () => {
  let minio: MinioServer;
  let t: TestConnection;
  let fake: FakeAnthropicServer;
  let client: Client;
  let stopWorker: () => Promise<void>;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let offline: NodeJS.ProcessEnv;
  const bucket = `fh-audit-${process.pid}`;
  const keys = [generateKeyPairSync('ed25519'), generateKeyPairSync('ed25519')];
  const sessionId = `audit-session-${process.pid}-${Date.now() % 1_000_000}`;
  const flowId = `audit-flow-${process.pid}-${Date.now() % 1_000_000}`;
  const bundle = (name: string) => path.join(dir, name);
  const fh = (args: string[], e: NodeJS.ProcessEnv, timeoutMs = 120_000): Promise<Ran> => runFh(args, e, { timeoutMs });

  beforeAll(async () => {
    ensureBuilt();
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-audit-'));
    await fs.writeFile(bundle('a.pem'), keys[0]!.privateKey.export({ type: 'pkcs8', format: 'pem' }));
    await fs.writeFile(bundle('a.pub.pem'), keys[0]!.publicKey.export({ type: 'spki', format: 'pem' }));
    await fs.writeFile(bundle('b.pub.pem'), keys[1]!.publicKey.export({ type: 'spki', format: 'pem' }));
    minio = await startMinio({ onProgress: (line) => process.stderr.write(`[minio] ${line}\n`) });
    const raw = new S3Client({ endpoint: minio.endpoint, region: minio.region, forcePathStyle: true, credentials: { accessKeyId: minio.accessKeyId, secretAccessKey: minio.secretAccessKey } });
    await raw.send(new CreateBucketCommand({ Bucket: bucket }));
    raw.destroy();
    const store = new S3Store({ bucket, prefix: 'fh', endpoint: minio.endpoint, region: minio.region, credentials: { accessKeyId: minio.accessKeyId, secretAccessKey: minio.secretAccessKey } });
    fake = await FakeAnthropicServer.start({ contextWindow: 2_000_000, route });
    t = await testConnection();
    const taskQueue = `audit-bundle-${process.pid}-${Date.now()}`;
    const worker = await createWorker({
      agents: MODULES,
      tools: [require.resolve('../fixtures/agent-tools')],
      connection: t.nativeConnection,
      namespace: t.namespace,
      taskQueue,
      model: { apiKey: 'test-key', baseURL: fake.url },
      store,
      workflowBundle: await bundleAgents(MODULES),
    });
    const running = worker.run();
    stopWorker = async () => {
      worker.shutdown();
      await running;
    };
    client = new Client({ connection: t.connection, namespace: t.namespace, plugins: [new FabricHarnessPlugin({ store })] });

    const s = await startSession(client, auditedAssistant, { id: sessionId, taskQueue, historyLimit: 20 });
    expect(await s.prompt('make the report')).toBe('recorded the tool result');
    expect(await s.prompt('delegate it')).toBe('recorded the tool result');
    const big = `read this: ${'lorem ipsum '.repeat(20_000)}`;
    expect(await s.prompt(big)).toBe(`read ${big.length} characters`);
    expect(await s.prompt(`use ${SECRET} for the deploy`)).toBe(`answer to use ${SECRET} for the deploy`);
    for (let i = 0; i < 6; i++) expect(await s.prompt(`question ${i}`)).toBe(`answer to question ${i}`);
    expect((await s.info()).continuedRuns).toBeGreaterThanOrEqual(1);
    await s.end();
    await client.workflow.getHandle(sessionId).result().catch(() => undefined);

    const flowDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-audit-flow-'));
    await (await startFlow(client, FAN_OUT, { workDir: flowDir, taskQueue, workflowId: flowId })).result();

    env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      TEMPORAL_ADDRESS: t.address,
      TEMPORAL_NAMESPACE: t.namespace,
      FH_S3_BUCKET: bucket,
      FH_S3_PREFIX: 'fh',
      AWS_ENDPOINT_URL_S3: minio.endpoint,
      AWS_ACCESS_KEY_ID: minio.accessKeyId,
      AWS_SECRET_ACCESS_KEY: minio.secretAccessKey,
      AWS_REGION: minio.region,
    };
    for (const [args, name] of [
      [['audit', 'export', sessionId, bundle('session.tar')], 'session'],
      [['audit', 'export', sessionId, bundle('session-again.tar')], 'session again'],
      [['audit', 'export', sessionId, bundle('session-signed.tar'), '--sign', bundle('a.pem')], 'session signed'],
      [['audit', 'export', flowId, bundle('flow.tar')], 'flow'],
    ] as const) {
      const r = await fh([...args], env);
      if (r.code !== 0) throw new Error(`export ${name}: ${r.code}\n${r.stdout}\n${r.stderr}`);
    }
    // Offline from here: the store is stopped and no server is named (a closed port).
    await stopWorker();
    await minio.stop();
    offline = { PATH: process.env.PATH, HOME: process.env.HOME, TEMPORAL_ADDRESS: '127.0.0.1:1' };
  }, MINIO_BUILD_TIMEOUT_MS);

  afterAll(async () => {
    await stopWorker?.().catch(() => undefined);
    await minio?.stop().catch(() => undefined);
    await t?.close();
    await fake?.stop();
  });

  const manifestOf = async (file: string) => JSON.parse(readTar(await fs.readFile(file)).get('manifest.json')!.toString('utf8'));

  it('holds every run (continue-as-new chain, sub-agent, flow branches) and every blob they refer to', async () => {
    const m = await manifestOf(bundle('session.tar'));
    const roles = m.runs.map((r: { role: string; workflowType?: string }) => `${r.role}:${r.workflowType}`);
    expect(roles[0]).toBe('root:audited-assistant');
    expect(roles).toContain('continued:audited-assistant');
    expect(roles).toContain('child:eco-helper');
    const kinds = new Set(m.blobs.map((b: { key: string }) => b.key.split('/')[0]));
    expect([...kinds].sort()).toEqual(expect.arrayContaining(['payloads', 'preludes', 'tool-results', 'transcripts']));
    expect(m.missing).toEqual([]);
    const flow = await manifestOf(bundle('flow.tar'));
    expect(flow.runs.filter((r: { role: string; workflowType?: string }) => r.role === 'child' && r.workflowType === 'fhFlowBranch')).toHaveLength(2);
  });

  it('exporting twice gives the same bytes', async () => {
    expect((await fs.readFile(bundle('session-again.tar'))).equals(await fs.readFile(bundle('session.tar')))).toBe(true);
    // Signed: the same parts and manifest, plus the signature.
    const signed = readTar(await fs.readFile(bundle('session-signed.tar')));
    const plain = readTar(await fs.readFile(bundle('session.tar')));
    expect([...signed.keys()].filter((k) => k !== 'manifest.sig.json')).toEqual([...plain.keys()]);
    expect(signed.get('manifest.json')!.equals(plain.get('manifest.json')!)).toBe(true);
  });

  it('verify passes offline, replaying every history against the agent code; show prints it all in full', async () => {
    for (const file of ['session.tar', 'flow.tar']) {
      const r = await fh(['audit', 'verify', bundle(file), ...MODULES.flatMap((m) => ['--agents', m])], offline, 300_000);
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
      expect(r.stdout).toMatch(/^ok: .*every history replays against/);
    }
    const show = await fh(['audit', 'show', bundle('session.tar')], offline);
    expect(show.code).toBe(0);
    // The 300 KB report in full (the model saw a reference), the sub-agent's own run, the big prompt.
    const reportLines = show.stdout.split('\n').filter((l) => l === 'report line of text').length;
    expect(reportLines).toBe(Math.ceil((300 * 1024) / 20));
    expect(show.stdout).toContain('# Audit: eco-helper');
    expect(show.stdout).toContain('Sub-agent eco-helper');
    expect(show.stdout).toContain(`read this: ${'lorem ipsum '.repeat(20_000)}`.slice(0, 100_000));
    expect(show.stdout).not.toContain('[offloaded');
  }, 900_000);

  it('show hides secret-shaped text as the share page does; --no-redact shows the record as is', async () => {
    const shown = await fh(['audit', 'show', bundle('session.tar')], offline);
    expect(shown.code).toBe(0);
    expect(shown.stdout).not.toContain(SECRET);
    expect(shown.stdout).toContain('use [redacted] for the deploy');
    const json = await fh(['audit', 'show', bundle('session.tar'), '--json'], offline);
    expect(json.stdout).not.toContain(SECRET);
    const raw = await fh(['audit', 'show', bundle('session.tar'), '--no-redact'], offline);
    expect(raw.stdout).toContain(`use ${SECRET} for the deploy`);
  }, 300_000);

  it('a wrong agents module is a replay divergence (exit 12)', async () => {
    const r = await fh(['audit', 'verify', bundle('session.tar'), '--agents', TEST_AGENT_MODULES[0]!], offline, 300_000);
    expect(r.code).toBe(12);
    expect(r.stderr).toMatch(/BUNDLE_REPLAY_DIVERGED: histories\/0000\.json/);
    // The agent the run needs and the ones the module defines, in a line (not the worker's advice or a stack).
    expect(r.stderr).toContain("The current code does not define this run's agent 'audited-assistant' (it defines calculator, ");
  }, 600_000);

  async function flipped(file: string, entry: string, find: (data: Buffer) => number): Promise<string> {
    const bytes = await fs.readFile(bundle(file));
    const data = readTar(bytes).get(entry)!;
    const at = data.byteOffset - bytes.byteOffset + find(data);
    const out = Buffer.from(bytes);
    out[at] = out[at]! ^ 0x01;
    const target = bundle(`flipped-${path.basename(entry)}-${file}`);
    await fs.writeFile(target, out);
    return target;
  }

  it('one flipped byte in a history, a blob or the manifest fails verify, naming it (exit 10, or 11 when signed)', async () => {
    const m = await manifestOf(bundle('session.tar'));
    const run = m.runs[1];
    // In a history: the first event whose chain link changed is named.
    const inHistory = await flipped('session.tar', run.history, (d) => d.indexOf('"eventTime"', d.indexOf('"eventId": "3"')) + 16);
    let r = await fh(['audit', 'verify', inHistory], offline);
    expect(r.code).toBe(10);
    expect(r.stderr).toContain(`BUNDLE_TAMPERED: ${run.history} event 3 does not match the manifest`);
    // In a blob: the tool result the model saw as an artifact.
    const blob = m.blobs.find((b: { key: string }) => b.key.startsWith('tool-results/')).part;
    r = await fh(['audit', 'verify', await flipped('session.tar', blob, (d) => d.length - 2)], offline);
    expect(r.code).toBe(10);
    expect(r.stderr).toContain(`BUNDLE_TAMPERED: ${blob} does not match the manifest`);
    // In the manifest: unsigned, the record it changes no longer matches; signed, the signature fails.
    r = await fh(['audit', 'verify', await flipped('session.tar', 'manifest.json', (d) => d.indexOf('"sha256": "') + 12)], offline);
    expect(r.code).toBe(10);
    r = await fh(['audit', 'verify', await flipped('session-signed.tar', 'manifest.json', (d) => d.indexOf('"sha256": "') + 12)], offline);
    expect(r.code).toBe(11);
    expect(r.stderr).toContain('BUNDLE_SIGNATURE_INVALID: signature: it does not verify over manifest.json');
  }, 300_000);

  it('search finds tool calls by name and arguments, model calls and runs across a folder of bundles, and runs in visibility', async () => {
    const folder = bundle('search');
    await fs.mkdir(folder);
    await fs.copyFile(bundle('session.tar'), path.join(folder, 'session.tar'));
    await fs.copyFile(bundle('flow.tar'), path.join(folder, 'flow.tar'));
    await fs.writeFile(path.join(folder, 'notes.txt'), 'not a bundle');
    const lines = (r: Ran) => r.stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
    let r = await fh(['audit', 'search', '--dir', folder, '--tool', 'big_output', '--args', '"kb":300'], offline);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('skipped');
    expect(lines(r)).toEqual([expect.objectContaining({ source: 'bundle', bundle: 'session.tar', workflowId: sessionId, kind: 'tool_call', tool: 'big_output', arguments: { kb: 300 } })]);
    r = await fh(['audit', 'search', '--dir', folder, '--tool', 'big_output', '--args', '"kb":9'], offline);
    expect(lines(r)).toEqual([]);
    r = await fh(['audit', 'search', '--dir', folder, '--tool', 'eco-helper'], offline);
    expect(lines(r).map((h) => h.arguments)).toEqual([{ task: 'say what 6 times 7 is' }]);
    // Every model call of the session's runs (the sub-agent's too), as `fh audit show --json` lists them.
    const shown = JSON.parse((await fh(['audit', 'show', bundle('session.tar'), '--json'], offline)).stdout) as Array<{ audit: { records: Array<{ type: string; model?: string }> } }>;
    const calls = shown.flatMap((a) => a.audit.records.filter((x) => x.type === 'model_call'));
    expect(calls.length).toBeGreaterThanOrEqual(12);
    const models = lines(await fh(['audit', 'search', '--dir', folder, '--model', calls[0]!.model!], offline));
    expect(new Set(models.map((h) => h.workflowType))).toEqual(new Set(['audited-assistant', 'eco-helper']));
    expect(models.length).toBe(calls.length);
    expect(lines(await fh(['audit', 'search', '--dir', folder, '--model', 'no-such-model'], offline))).toEqual([]);
    const runs = lines(await fh(['audit', 'search', '--dir', folder, '--since', '2000-01-01T00:00:00Z'], offline));
    expect(runs.filter((h) => h.kind === 'run').map((h) => h.bundle).sort()).toEqual(expect.arrayContaining(['flow.tar', 'session.tar']));
    // Visibility (the server is still up): the runs by start time; the filters it cannot check are listed.
    const visible = lines(await fh(['audit', 'search', '--since', new Date(Date.now() - 3_600_000).toISOString(), '--tool', 'bash'], env));
    expect(visible).toEqual(expect.arrayContaining([expect.objectContaining({ source: 'visibility', workflowId: sessionId, kind: 'run', unchecked: ['tool'] })]));
  }, 300_000);

  it('a bundle signed with one key verifies with it and fails with another', async () => {
    let r = await fh(['audit', 'verify', bundle('session-signed.tar'), '--public-key', bundle('a.pub.pem')], offline);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/signed by sha256:[0-9a-f]{64} at .* \(the given key\)/);
    r = await fh(['audit', 'verify', bundle('session-signed.tar'), '--public-key', bundle('b.pub.pem')], offline);
    expect(r.code).toBe(11);
    expect(r.stderr).toMatch(/BUNDLE_SIGNATURE_INVALID: signature: signed with key sha256:[0-9a-f]+, not the given public key/);
    r = await fh(['audit', 'verify', bundle('session.tar'), '--public-key', bundle('a.pub.pem')], offline);
    expect(r.code).toBe(11);
  }, 300_000);
});
