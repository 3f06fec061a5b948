import { renderEntriesForSummary, truncateWithMarker } from '../../src/core/context/compaction/render';
import { call, results, say, summary, user } from './compaction-helpers';

describe('renderEntriesForSummary', () => {
  it('renders each kind of entry readably, separated by blank lines', () => {
    const text = renderEntriesForSummary([
      user('fix the bug'),
      call([['1', 'read_file', { path: 'src/a.ts' }]], 'Looking.'),
      results([['1', 'export const a = 1;']]),
      call([['2', 'edit_file', { path: 'src/a.ts' }]]),
      results([['2', 'no such line', true]]),
      say('Done.'),
    ]);
    expect(text).toBe(
      [
        'User: fix the bug',
        'Assistant: Looking.\nTool call read_file({"path":"src/a.ts"})',
        'Tool result: export const a = 1;',
        'Tool call edit_file({"path":"src/a.ts"})',
        'Tool result (error): no such line',
        'Assistant: Done.',
      ].join('\n\n'),
    );
  });

  it('truncates tool arguments and results to 500 chars with a marker', () => {
    const big = 'x'.repeat(1200);
    const text = renderEntriesForSummary([call([['1', 'write_file', { content: big }]]), results([['1', big]])]);
    expect(text).toContain(`Tool result: ${'x'.repeat(500)}…[truncated 700 chars]`);
    const argJson = JSON.stringify({ content: big });
    expect(text).toContain(`…[truncated ${argJson.length - 500} chars])`);
  });

  it('does not truncate user or assistant text', () => {
    const long = 'y'.repeat(2000);
    expect(renderEntriesForSummary([user(long)])).toBe(`User: ${long}`);
  });

  it('renders a non-leading summary entry', () => {
    expect(renderEntriesForSummary([summary()])).toContain('[Context Summary]');
  });
});

describe('truncateWithMarker', () => {
  it('leaves short text alone and keeps surrogate pairs whole', () => {
    expect(truncateWithMarker('abc', 3)).toBe('abc');
    expect(truncateWithMarker('a😀b', 2)).toBe('a…[truncated 3 chars]');
  });
});
