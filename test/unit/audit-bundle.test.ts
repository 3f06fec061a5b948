/**
 * Audit bundles without a server: the tar round trip, and verify on bundles built from recorded
 * histories (test/histories) with their blobs in a memory store. The integration suite
 * (test/integration/audit-bundle.test.ts) exports live runs from the dev server and MinIO.
 */
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryTranscriptStore } from '../../src/activities/stores/transcript-store';
import { readHistoryFile } from '../../src/audit/history-file';
import { buildBundle } from '../../src/audit/bundle/export';
import { readTar, writeTar } from '../../src/audit/bundle/tar';
import { verifyBundle } from '../../src/audit/bundle/verify';
import { publicKeyFrom } from '../../src/audit/bundle/sign';

const HISTORIES = path.resolve(__dirname, '../histories');

async function recorded(name: string) {
  const dirs = (await fs.readdir(HISTORIES)).sort();
  void dirs;
  const file = path.join(HISTORIES, '0.6.4', name);
  const history = await readHistoryFile(file);
  const runId = history.events![0]!.workflowExecutionStartedEventAttributes!.originalExecutionRunId || 'run-1';
  return { workflowId: 'wf-1', runId, history, role: 'root' as const };
}

const flip = (buf: Buffer, at: number): Buffer => {
  const out = Buffer.from(buf);
  out[at] = out[at]! ^ 0x01;
  return out;
};

/** Where `needle` starts inside the entry `name` of the tar (its data's offset). */
function offsetIn(tar: Buffer, name: string, needle: string): number {
  const entry = readTar(tar).get(name)!;
  return entry.byteOffset - tar.byteOffset + entry.indexOf(needle);
}

describe('the bundle tar', () => {
  it('round-trips entries, sorted, with long names; any tar lists them', async () => {
    const long = `blobs/tool-results/ab/${'ab'.repeat(32)}`;
    const tar = writeTar([
      { name: 'z.txt', data: Buffer.from('zed') },
      { name: long, data: Buffer.alloc(1000, 7) },
      { name: 'a.json', data: Buffer.from('{}') },
    ]);
    expect([...readTar(tar).keys()]).toEqual(['a.json', long, 'z.txt']);
    expect(readTar(tar).get(long)!.equals(Buffer.alloc(1000, 7))).toBe(true);
    const file = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'fh-tar-')), 'b.tar');
    await fs.writeFile(file, tar);
    expect(execFileSync('tar', ['-tf', file], { encoding: 'utf8' }).trim().split('\n')).toEqual(['a.json', long, 'z.txt']);
    expect(() => writeTar([{ name: '../up', data: Buffer.alloc(0) }])).toThrow(expect.objectContaining({ code: 'BUNDLE_INVALID' }));
  });
});

describe('verify', () => {
  let bundle: Buffer;
  let segment: string;
  let store: MemoryTranscriptStore;
  const keys = [generateKeyPairSync('ed25519'), generateKeyPairSync('ed25519')].map((k) => ({
    private: k.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    public: k.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  }));
  beforeAll(async () => {
    const run = await recorded('artifact-offload.json');
    // The recording's store is gone: stand-in segments under the keys its history names (their content is not hash-checked by key).
    const first = await buildBundle([run], { namespace: 'default', rootId: 'wf-1', store: new MemoryTranscriptStore() });
    store = new MemoryTranscriptStore();
    for (const m of first.manifest.missing) if (m.key.startsWith('transcripts/')) await store.put(m.key, Buffer.from('{"parent":null,"entries":[{"type":"user","text":"hello"}]}'));
    segment = first.manifest.missing.find((m) => m.key.startsWith('transcripts/'))!.key;
    bundle = (await buildBundle([await recorded('artifact-offload.json')], { namespace: 'default', rootId: 'wf-1', store })).bytes;
  });

  it('passes an intact bundle, and the same runs give the same bytes', async () => {
    const report = await verifyBundle(bundle);
    expect(report).toMatchObject({ ok: true, runs: 1 });
    const again = (await buildBundle([await recorded('artifact-offload.json')], { namespace: 'default', rootId: 'wf-1', store })).bytes;
    expect(again.equals(bundle)).toBe(true);
  });

  it('names the history and the event when one byte of an event changes', async () => {
    const history = readTar(bundle).get('histories/0000.json')!.toString('utf8');
    const fifth = /"eventId": ?"5"/.exec(history)!.index;
    const time = history.indexOf('"eventTime"', fifth);
    const at = offsetIn(bundle, 'histories/0000.json', '"eventId"') - history.indexOf('"eventId"') + time + 16;
    await expect(verifyBundle(flip(bundle, at))).rejects.toMatchObject({ code: 'BUNDLE_TAMPERED', part: 'histories/0000.json', eventId: 5 });
  });

  it('names a blob that changed by one byte', async () => {
    const part = `blobs/${segment}`;
    await expect(verifyBundle(flip(bundle, offsetIn(bundle, part, 'hello')))).rejects.toMatchObject({ code: 'BUNDLE_TAMPERED', part });
  });

  it('names a blob that was removed (its part, then, with the manifest re-hashed: the reference)', async () => {
    const entries = readTar(bundle);
    entries.delete(`blobs/${segment}`);
    const rebuilt = writeTar([...entries].map(([name, data]) => ({ name, data })));
    await expect(verifyBundle(rebuilt)).rejects.toMatchObject({ code: 'BUNDLE_TAMPERED', part: `blobs/${segment}` });
    // The manifest rewritten to match (an unsigned bundle can be): the history's reference is what fails.
    const manifest = JSON.parse(entries.get('manifest.json')!.toString('utf8'));
    manifest.blobs = manifest.blobs.filter((b: { key: string }) => b.key !== segment);
    delete manifest.parts[`blobs/${segment}`];
    entries.set('manifest.json', Buffer.from(JSON.stringify(manifest)));
    const consistent = writeTar([...entries].map(([name, data]) => ({ name, data })));
    await expect(verifyBundle(consistent)).rejects.toMatchObject({ code: 'BUNDLE_INCOMPLETE', key: segment, referencedBy: expect.stringMatching(/^histories\/0000\.json event \d+$/) });
  });

  it('fails when one byte of the manifest changes', async () => {
    const at = offsetIn(bundle, 'manifest.json', '"sha256": "') + 12;
    await expect(verifyBundle(flip(bundle, at))).rejects.toMatchObject({ code: 'BUNDLE_TAMPERED' });
  });

  it('a signed bundle verifies with its key, fails with another, and fails when its manifest changes', async () => {
    const run = await recorded('artifact-offload.json');
    const signed = (await buildBundle([run], { namespace: 'default', rootId: 'wf-1', signingKey: keys[0]!.private })).bytes;
    await expect(verifyBundle(signed, { publicKey: publicKeyFrom(keys[0]!.public) })).resolves.toMatchObject({ ok: true, signed: { trustedKey: true } });
    await expect(verifyBundle(signed, { publicKey: publicKeyFrom(keys[1]!.public) })).rejects.toMatchObject({ code: 'BUNDLE_SIGNATURE_INVALID' });
    await expect(verifyBundle(bundle, { publicKey: publicKeyFrom(keys[0]!.public) })).rejects.toMatchObject({ code: 'BUNDLE_SIGNATURE_INVALID' });
    const at = offsetIn(signed, 'manifest.json', '"workflowId": "wf-1"') + 16;
    await expect(verifyBundle(flip(signed, at))).rejects.toMatchObject({ code: 'BUNDLE_SIGNATURE_INVALID', message: expect.stringContaining('manifest.json') });
  });

  it('a signed manifest changed so it no longer parses (a hash that is not hex, broken JSON) fails on its signature, checked first', async () => {
    const run = await recorded('artifact-offload.json');
    const signed = (await buildBundle([run], { namespace: 'default', rootId: 'wf-1', signingKey: keys[0]!.private })).bytes;
    const set = (at: number, char: string): Buffer => {
      const out = Buffer.from(signed);
      out[at] = char.charCodeAt(0);
      return out;
    };
    const notHex = set(offsetIn(signed, 'manifest.json', '"sha256": "') + 11, 'g');
    const notJSON = set(offsetIn(signed, 'manifest.json', '{'), '[');
    for (const changed of [notHex, notJSON]) {
      await expect(verifyBundle(changed)).rejects.toMatchObject({ code: 'BUNDLE_SIGNATURE_INVALID', message: expect.stringContaining('manifest.json') });
      await expect(verifyBundle(changed, { publicKey: publicKeyFrom(keys[0]!.public) })).rejects.toMatchObject({ code: 'BUNDLE_SIGNATURE_INVALID' });
    }
  });
});
