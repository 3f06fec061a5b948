import { findCut, splitForCompaction } from '../../src/core/context/compaction/cut';
import { call, results, say, session, summary, user } from './compaction-helpers';

describe('findCut', () => {
  it('keeps the last keepRecentEntries entries', () => {
    const entries = [user('a'), say('b'), user('c'), say('d'), user('e')];
    expect(findCut(entries, 2)).toBe(3);
    expect(findCut(entries, 4)).toBe(1);
  });

  it('returns 0 when everything fits in the keep window', () => {
    expect(findCut([user('a'), say('b')], 2)).toBe(0);
    expect(findCut([user('a'), say('b')], 5)).toBe(0);
    expect(findCut([], 1)).toBe(0);
  });

  it('never starts the kept window with tool results', () => {
    const entries = session(3); // u, call, results, answer × 3
    // keep 2 → would start at index 10 (results of turn 2): pulled back to its call at 9.
    expect(findCut(entries, 2)).toBe(9);
    expect(entries[9]!.type).toBe('assistant');
  });

  it('moves back over a run of tool pairs', () => {
    const entries = [
      user('go'),
      call([['1', 'read_file', { path: 'a' }]]),
      results([['1', 'x']]),
      call([['2', 'read_file', { path: 'b' }]]),
      results([['2', 'y']]),
      say('done'),
    ];
    expect(findCut(entries, 2)).toBe(3);
  });

  it('returns 0 when pulling back reaches the start', () => {
    const entries = [call([['1', 'read_file', {}]]), results([['1', 'x']])];
    expect(findCut(entries, 1)).toBe(0);
  });

  it('does not re-summarise a leading summary alone', () => {
    const entries = [summary(), user('a'), say('b')];
    expect(findCut(entries, 2)).toBe(0);
    expect(findCut([summary(), user('a'), say('b'), user('c')], 2)).toBe(2);
  });

  it('treats keep < 1 as 1', () => {
    expect(findCut([user('a'), say('b')], 0)).toBe(1);
  });
});

describe('splitForCompaction', () => {
  it('splits off a leading summary as previousSummary', () => {
    const prev = summary();
    const entries = [prev, user('a'), say('b'), user('c'), say('d')];
    const s = splitForCompaction(entries, 2);
    expect(s.cut).toBe(3);
    expect(s.previousSummary).toBe(prev);
    expect(s.toCompact).toEqual([user('a'), say('b')]);
    expect(s.kept).toEqual([user('c'), say('d')]);
  });

  it('compacts nothing when the cut is 0', () => {
    const entries = [user('a'), say('b')];
    expect(splitForCompaction(entries, 5)).toEqual({ toCompact: [], kept: entries, cut: 0 });
  });
});
