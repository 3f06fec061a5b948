import {
  buildSummaryRequest,
  finalizeSummaryText,
  planSummaryChunks,
  stripFileOperationsSection,
  SUMMARIZER_SYSTEM_PROMPT,
  SUMMARY_SECTIONS,
} from '../../src/core/context/compaction/summary-prompt';
import { renderEntriesForSummary } from '../../src/core/context/compaction/render';
import { estimateTextTokens } from '../../src/core/tokens';
import { session } from './compaction-helpers';

const files = { read: ['a.ts'], modified: ['b.ts'] };

describe('summary prompt', () => {
  it('has the routing marker on its first line and names every section', () => {
    expect(SUMMARIZER_SYSTEM_PROMPT.split('\n')[0]).toContain('[fabric-harness:summarize]');
    expect(SUMMARY_SECTIONS).toEqual(['Goal', 'Progress', 'Key Decisions', 'Failed Approaches', 'Open Issues', 'Next Steps', 'File Operations']);
    for (const s of SUMMARY_SECTIONS) expect(SUMMARIZER_SYSTEM_PROMPT).toContain(s);
  });

  it('asks for a fresh summary without a previous one', () => {
    const r = buildSummaryRequest({ renderedSlice: 'User: hi', files });
    expect(r.system).toBe(SUMMARIZER_SYSTEM_PROMPT);
    expect(r.userText).toContain('<conversation>\nUser: hi\n</conversation>');
    expect(r.userText).toContain('## File Operations\nRead: a.ts\nModified: b.ts');
    expect(r.userText).not.toMatch(/UPDATE/);
  });

  it('asks to UPDATE a previous summary', () => {
    const r = buildSummaryRequest({ renderedSlice: 'User: more', previousSummary: '## Goal\nX', files: { read: [], modified: [] } });
    expect(r.userText).toMatch(/UPDATE the existing summary/);
    expect(r.userText).toContain('<existing-summary>\n## Goal\nX\n</existing-summary>');
    expect(r.userText).toContain('<new-conversation>\nUser: more\n</new-conversation>');
    expect(r.userText).toContain('## File Operations\nNone.');
  });
});

describe('planSummaryChunks', () => {
  it('returns one chunk when it fits, none for empty input', () => {
    expect(planSummaryChunks('abc', 10)).toEqual(['abc']);
    expect(planSummaryChunks('', 10)).toEqual([]);
  });

  it('splits on entry boundaries, each chunk within budget, joining back exactly', () => {
    const rendered = renderEntriesForSummary(session(50));
    const chunks = planSummaryChunks(rendered, 100);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.join('')).toBe(rendered);
    for (const c of chunks) expect(estimateTextTokens(c)).toBeLessThanOrEqual(100);
    // Every chunk but the last ends on an entry boundary.
    for (const c of chunks.slice(0, -1)) expect(c.endsWith('\n\n')).toBe(true);
  });

  it('subtracts prompt overhead from the budget', () => {
    const rendered = renderEntriesForSummary(session(50));
    for (const c of planSummaryChunks(rendered, 150, 50)) expect(estimateTextTokens(c)).toBeLessThanOrEqual(100);
  });

  it('hard-splits a single huge line', () => {
    const line = 'User: ' + 'q'.repeat(10_000);
    const chunks = planSummaryChunks(`User: a\n\n${line}\n\nUser: b`, 50);
    expect(chunks.join('')).toBe(`User: a\n\n${line}\n\nUser: b`);
    for (const c of chunks) expect(c.length).toBeLessThanOrEqual(200);
  });

  it('rejects a budget that leaves no room', () => {
    expect(() => planSummaryChunks('abc', 10, 10)).toThrow(RangeError);
  });
});

describe('finalizeSummaryText', () => {
  it('replaces whatever the model wrote under File Operations with the tracked block, last', () => {
    const model = '## Goal\nG\n\n## File Operations\n- made up.ts\n\n## Next Steps\n- N';
    const out = finalizeSummaryText(model, files);
    expect(out).toBe('## Goal\nG\n\n## Next Steps\n- N\n\n## File Operations\nRead: a.ts\nModified: b.ts');
  });

  it('handles bold headings, repeats and a missing section', () => {
    expect(finalizeSummaryText('**File Operations:**\njunk\n## Goal\nG\n### File Operations\nmore junk', files)).toBe(
      '## Goal\nG\n\n## File Operations\nRead: a.ts\nModified: b.ts',
    );
    expect(finalizeSummaryText('## Goal\nG', { read: [], modified: [] })).toBe('## Goal\nG\n\n## File Operations\nNone.');
  });

  it('stripFileOperationsSection removes only that section', () => {
    expect(stripFileOperationsSection('## Goal\nG\n\n## File Operations\nRead: a')).toBe('## Goal\nG');
    expect(stripFileOperationsSection('## Goal\nG')).toBe('## Goal\nG');
  });
});
