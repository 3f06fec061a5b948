import { extractSection, fallbackSummary } from '../../src/core/context/compaction/fallback';
import { SUMMARY_SECTIONS } from '../../src/core/context/compaction/summary-prompt';
import { call, results, say, summary, user } from './compaction-helpers';

const slice = [
  user('Add a /health endpoint'),
  call([['1', 'read_file', { path: 'src/server.ts' }]], 'Let me look.'),
  results([['1', 'const app = express();']]),
  call([['2', 'edit_file', { path: 'src/server.ts', old: 'x' }]]),
  results([['2', 'old text not found', true]]),
  say('Edit failed; next I will retry with the right anchor.'),
];
const files = { read: [], modified: ['src/server.ts'] };

describe('fallbackSummary', () => {
  it('has every section, in order, built from the entries', () => {
    const text = fallbackSummary(slice, undefined, files);
    const headings = text.split('\n').filter((l) => l.startsWith('## ')).map((l) => l.slice(3));
    expect(headings).toEqual([...SUMMARY_SECTIONS]);
    expect(extractSection(text, 'Goal')).toBe('Add a /health endpoint');
    expect(extractSection(text, 'Progress')).toContain('- Called read_file(src/server.ts)');
    expect(extractSection(text, 'Progress')).toContain('- Assistant: Let me look.');
    expect(extractSection(text, 'Failed Approaches')).toBe('- edit_file(src/server.ts) failed: old text not found');
    expect(extractSection(text, 'Open Issues')).toContain('Edit failed; next I will retry');
    expect(extractSection(text, 'Next Steps')).toContain('Edit failed; next I will retry');
    expect(text.endsWith('## File Operations\nModified: src/server.ts')).toBe(true);
  });

  it('is deterministic', () => {
    expect(fallbackSummary(slice, undefined, files)).toBe(fallbackSummary(slice, undefined, files));
  });

  it('takes the goal from the previous summary and carries its sections', () => {
    const prev = summary();
    const text = fallbackSummary([user('now do Y'), say('ok')], prev, files);
    expect(extractSection(text, 'Goal')).toBe('Build the thing');
    expect(extractSection(text, 'Progress')).toBe('- did a\n- Assistant: ok');
    expect(extractSection(text, 'Key Decisions')).toBe('- chose b');
  });

  it('caps long lists', () => {
    const many = Array.from({ length: 200 }, (_, i) => say(`step ${i}`));
    const progress = extractSection(fallbackSummary(many, undefined, files), 'Progress')!;
    expect(progress.split('\n')).toHaveLength(41);
    expect(progress).toContain('160 earlier items omitted');
    expect(progress).toContain('step 199');
  });

  it('copes with an empty slice', () => {
    expect(extractSection(fallbackSummary([], undefined, { read: [], modified: [] }), 'Goal')).toBe('Not recorded.');
  });
});
