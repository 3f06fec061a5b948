/**
 * Files the agent read or changed, tracked from tool calls so they survive compaction verbatim and the
 * agent can re-read them afterwards.
 */
import type { Entry, FileOperations } from '../../entries';

const READ_TOOLS = new Set(['read_file']);
const MODIFY_TOOLS = new Set(['write_file', 'edit_file']);

function pathOf(input: unknown): string | undefined {
  if (input === null || typeof input !== 'object') return undefined;
  const p = (input as { path?: unknown }).path;
  return typeof p === 'string' && p.length > 0 ? p : undefined;
}

/** Sorted, deduplicated; a modified file is listed only as modified. */
function normalise(read: Iterable<string>, modified: Iterable<string>): FileOperations {
  const mod = new Set(modified);
  const rd = new Set<string>();
  for (const p of read) if (!mod.has(p)) rd.add(p);
  return { read: [...rd].sort(), modified: [...mod].sort() };
}

export function mergeFileOperations(a: FileOperations | undefined, b: FileOperations | undefined): FileOperations {
  return normalise([...(a?.read ?? []), ...(b?.read ?? [])], [...(a?.modified ?? []), ...(b?.modified ?? [])]);
}

export function trackFileOperations(entries: readonly Entry[], previous?: FileOperations): FileOperations {
  const read: string[] = [...(previous?.read ?? [])];
  const modified: string[] = [...(previous?.modified ?? [])];
  for (const e of entries) {
    if (e.type === 'summary') {
      // An older summary inside the slice already tracked its files.
      read.push(...e.files.read);
      modified.push(...e.files.modified);
      continue;
    }
    if (e.type !== 'assistant') continue;
    for (const b of e.content) {
      if (b.type !== 'tool_use') continue;
      const p = pathOf(b.input);
      if (!p) continue;
      if (READ_TOOLS.has(b.name)) read.push(p);
      else if (MODIFY_TOOLS.has(b.name)) modified.push(p);
    }
  }
  return normalise(read, modified);
}

export function fileCount(files: FileOperations): number {
  return files.read.length + files.modified.length;
}
