/**
 * What survives: given the entries a model would be sent after a strategy ran, which of the session's
 * instructions, files, open errors and last verification evidence are still there, verbatim or
 * recognisably (same text after collapsing whitespace; a path as a whole word). Pure.
 */
import { renderSummaryEntry, type Entry } from '../../src/core/entries';
import type { SessionTruth } from './session';

export interface Survival {
  instructions: { kept: number; total: number; lost: string[] };
  files: { kept: number; total: number; lost: string[] };
  openErrors: { kept: number; total: number; lost: string[] };
  /** True when every verdict line of the last test/type-check run is in view (false when there was none). */
  lastEvidence: boolean;
}

/** Everything the model reads, as one string: user text, assistant text and tool inputs, results, summaries. */
export function visibleText(entries: readonly Entry[]): string {
  const parts: string[] = [];
  for (const e of entries) {
    switch (e.type) {
      case 'user':
        parts.push(e.text);
        break;
      case 'assistant':
        for (const b of e.content) {
          if (b.type === 'text') parts.push(b.text);
          else if (b.type === 'tool_use') parts.push(`${b.name} ${JSON.stringify(b.input)}`);
          // Thinking is not what the next call's reader is scored on.
        }
        break;
      case 'tool_results':
        for (const r of e.results) parts.push(r.content);
        break;
      case 'summary':
        parts.push(renderSummaryEntry(e));
        break;
    }
  }
  return normalise(parts.join('\n'));
}

function normalise(text: string): string {
  return text.replace(/\s+/g, ' ');
}

function containsText(haystack: string, needle: string): boolean {
  return haystack.includes(normalise(needle).trim());
}

/** A path counts only as a whole word: `src/a.ts` is not in view because `src/a.tsx` is. */
function containsPath(haystack: string, path: string): boolean {
  const escaped = path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(?<![\\w./-])${escaped}(?![\\w/-]|\\.\\w)`).test(haystack);
}

function tally(items: readonly string[], present: (item: string) => boolean): { kept: number; total: number; lost: string[] } {
  const lost = items.filter((i) => !present(i));
  return { kept: items.length - lost.length, total: items.length, lost };
}

export function survival(entriesAfter: readonly Entry[], truth: SessionTruth): Survival {
  const text = visibleText(entriesAfter);
  const evidence = truth.lastEvidence;
  return {
    instructions: tally(truth.instructions, (i) => containsText(text, i)),
    files: tally(truth.files, (p) => containsPath(text, p)),
    openErrors: tally(
      truth.openErrors.map((e) => e.signature),
      (sig) => containsText(text, sig),
    ),
    lastEvidence: evidence !== undefined && evidence.signature.every((line) => containsText(text, line)),
  };
}
