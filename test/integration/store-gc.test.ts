import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startAgent } from '@fabric-harness/sdk/client';
import { FakeAnthropicServer, callTools, say } from '@fabric-harness/sdk/testing';
import { main } from '../../src/cli/main';
import { workbench } from '../fixtures/payload-agents';
import { startTestWorker, type TestWorker } from '../support/test-worker';

async function listStore(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string): Promise<void> => {
    for (const e of await fs.readdir(d, { withFileTypes: true })) {
      if (e.isDirectory()) await walk(path.join(d, e.name));
      else out.push(path.relative(dir, path.join(d, e.name)));
    }
  };
  await walk(dir);
  return out.sort();
}

describe('fh store gc', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;

  beforeAll(async () => {
    fake = await FakeAnthropicServer.start({ contextWindow: 2_000_000 });
    w = await startTestWorker({ name: 'store-gc', baseURL: fake.url });
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  async function gc(...args: string[]): Promise<{ code: number; report: any; err: string }> {
    let out = '';
    let err = '';
    const io = { out: (t: string) => void (out += t), err: (t: string) => void (err += t) };
    const code = await main(
      ['store', 'gc', '--store-dir', w.storeDir, '--address', w.t.address, '--namespace', w.t.namespace, '--json', ...args],
      io,
    );
    return { code, report: out ? JSON.parse(out) : undefined, err };
  }

  it('keeps what retained histories refer to, removes old unreferenced blobs, and a dry run removes nothing', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-gc-'));
    fake.enqueue(callTools({ name: 'big_output', input: { kb: 150 } }), say(`done ${Date.now()}`));
    const handle = await startAgent(w.client, workbench, { task: `report ${Date.now()}`, dir }, { workflowId: `gc-${Date.now()}`, taskQueue: w.taskQueue });
    await handle.result();
    const ofRun = await listStore(w.storeDir);
    expect(ofRun.filter((k) => k.startsWith('payloads/')).length).toBeGreaterThan(0);
    expect(ofRun.filter((k) => k.startsWith('tool-results/')).length).toBeGreaterThan(0);
    expect(ofRun.filter((k) => k.startsWith('transcripts/')).length).toBeGreaterThan(0);

    // Blobs nothing refers to: two old enough to collect, one too young.
    const sha = (s: string) => createHash('sha256').update(s).digest('hex');
    const old = [`tool-results/${sha('orphan').slice(0, 2)}/${sha('orphan')}`, `payloads/${sha('orphan payload')}`, 'transcripts/ab/ab00000000000000.json'];
    const young = `tool-results/${sha('young').slice(0, 2)}/${sha('young')}`;
    const longAgo = new Date(Date.now() - 3 * 3_600_000);
    for (const key of [...old, young]) {
      await fs.mkdir(path.dirname(path.join(w.storeDir, key)), { recursive: true });
      await fs.writeFile(path.join(w.storeDir, key), 'x');
    }
    for (const key of old) await fs.utimes(path.join(w.storeDir, key), longAgo, longAgo);
    const runBlobs = ofRun.filter((k) => !k.startsWith('preludes/'));
    for (const key of runBlobs) await fs.utimes(path.join(w.storeDir, key), longAgo, longAgo); // age alone removes nothing referenced

    const dry = await gc('--older-than', '1h', '--dry-run');
    expect(dry.err).toBe('');
    expect(dry.code).toBe(0);
    expect(dry.report.removed.sort()).toEqual([...old].sort());
    expect(dry.report.young).toBe(1);
    expect(await listStore(w.storeDir)).toEqual([...ofRun, ...old, young].sort()); // nothing deleted

    const real = await gc('--older-than', '1h', '--concurrency', '2');
    expect(real.report.removed.sort()).toEqual([...old].sort());
    expect(await listStore(w.storeDir)).toEqual([...ofRun, young].sort());

  }, 90_000);

  it('refuses a bad duration and an unknown subcommand with usage errors', async () => {
    expect((await gc('--older-than', 'soon')).err).toMatch(/--older-than must be a duration/);
    for (const bad of ['0', '65', 'many', '2.5']) {
      const refused = await gc('--concurrency', bad);
      expect(refused.code).toBe(2);
      expect(refused.err).toMatch(/--concurrency must be an integer/);
      expect(refused.report).toBeUndefined();
    }
    let err = '';
    const code = await main(['store', 'sweep'], { out: () => undefined, err: (t) => void (err += t) });
    expect(code).toBe(2);
    expect(err).toMatch(/unknown store command 'sweep'/);
  });
});
