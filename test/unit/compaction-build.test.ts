import { applyCompaction, buildSummaryEntry } from '../../src/core/context/compaction/build';
import { splitForCompaction } from '../../src/core/context/compaction/cut';
import { renderSummaryEntry } from '../../src/core/entries';
import { say, summary, user } from './compaction-helpers';

describe('buildSummaryEntry / applyCompaction', () => {
  it('builds a summary entry standing for the slice and the previous summary', () => {
    const prev = summary({ compactedEntries: 10, userMessages: ['build the thing'], files: { read: ['old.ts'], modified: [] } });
    const entries = [prev, user('a'), say('b'), user('c'), say('d'), user('e')];
    const split = splitForCompaction(entries, 1);
    const entry = buildSummaryEntry({
      summaryText: '## Goal\nG\n\n## File Operations\nRead: old.ts, x.ts',
      toCompact: split.toCompact,
      previousSummary: split.previousSummary,
      files: { read: ['x.ts'], modified: [] },
      fallback: false,
    });
    expect(entry).toEqual({
      type: 'summary',
      summary: '## Goal\nG',
      userMessages: ['c', 'a', 'build the thing'],
      files: { read: ['old.ts', 'x.ts'], modified: [] },
      compactedEntries: 14,
      fallback: false,
    });
    // The File Operations block appears exactly once in what the model sees.
    expect(renderSummaryEntry(entry).match(/## File Operations/g)).toHaveLength(1);
    const next = applyCompaction(entries, split.cut, entry);
    expect(next).toEqual([entry, user('e')]);
  });

  it('does not count a previous summary passed inside toCompact twice', () => {
    const prev = summary({ compactedEntries: 3 });
    const entry = buildSummaryEntry({ summaryText: 'S', toCompact: [prev, user('a')], previousSummary: prev, files: { read: [], modified: [] }, fallback: true });
    expect(entry.compactedEntries).toBe(4);
    expect(entry.fallback).toBe(true);
  });

  it('respects the user message budget', () => {
    const entry = buildSummaryEntry({ summaryText: 'S', toCompact: [user('x'.repeat(400)), user('y'.repeat(400))], files: { read: [], modified: [] }, fallback: true, userMessageBudgetTokens: 100 });
    // The newest message may take half the budget: its head, with a marker; the older one no longer fits.
    expect(entry.userMessages).toHaveLength(1);
    expect(entry.userMessages[0]).toMatch(/^y+…\[truncated \d+ chars\]$/);
  });
});
