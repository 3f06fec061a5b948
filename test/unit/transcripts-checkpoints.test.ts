import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { StoreReferences, sweepStore } from '../../src/activities/stores/store-gc';
import { FileTranscriptStore, MemoryTranscriptStore, type TranscriptStore } from '../../src/activities/stores/transcript-store';
import { CHECKPOINT_EVERY, Transcripts, checkpointKey, segmentKey, transcriptHead, type TranscriptRef } from '../../src/activities/stores/transcripts';
import type { Entry } from '../../src/core/entries';

const user = (text: string): Entry => ({ type: 'user', text });
const reply = (text: string): Entry => ({ type: 'assistant', content: [{ type: 'text', text }] });
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * A store that counts gets and the round trips they took: a get that starts before any earlier get has
 * finished shares its round trip, so a walk costs one round trip per segment and a batch costs one.
 */
class CountingStore implements TranscriptStore {
  gets = 0;
  private done = 0;
  private readonly rounds = new Set<number>();
  constructor(readonly inner: TranscriptStore) {}
  async get(key: string): Promise<Uint8Array | undefined> {
    this.gets++;
    this.rounds.add(this.done);
    const blob = await this.inner.get(key);
    await new Promise((resolve) => setImmediate(resolve));
    this.done++;
    return blob;
  }
  put(key: string, data: Uint8Array): Promise<void> {
    return this.inner.put(key, data);
  }
  get roundTrips(): number {
    return this.rounds.size;
  }
  reset(): void {
    this.gets = 0;
    this.done = 0;
    this.rounds.clear();
  }
}

/** A conversation of `calls` model calls as the model activity stores it: each call adds 1-3 entries. */
async function conversation(transcripts: Transcripts, calls: number, tag = 'c'): Promise<{ heads: TranscriptRef[]; entries: Entry[] }> {
  let ref: TranscriptRef | null = null;
  let entries: Entry[] = [];
  const heads: TranscriptRef[] = [];
  for (let i = 0; i < calls; i++) {
    const added = [user(`${tag} question ${i}`), reply(`${tag} answer ${i}`)].slice(0, 1 + (i % 2));
    if (i % 3 === 0) added.push(user(`${tag} follow-up ${i}`));
    ref = await transcripts.append(ref, entries, added);
    entries = entries.concat(added);
    heads.push(ref);
  }
  return { heads, entries };
}

/** The transcript up to each head, computed independently of the store. */
function prefixes(heads: TranscriptRef[], entries: Entry[]): Map<string, Entry[]> {
  return new Map(heads.map((h) => [h.head, entries.slice(0, h.count)]));
}

describe('transcript checkpoints: cold loads in two round trips', () => {
  it('a cold load gives the same transcript as the writer had, at every head, with and without checkpoints', async () => {
    for (const checkpointEvery of [1, 3, CHECKPOINT_EVERY, 1000]) {
      const store = new MemoryTranscriptStore();
      const { heads, entries } = await conversation(new Transcripts(store, { checkpointEvery }), 150);
      const expected = prefixes(heads, entries);
      for (const head of heads) {
        expect(await new Transcripts(store, { checkpointEvery }).load(head)).toEqual(expected.get(head.head));
      }
      // A reader with another interval reads the paths the writer stored.
      expect(await new Transcripts(store, { checkpointEvery: 7 }).load(heads.at(-1)!)).toEqual(entries);
      expect(transcriptHead(entries)).toEqual(heads.at(-1));
    }
  });

  it.each([10, 100, 1000])('a cold load at %i calls reads O(log n) blobs in 2 round trips (a walk reads one per call)', async (calls) => {
    const store = new CountingStore(new MemoryTranscriptStore());
    const { heads, entries } = await conversation(new Transcripts(store), calls);
    store.reset();
    expect(await new Transcripts(store).load(heads.at(-1)!)).toEqual(entries);
    const bound = 1 + (CHECKPOINT_EVERY - 1) + Math.floor(Math.log2(calls / CHECKPOINT_EVERY + 1)) + 1;
    expect(store.gets).toBeLessThanOrEqual(bound);
    expect(store.roundTrips).toBeLessThanOrEqual(2);
    if (calls >= CHECKPOINT_EVERY) {
      // Worst case on the path: the head just before a checkpoint is due.
      const worst = heads[Math.floor(calls / CHECKPOINT_EVERY) * CHECKPOINT_EVERY - 2]!;
      store.reset();
      expect(await new Transcripts(store).load(worst)).toEqual(entries.slice(0, worst.count));
      expect(store.gets).toBeLessThanOrEqual(bound);
      expect(store.roundTrips).toBe(2);
    }
  });

  it('stores each entry in O(log n) checkpoints, not once per checkpoint', async () => {
    const store = new MemoryTranscriptStore();
    const put = store.put.bind(store);
    let checkpointEntries = 0;
    store.put = async (key, data) => {
      if (key.startsWith('checkpoints/')) checkpointEntries += (JSON.parse(decoder.decode(data)) as { entries: Entry[] }).entries.length;
      return put(key, data);
    };
    const { entries } = await conversation(new Transcripts(store), 1000);
    // 62 checkpoints; a full checkpoint each time would store ~31x the transcript.
    expect(checkpointEntries / entries.length).toBeLessThan(1 + Math.log2(1000 / CHECKPOINT_EVERY) / 2 + 0.5);
  });

  it('refuses a checkpoint interval that is not an integer in 1..1024', () => {
    for (const checkpointEvery of [0, 2.5, 1025, Number.NaN]) {
      expect(() => new Transcripts(new MemoryTranscriptStore(), { checkpointEvery })).toThrow(/checkpointEvery must be an integer from 1 to 1024/);
    }
  });

  it('a tampered checkpoint fails with STORE_INTEGRITY, whatever was changed', async () => {
    const tamperings: Array<(c: { from: TranscriptRef | null; entries: Entry[] }) => unknown> = [
      (c) => ({ ...c, entries: c.entries.map((e, i) => (i === 3 ? user('altered text') : e)) }),
      (c) => ({ ...c, entries: c.entries.slice(1) }),
      (c) => ({ ...c, from: c.from ? null : { head: '0123456789abcdef', count: 0 } }),
      () => 'not json at all',
    ];
    for (const tamper of tamperings) {
      const store = new MemoryTranscriptStore();
      const { heads } = await conversation(new Transcripts(store), 40);
      const at = heads[CHECKPOINT_EVERY - 1]!; // the first checkpoint, from the root (merged away at 2K)
      const key = checkpointKey(at.head, null);
      const original = JSON.parse(decoder.decode((await store.get(key))!));
      const altered = tamper(original);
      await store.put(key, encoder.encode(typeof altered === 'string' ? altered : JSON.stringify(altered)));
      await expect(new Transcripts(store).load(heads[CHECKPOINT_EVERY + 4]!)).rejects.toMatchObject({ code: 'STORE_INTEGRITY' });
    }
  });

  it('a missing checkpoint, or a segment another chain stored differently, falls back to the walk', async () => {
    const store = new CountingStore(new MemoryTranscriptStore());
    const { heads, entries } = await conversation(new Transcripts(store), 40);
    const last = heads.at(-1)!;
    // The conversation resent in full up to call 36 (after a store miss): one segment from the root,
    // under the same head as the original 36th segment, which sits on the last head's load path.
    const at = heads[35]!;
    await new Transcripts(store).append(null, [], entries.slice(0, at.count));
    store.reset();
    expect(await new Transcripts(store).load(last)).toEqual(entries);
    expect(store.roundTrips).toBeGreaterThan(2); // the path was tried, then the walk

    const lost = new MemoryTranscriptStore();
    const chain = await conversation(new Transcripts(lost), 40);
    const first = chain.heads[2 * CHECKPOINT_EVERY - 1]!; // the last head's one checkpoint, from the root
    expect(await lost.get(checkpointKey(first.head, null))).toBeDefined();
    (lost as unknown as { blobs: Map<string, Uint8Array> }).blobs.delete(checkpointKey(first.head, null));
    expect(await new Transcripts(lost).load(chain.heads.at(-1)!)).toEqual(chain.entries);
  });

  it('loads segments written before checkpoints (no path) by walking, and checkpoints them on the next append', async () => {
    const store = new CountingStore(new MemoryTranscriptStore());
    // An older release's chain: {parent, entries} only.
    let parent: TranscriptRef | null = null;
    let entries: Entry[] = [];
    for (let i = 0; i < 50; i++) {
      const added = [user(`old ${i}`), reply(`reply ${i}`)];
      const ref = transcriptHead(added, parent);
      await store.put(segmentKey(ref.head), encoder.encode(JSON.stringify({ parent, entries: added })));
      parent = ref;
      entries = entries.concat(added);
    }
    const worker = new Transcripts(store);
    store.reset();
    expect(await worker.load(parent!)).toEqual(entries);
    expect(store.gets).toBe(50);

    // The next model call on this worker appends; from then on a cold load is two round trips.
    const next = await worker.append(parent, entries, [user('new'), reply('new reply')]);
    store.reset();
    expect(await new Transcripts(store).load(next)).toEqual([...entries, user('new'), reply('new reply')]);
    expect(store.gets).toBe(2);
    expect(store.roundTrips).toBe(2);
  });
});

describe('store gc and checkpoints', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-ckpt-gc-'));
  });
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('keeps the checkpoints on a kept head\'s load path and removes checkpoints nothing refers to', async () => {
    const store = new FileTranscriptStore(dir);
    const kept = await conversation(new Transcripts(store, { checkpointEvery: 4 }), 45, 'kept');
    const orphan = await conversation(new Transcripts(store, { checkpointEvery: 4 }), 12, 'orphan');
    const files = async (prefix: string): Promise<string[]> => {
      const out: string[] = [];
      for (const sub of await fs.readdir(path.join(dir, prefix)).catch(() => [])) {
        for (const f of await fs.readdir(path.join(dir, prefix, sub))) out.push(`${prefix}/${sub}/${f}`);
      }
      return out.sort();
    };
    const orphanCheckpoints = (await files('checkpoints')).filter((k) => orphan.heads.some((h) => k.includes(`/${h.head}.`)));
    expect(orphanCheckpoints.length).toBe(3);

    // A history that mentions only the last head (as a model activity's result does).
    const refs = new StoreReferences();
    refs.addText(JSON.stringify({ stored: kept.heads.at(-1) }));
    const report = await sweepStore(refs, { dir, olderThanMs: 0, dryRun: false, now: Date.now() + 1000 });
    expect(report.removed.filter((k) => k.startsWith('checkpoints/')).sort()).toEqual(orphanCheckpoints);
    expect(report.removed.filter((k) => k.startsWith('transcripts/')).length).toBe(12);

    // What is left loads cold in two round trips.
    const counting = new CountingStore(new FileTranscriptStore(dir));
    expect(await new Transcripts(counting).load(kept.heads.at(-1)!)).toEqual(kept.entries);
    expect(counting.roundTrips).toBe(2);
    expect(counting.gets).toBeLessThanOrEqual(1 + 3 + 4);
  });
});

describe('Transcripts cache size (createWorker({ caches: { transcripts } }))', () => {
  async function stored(cacheSize: number | undefined, heads: number) {
    const store = new CountingStore(new MemoryTranscriptStore());
    const transcripts = new Transcripts(store, cacheSize === undefined ? {} : { cacheSize });
    let ref: TranscriptRef | null = null;
    let entries: Entry[] = [];
    const refs: TranscriptRef[] = [];
    for (let i = 0; i < heads; i++) {
      const added = [user(`u${i}`), reply(`r${i}`)];
      ref = await transcripts.append(ref, entries, added);
      entries = entries.concat(added);
      refs.push(ref);
    }
    store.reset();
    return { store, transcripts, refs };
  }

  it('keeps the last `cacheSize` transcripts: loading them reads nothing from the store, older ones are read', async () => {
    const { store, transcripts, refs } = await stored(3, 10);
    for (const ref of refs.slice(-3)) await transcripts.load(ref);
    expect(store.gets).toBe(0);
    await transcripts.load(refs[0]!);
    expect(store.gets).toBeGreaterThan(0);
  });

  it('0 keeps none (every load reads the store); the default keeps 64; a bad size is a RangeError naming it', async () => {
    const none = await stored(0, 3);
    await none.transcripts.load(none.refs.at(-1)!);
    expect(none.store.gets).toBeGreaterThan(0);
    const byDefault = await stored(undefined, 64);
    for (const ref of byDefault.refs) await byDefault.transcripts.load(ref);
    expect(byDefault.store.gets).toBe(0);
    expect(() => new Transcripts(new MemoryTranscriptStore(), { cacheSize: -1 })).toThrow(/cacheSize/);
    expect(() => new Transcripts(new MemoryTranscriptStore(), { cacheSize: 1.5 })).toThrow(/cacheSize/);
  });
});

describe('FileTranscriptStore directories', () => {
  it('a put after its directory was removed (a sweep, a cleared store) makes it again', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-store-dirs-'));
    try {
      const store = new FileTranscriptStore(path.join(dir, 'store'));
      await store.put('segments/a.json', encoder.encode('1'));
      await fs.rm(path.join(dir, 'store', 'segments'), { recursive: true });
      await store.put('segments/b.json', encoder.encode('2'));
      expect(decoder.decode((await store.get('segments/b.json'))!)).toBe('2');
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
