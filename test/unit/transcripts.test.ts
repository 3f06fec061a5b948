import { MemoryTranscriptStore } from '../../src/activities/stores/transcript-store';
import { Transcripts, transcriptHead } from '../../src/activities/stores/transcripts';
import { ToolResultStore, toolResultKey } from '../../src/activities/stores/tool-results';
import type { Entry } from '../../src/core/entries';

const user = (text: string): Entry => ({ type: 'user', text });
const reply = (text: string): Entry => ({ type: 'assistant', content: [{ type: 'text', text }] });

describe('content-addressed transcripts', () => {
  it('stores a transcript as segments and loads it back from any worker sharing the store', async () => {
    const store = new MemoryTranscriptStore();
    const a = new Transcripts(store);
    const first = await a.append(null, [], [user('hi'), reply('hello')]);
    const second = await a.append(first, [user('hi'), reply('hello')], [user('more'), reply('sure')]);
    expect(second).toEqual(transcriptHead([user('hi'), reply('hello'), user('more'), reply('sure')]));

    const b = new Transcripts(store); // another worker: nothing cached, walks the segments
    expect(await b.load(second)).toEqual([user('hi'), reply('hello'), user('more'), reply('sure')]);
    expect(await b.load({ head: second.head, count: 3 })).toBeUndefined(); // a count that does not match
    expect(await new Transcripts(new MemoryTranscriptStore()).load(second)).toBeUndefined(); // a miss
  });

  it('tool results above a size go by reference and come back whole; a missing one is a miss', async () => {
    const store = new MemoryTranscriptStore();
    const results = new ToolResultStore(store);
    expect(await results.save('short')).toBeUndefined();
    const long = 'x'.repeat(2000);
    const ref = await results.save(long);
    expect(ref).toMatch(/^[0-9a-f]{64}$/);
    const delta: Entry[] = [
      { type: 'tool_results', results: [{ type: 'tool_result', tool_use_id: 't1', content: '', contentRef: ref } as any, { type: 'tool_result', tool_use_id: 't2', content: 'inline' }] },
    ];
    expect(await results.resolve(delta)).toEqual([
      { type: 'tool_results', results: [{ type: 'tool_result', tool_use_id: 't1', content: long }, { type: 'tool_result', tool_use_id: 't2', content: 'inline' }] },
    ]);
    expect(await new ToolResultStore(new MemoryTranscriptStore()).resolve(delta)).toBeUndefined();
  });

  it('a result this worker stored is sent from memory: one store write per result, no read back', async () => {
    const store = new CountingStore();
    const results = new ToolResultStore(store);
    const long = 'y'.repeat(3000);
    const ref = (await results.save(long))!;
    const delta: Entry[] = [{ type: 'tool_results', results: [{ type: 'tool_result', tool_use_id: 't1', content: '', contentRef: ref } as any] }];
    expect(await results.resolve(delta)).toEqual([{ type: 'tool_results', results: [{ type: 'tool_result', tool_use_id: 't1', content: long }] }]);
    expect(store.ops).toEqual([`put ${toolResultKey(ref)}`]);
    // The same output again (a tool that prints the same thing): touched for a running gc, not written again.
    await results.save(long);
    expect(store.ops).toEqual([`put ${toolResultKey(ref)}`, `touch ${toolResultKey(ref)}`]);
  });

  it('another worker reads the result from the store, verified against its ref; an altered one is refused', async () => {
    const store = new CountingStore();
    const long = 'z'.repeat(3000);
    const ref = (await new ToolResultStore(store).save(long))!;
    const other = new ToolResultStore(store);
    expect(await other.read(ref)).toBe(long);
    expect(await other.read(ref)).toBe(long); // kept after the first read
    expect(store.ops.filter((o) => o.startsWith('get'))).toHaveLength(1);
    await store.put(toolResultKey(ref), new TextEncoder().encode('tampered'));
    await expect(new ToolResultStore(store).read(ref)).rejects.toMatchObject({ code: 'STORE_INTEGRITY' });
    // With the cache off every read goes to the store.
    const uncached = new ToolResultStore(store, 0);
    await expect(uncached.read(ref)).rejects.toMatchObject({ code: 'STORE_INTEGRITY' });
    expect(() => new ToolResultStore(store, -1)).toThrow('toolResults cache size must be a non-negative integer, got -1');
  });
});

/** A memory store that lists the operations made on it. */
class CountingStore extends MemoryTranscriptStore {
  readonly ops: string[] = [];
  override async get(key: string) {
    this.ops.push(`get ${key}`);
    return super.get(key);
  }
  override async put(key: string, data: Uint8Array) {
    this.ops.push(`put ${key}`);
    return super.put(key, data);
  }
  async touch(key: string) {
    this.ops.push(`touch ${key}`);
  }
}
