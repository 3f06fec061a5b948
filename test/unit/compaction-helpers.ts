/** Small builders for history entries used by the compaction unit tests. */
import type { AssistantEntry, Entry, SummaryEntry, ToolResultsEntry, UserEntry } from '../../src/core/entries';
import { InvalidCompactionSettingsError } from '../../src/core/context/compaction/errors';

export const user = (text: string): UserEntry => ({ type: 'user', text });

export const say = (text: string): AssistantEntry => ({ type: 'assistant', content: [{ type: 'text', text }] });

export const call = (calls: Array<[id: string, name: string, input: unknown]>, text?: string): AssistantEntry => ({
  type: 'assistant',
  content: [
    ...(text ? [{ type: 'text' as const, text }] : []),
    ...calls.map(([id, name, input]) => ({ type: 'tool_use' as const, id, name, input })),
  ],
});

export const results = (rs: Array<[id: string, content: string, isError?: boolean]>): ToolResultsEntry => ({
  type: 'tool_results',
  results: rs.map(([tool_use_id, content, is_error]) => ({ type: 'tool_result', tool_use_id, content, ...(is_error ? { is_error } : {}) })),
});

export const summary = (over: Partial<SummaryEntry> = {}): SummaryEntry => ({
  type: 'summary',
  summary: '## Goal\nBuild the thing\n\n## Progress\n- did a\n\n## Key Decisions\n- chose b',
  userMessages: ['build the thing'],
  files: { read: ['old.ts'], modified: [] },
  compactedEntries: 10,
  fallback: false,
  ...over,
});

/** A plain session: n turns of user → read_file call → result → answer (4 entries per turn). */
export function session(turns: number): Entry[] {
  const out: Entry[] = [];
  for (let t = 0; t < turns; t++) {
    out.push(user(`question ${t}`));
    out.push(call([[`t${t}`, 'read_file', { path: `src/f${t}.ts` }]]));
    out.push(results([[`t${t}`, `contents of f${t}`]]));
    out.push(say(`answer ${t}`));
  }
  return out;
}

/** The setting an InvalidCompactionSettingsError names (undefined: `fn` did not throw). */
export function fieldOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidCompactionSettingsError);
    return (err as InvalidCompactionSettingsError).field;
  }
  return undefined;
}
