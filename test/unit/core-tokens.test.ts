import {
  anchoredEstimate,
  base64RunChars,
  estimateContextTokens,
  estimateEntryTokens,
  estimateTextTokens,
  estimateToolResultTokens,
  MESSAGE_OVERHEAD_TOKENS,
  usageAnchor,
} from '../../src/core/tokens';
import { renderSummaryEntry } from '../../src/core/entries';
import { call, results, say, session, summary, user } from './compaction-helpers';

const base64 = (n: number) => 'QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3ODkrLz0'.repeat(Math.ceil(n / 47)).slice(0, n);

describe('estimateTextTokens', () => {
  it('is chars/4 rounded up', () => {
    expect(estimateTextTokens('')).toBe(0);
    expect(estimateTextTokens('abc')).toBe(1);
    expect(estimateTextTokens('abcd')).toBe(1);
    expect(estimateTextTokens('abcde')).toBe(2);
  });
});

describe('estimateToolResultTokens (density-aware)', () => {
  it('counts a large base64 blob at chars/1.5', () => {
    const blob = base64(30_000);
    expect(estimateToolResultTokens(blob)).toBe(20_000);
  });

  it('counts MIME-wrapped base64 (76-char lines) as dense', () => {
    const wrapped = base64(30_000).match(/.{1,76}/g)!.join('\n');
    expect(estimateToolResultTokens(wrapped)).toBe(Math.ceil(wrapped.length / 1.5));
  });

  it('uses chars/4 below 20,000 characters, however dense', () => {
    expect(estimateToolResultTokens(base64(19_999))).toBe(5000);
  });

  it('uses chars/4 when less than 70% is base64 runs', () => {
    const prose = 'the quick brown fox, jumps. '.repeat(1000); // short words: no 64-char runs
    expect(base64RunChars(prose)).toBe(0);
    const mixed = base64(12_000) + prose.slice(0, 12_000);
    expect(estimateToolResultTokens(mixed)).toBe(Math.ceil(mixed.length / 4));
  });

  it('counts only runs of at least 64 characters', () => {
    expect(base64RunChars('a'.repeat(63) + ' ' + 'b'.repeat(64))).toBe(64);
  });
});

describe('estimateEntryTokens', () => {
  it('adds the per-message overhead', () => {
    expect(estimateEntryTokens(user('abcd'))).toBe(1 + MESSAGE_OVERHEAD_TOKENS);
    expect(estimateEntryTokens(say('abcdefgh'))).toBe(2 + MESSAGE_OVERHEAD_TOKENS);
  });

  it('counts tool_use name and JSON input, and tool results density-aware', () => {
    const c = call([['1', 'read_file', { path: 'a.ts' }]]);
    expect(estimateEntryTokens(c)).toBe(estimateTextTokens('read_file') + estimateTextTokens('{"path":"a.ts"}') + MESSAGE_OVERHEAD_TOKENS);
    expect(estimateEntryTokens(results([['1', base64(30_000)]]))).toBe(20_000 + MESSAGE_OVERHEAD_TOKENS);
  });

  it('counts a summary as its rendered text', () => {
    const s = summary();
    expect(estimateEntryTokens(s)).toBe(estimateTextTokens(renderSummaryEntry(s)) + MESSAGE_OVERHEAD_TOKENS);
  });
});

describe('estimateContextTokens', () => {
  it('splits system, tools, summaries and history', () => {
    const entries = [summary(), ...session(2)];
    const tools = [{ name: 'read_file', description: 'Reads a file', input_schema: { type: 'object' } }];
    const t = estimateContextTokens({ system: 'x'.repeat(400), tools, entries });
    expect(t.system).toBe(100);
    expect(t.tools).toBe(estimateTextTokens('read_file') + estimateTextTokens('Reads a file') + estimateTextTokens('{"type":"object"}'));
    expect(t.summaries).toBe(estimateEntryTokens(entries[0]!));
    expect(t.history).toBe(entries.slice(1).reduce((n, e) => n + estimateEntryTokens(e), 0));
    expect(t.total).toBe(t.system + t.tools + t.summaries + t.history);
  });

  it('is zero for nothing', () => {
    expect(estimateContextTokens({ entries: [] })).toEqual({ system: 0, tools: 0, summaries: 0, history: 0, total: 0 });
  });
});

describe('anchoredEstimate', () => {
  const entries = session(3); // 12 entries; entry 3 is the answer to the request holding entries 0..2

  it('anchors on reported usage plus the heuristic of entries after the response', () => {
    const anchor = { inputTokens: 5000, outputTokens: 200, entryCount: 3 };
    const after = entries.slice(4).reduce((n, e) => n + estimateEntryTokens(e), 0);
    expect(anchoredEstimate({ anchor, entries, system: 'ignored: it is inside inputTokens' })).toEqual({
      total: 5200 + after,
      method: 'usage-anchored',
    });
  });

  it('anchored on the last entry adds nothing', () => {
    const anchor = { inputTokens: 5000, outputTokens: 200, entryCount: 11 };
    expect(anchoredEstimate({ anchor, entries }).total).toBe(5200);
  });

  it('falls back to the heuristic without an anchor or when it no longer fits', () => {
    const heuristic = estimateContextTokens({ entries, system: 'sys' }).total;
    expect(anchoredEstimate({ anchor: undefined, entries, system: 'sys' })).toEqual({ total: heuristic, method: 'heuristic' });
    const stale = { inputTokens: 5000, outputTokens: 200, entryCount: 12 }; // history compacted since
    expect(anchoredEstimate({ anchor: stale, entries, system: 'sys' })).toEqual({ total: heuristic, method: 'heuristic' });
    const notAResponse = { inputTokens: 5000, outputTokens: 200, entryCount: 2 }; // a tool_results entry
    expect(anchoredEstimate({ anchor: notAResponse, entries, system: 'sys' }).method).toBe('heuristic');
  });

  it('usageAnchor counts cached prompt tokens', () => {
    expect(usageAnchor({ inputTokens: 10, outputTokens: 5, cacheReadInputTokens: 100, cacheCreationInputTokens: 7 }, 3)).toEqual({
      inputTokens: 117,
      outputTokens: 5,
      entryCount: 3,
    });
  });
});
