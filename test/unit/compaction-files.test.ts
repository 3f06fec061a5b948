import { fileCount, mergeFileOperations, trackFileOperations } from '../../src/core/context/compaction/files';
import { call, results, summary } from './compaction-helpers';

describe('trackFileOperations', () => {
  it('tracks reads and modifications from tool calls, sorted and deduplicated', () => {
    const files = trackFileOperations([
      call([
        ['1', 'read_file', { path: 'b.ts' }],
        ['2', 'read_file', { path: 'a.ts' }],
      ]),
      results([
        ['1', ''],
        ['2', ''],
      ]),
      call([['3', 'write_file', { path: 'c.ts', content: '' }]]),
      call([['4', 'edit_file', { path: 'a.ts' }]]),
      call([['5', 'read_file', { path: 'b.ts' }]]),
      call([['6', 'bash', { command: 'ls' }]]),
      call([['7', 'read_file', {}]]),
    ]);
    expect(files).toEqual({ read: ['b.ts'], modified: ['a.ts', 'c.ts'] });
    expect(fileCount(files)).toBe(3);
  });

  it('merges previous operations; a file modified later is no longer listed as read', () => {
    const files = trackFileOperations([call([['1', 'edit_file', { path: 'old.ts' }]])], { read: ['old.ts', 'z.ts'], modified: ['m.ts'] });
    expect(files).toEqual({ read: ['z.ts'], modified: ['m.ts', 'old.ts'] });
  });

  it('includes files of a summary entry inside the slice', () => {
    expect(trackFileOperations([summary({ files: { read: ['r'], modified: ['m'] } })])).toEqual({ read: ['r'], modified: ['m'] });
  });

  it('mergeFileOperations is a normalising union', () => {
    expect(mergeFileOperations({ read: ['a', 'b'], modified: [] }, { read: ['a'], modified: ['b'] })).toEqual({ read: ['a'], modified: ['b'] });
    expect(mergeFileOperations(undefined, undefined)).toEqual({ read: [], modified: [] });
  });
});
