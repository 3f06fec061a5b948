import { MemoryTranscriptStore } from '../../src/edge/transcript-store';
import { ToolResultStore, Transcripts, transcriptHead } from '../../src/edge/transcripts';
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
});
