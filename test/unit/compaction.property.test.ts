/**
 * Property tests: thousands of generated, API-valid histories compacted at random keepRecentEntries.
 * Whatever the history, compaction must leave a valid API conversation, keep every tool pair whole,
 * keep the recent window verbatim, and never lose a tracked file.
 */
import fc from 'fast-check';
import { applyCompaction, buildSummaryEntry } from '../../src/core/context/compaction/build';
import { findCut, splitForCompaction } from '../../src/core/context/compaction/cut';
import { decideCompaction } from '../../src/core/context/compaction/decide';
import { fallbackSummary } from '../../src/core/context/compaction/fallback';
import { trackFileOperations } from '../../src/core/context/compaction/files';
import { renderEntriesForSummary } from '../../src/core/context/compaction/render';
import { planSummaryChunks } from '../../src/core/context/compaction/summary-prompt';
import { toApiMessages, type Entry, type FileOperations, type SummaryEntry } from '../../src/core/entries';
import { hashEntry } from '../../src/core/hash';
import { estimateTextTokens } from '../../src/core/tokens';
import { validateMessagesRequest } from '../../src/testing/anthropic/fake-anthropic';

// ---- generators -------------------------------------------------------------------------------

const text = fc.oneof(
  { weight: 4, arbitrary: fc.string({ minLength: 1, maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 20 }) },
  // Long texts (past the 500-char render cut), built by repetition: generating 900 random chars is slow.
  { weight: 1, arbitrary: fc.tuple(fc.string({ minLength: 5, maxLength: 30 }), fc.integer({ min: 20, max: 60 })).map(([s, n]) => s.repeat(n)) },
);
/** What a user types: never blank (a blank prompt is the caller's bug, and the API refuses it). */
const userText = text.map((s) => (s.trim().length > 0 ? s : `${s}x`));
/** What a model replies: also empty and whitespace-only text, which real models send (e.g. "\n\n"). */
const replyText = fc.oneof({ weight: 4, arbitrary: text }, { weight: 1, arbitrary: fc.constantFrom('', '\n\n', ' ', '\t\n ') });
const path = fc.constantFrom('src/a.ts', 'src/b.ts', 'README.md', 'lib/x/y.js', 'pkg.json');
const toolCall = fc.record({
  name: fc.constantFrom('read_file', 'read_file', 'write_file', 'edit_file', 'bash'),
  path,
  isError: fc.boolean(),
  result: text,
});
const round = fc.record({
  calls: fc.array(toolCall, { minLength: 1, maxLength: 3 }),
  text: fc.option(replyText, { nil: undefined }),
  interjection: fc.option(userText, { freq: 5, nil: undefined }), // a user message sent while tools ran
});
const turn = fc.record({
  user: userText,
  rounds: fc.array(round, { maxLength: 3 }),
  answer: fc.option(replyText, { freq: 6, nil: undefined }),
});
const leadingSummary = fc.record({
  summary: text,
  userMessages: fc.array(userText, { maxLength: 3 }),
  read: fc.uniqueArray(path, { maxLength: 3 }),
  modified: fc.uniqueArray(path, { maxLength: 2 }),
  compactedEntries: fc.integer({ min: 1, max: 500 }),
  dropFirstUser: fc.boolean(), // after an earlier compaction the kept window may start with the assistant
});
const historySpec = fc.record({ lead: fc.option(leadingSummary, { freq: 3, nil: undefined }), turns: fc.array(turn, { minLength: 1, maxLength: 12 }) });

type Turn = typeof turn extends fc.Arbitrary<infer T> ? T : never;
type HistorySpec = typeof historySpec extends fc.Arbitrary<infer T> ? T : never;

const isBlankReply = (t: string | undefined) => t !== undefined && t.trim().length === 0;

function appendTurns(out: Entry[], turns: Turn[], ids: { n: number }, skipFirstUser = false): void {
  turns.forEach((t, ti) => {
    if (!(skipFirstUser && ti === 0)) out.push({ type: 'user', text: t.user });
    for (const r of t.rounds) {
      if (isBlankReply(r.text)) stats.blankReplies++;
      const calls = r.calls.map((c) => ({ ...c, id: `toolu_${ids.n++}` }));
      out.push({
        type: 'assistant',
        content: [
          ...(r.text !== undefined ? [{ type: 'text' as const, text: r.text }] : []),
          ...calls.map((c) => ({ type: 'tool_use' as const, id: c.id, name: c.name, input: c.name === 'bash' ? { command: 'ls' } : { path: c.path } })),
        ],
      });
      out.push({
        type: 'tool_results',
        results: calls.map((c) => ({ type: 'tool_result' as const, tool_use_id: c.id, content: c.result, ...(c.isError ? { is_error: true } : {}) })),
      });
      if (r.interjection !== undefined) out.push({ type: 'user', text: r.interjection });
    }
    if (isBlankReply(t.answer)) stats.blankReplies++;
    if (t.answer !== undefined) out.push({ type: 'assistant', content: [{ type: 'text', text: t.answer }] });
  });
}

function buildHistory(spec: HistorySpec, ids = { n: 0 }): Entry[] {
  const out: Entry[] = [];
  const lead = spec.lead;
  if (lead) {
    const modified = lead.modified;
    out.push({
      type: 'summary',
      summary: `## Goal\n${lead.summary}`,
      userMessages: lead.userMessages,
      files: { read: lead.read.filter((p) => !modified.includes(p)).sort(), modified: [...modified].sort() },
      compactedEntries: lead.compactedEntries,
      fallback: true,
    });
  }
  // Dropping the first user only makes sense when the first turn starts with a tool round.
  appendTurns(out, spec.turns, ids, !!lead?.dropFirstUser && spec.turns[0]!.rounds.length > 0);
  return out;
}

// ---- helpers ----------------------------------------------------------------------------------

/**
 * Why the real API would refuse this history as a request (undefined: it would take it), judged by the
 * fake server's validator rather than the SDK's own checks, so the two cannot share a blind spot.
 */
function apiProblem(entries: readonly Entry[]): string | undefined {
  return validateMessagesRequest({ model: 'claude-prop', max_tokens: 1, messages: toApiMessages(entries) });
}

/** A plain assertion: jest's expect() is too slow for the inner loops of thousands of runs. */
function check(cond: boolean, what: string): asserts cond {
  if (!cond) throw new Error(`property violated: ${what}`);
}

function sameMembers(a: Iterable<string>, b: Iterable<string>): boolean {
  const sa = new Set(a);
  const sb = new Set(b);
  return sa.size === sb.size && [...sa].every((x) => sb.has(x));
}

const fileSet = (f: FileOperations) => new Set([...f.read, ...f.modified]);

function toolIds(entries: readonly Entry[]): { uses: string[]; results: string[] } {
  const uses: string[] = [];
  const results: string[] = [];
  for (const e of entries) {
    if (e.type === 'assistant') for (const b of e.content) if (b.type === 'tool_use') uses.push(b.id);
    if (e.type === 'tool_results') for (const r of e.results) results.push(r.tool_use_id);
  }
  return { uses, results };
}

/** Reference cut: the largest k <= n - keep that does not start on tool results and compacts something. */
function referenceCut(entries: readonly Entry[], keep: number): number {
  const min = entries[0]?.type === 'summary' ? 2 : 1;
  for (let k = entries.length - keep; k >= min; k--) if (entries[k]!.type !== 'tool_results') return k;
  return 0;
}

/** One compaction with the deterministic fallback, checked against every invariant. */
function compactAndCheck(entries: Entry[], keep: number, userMessageBudgetTokens?: number): Entry[] {
  const before = apiProblem(entries);
  check(before === undefined, `generated history is invalid: ${before}`);

  const split = splitForCompaction(entries, keep);
  check(split.cut === referenceCut(entries, keep), `cut ${split.cut} != reference ${referenceCut(entries, keep)}`);
  check(findCut(entries, keep) === split.cut, 'findCut agrees with splitForCompaction');
  if (split.cut === 0) {
    check(split.kept.length === entries.length && split.toCompact.length === 0, 'nothing compacted when cut is 0');
    return entries;
  }
  const prev = split.previousSummary;
  check(split.kept.length >= keep, 'at least keepRecentEntries are kept');
  check(split.toCompact.length > 0, 'something is compacted');
  const parts = [...(prev ? [prev] : []), ...split.toCompact, ...split.kept];
  check(parts.length === entries.length && parts.every((e, i) => e === entries[i]), 'the split partitions the history in order');

  const files = trackFileOperations(split.toCompact, prev?.files);
  const text = fallbackSummary(split.toCompact, prev, files);
  const summary = buildSummaryEntry({ summaryText: text, toCompact: split.toCompact, previousSummary: prev, files, fallback: true, userMessageBudgetTokens });
  stats.compacted++;
  if (prev) stats.folded++;
  const result = applyCompaction(entries, split.cut, summary);

  // Valid for the API.
  const problems = apiProblem(result);
  check(problems === undefined, `compacted history is invalid: ${problems}`);

  // The kept window is verbatim (same objects, same order), after exactly one summary entry.
  check(result[0] === summary, 'the summary comes first');
  check(result.length === 1 + entries.length - split.cut, 'one summary plus the kept window');
  check(result.slice(1).every((e, i) => e === entries[split.cut + i]), 'the kept window is verbatim');
  check(!result.slice(1).some((e) => e.type === 'summary'), 'only one summary entry');

  // No tool pair lost or split: every tool_use of the kept window is answered, and vice versa.
  const kept = toolIds(split.kept);
  check(sameMembers(kept.uses, kept.results), 'kept tool uses and results pair up');
  const after = toolIds(result);
  check(sameMembers(after.uses, kept.uses) && after.uses.length === kept.uses.length, 'every kept tool pair survives');

  // Every user message of the kept window is still sent verbatim.
  const sentTexts = new Set(toApiMessages(result).flatMap((m) => m.content.flatMap((b) => (b.type === 'text' ? [b.text] : []))));
  for (const e of split.kept) if (e.type === 'user') check(sentTexts.has(e.text), 'kept user message is sent verbatim');

  // Carried user messages are verbatim copies, or an original's head with a truncation marker.
  const originals = new Set([...split.toCompact.flatMap((e) => (e.type === 'user' ? [e.text] : [])), ...(prev?.userMessages ?? [])]);
  summary.userMessages.forEach((m) => {
    if (originals.has(m)) return;
    const cut = /…\[truncated \d+ chars\]$/.exec(m);
    const head = cut ? m.slice(0, cut.index) : undefined;
    check(head !== undefined && [...originals].some((o) => o.startsWith(head)), 'a carried message is an original or its head with a marker');
    stats.truncated++;
  });

  // No tracked file is lost: the compacted slice's files are in the summary, and overall after ⊇ before.
  const summaryFiles = fileSet(summary.files);
  for (const f of fileSet(files)) check(summaryFiles.has(f), `file ${f} of the slice is in the summary`);
  const afterFiles = fileSet(trackFileOperations(result));
  for (const f of fileSet(trackFileOperations(entries))) check(afterFiles.has(f), `file ${f} is still tracked`);
  check(!summary.files.read.some((p) => summary.files.modified.includes(p)), 'a modified file is not also listed as read');

  // Accounting, and determinism (it runs in the workflow sandbox).
  check(summary.compactedEntries === split.toCompact.length + (prev?.compactedEntries ?? 0), 'compactedEntries accounting');
  const again = buildSummaryEntry({
    summaryText: fallbackSummary(split.toCompact, prev, trackFileOperations(split.toCompact, prev?.files)),
    toCompact: split.toCompact,
    previousSummary: prev,
    files,
    fallback: true,
    userMessageBudgetTokens,
  });
  check(hashEntry(again) === hashEntry(summary), 'compaction is deterministic');
  return result;
}

// ---- properties -------------------------------------------------------------------------------

/** Coverage counters: the properties are only worth something if these paths are actually taken. */
const stats = { compacted: 0, folded: 0, truncated: 0, blankReplies: 0 };
afterAll(() => {
  expect(stats.blankReplies).toBeGreaterThan(500);
  expect(stats.compacted).toBeGreaterThan(1000);
  expect(stats.folded).toBeGreaterThan(200);
  expect(stats.truncated).toBeGreaterThan(5);
});

describe('compaction properties', () => {
  it('a single compaction keeps every invariant', () => {
    fc.assert(
      fc.property(historySpec, fc.integer({ min: 1, max: 30 }), fc.option(fc.integer({ min: 0, max: 600 }), { nil: undefined }), (spec, keep, budget) => {
        compactAndCheck(buildHistory(spec), keep, budget);
      }),
      { numRuns: 2000 },
    );
  });

  it('repeated compaction (summary of a summary) keeps every invariant', () => {
    fc.assert(
      fc.property(
        historySpec,
        fc.array(fc.tuple(fc.array(turn, { minLength: 1, maxLength: 5 }), fc.integer({ min: 1, max: 12 })), { minLength: 1, maxLength: 3 }),
        fc.integer({ min: 1, max: 12 }),
        (spec, rounds, keep) => {
          const ids = { n: 0 };
          let entries = compactAndCheck(buildHistory(spec, ids), keep);
          for (const [turns, k] of rounds) {
            const next = [...entries];
            appendTurns(next, turns, ids);
            const prev = next[0]?.type === 'summary' ? (next[0] as SummaryEntry) : undefined;
            entries = compactAndCheck(next, k);
            // A fold never loses what the earlier summary stood for.
            if (prev && entries[0] !== prev && entries[0]!.type === 'summary') {
              check(entries[0].compactedEntries > prev.compactedEntries, 'a fold counts the earlier summary');
            }
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('summary chunks fit the budget and join back to the rendered slice', () => {
    fc.assert(
      fc.property(historySpec, fc.integer({ min: 8, max: 400 }), fc.integer({ min: 0, max: 100 }), (spec, budget, overhead) => {
        const rendered = renderEntriesForSummary(buildHistory(spec));
        const chunks = planSummaryChunks(rendered, budget + overhead, overhead);
        check(chunks.join('') === rendered, 'chunks join back to the slice');
        for (const c of chunks) check(c.length > 0 && estimateTextTokens(c) <= budget, 'every chunk fits the budget');
      }),
      { numRuns: 500 },
    );
  });

  it('a threshold decision to compact always has something to compact', () => {
    fc.assert(
      fc.property(historySpec, fc.integer({ min: 1, max: 30 }), fc.integer({ min: 1, max: 5000 }), (spec, keep, threshold) => {
        const entries = buildHistory(spec);
        const d = decideCompaction({
          entries,
          settings: { enabled: true, compactAtTokens: threshold, reserveTokens: 0, keepRecentEntries: keep, recoverFromOverflow: true, contextWindowTokens: 5000 },
        });
        check(d.compact === (d.estimatedTokens > threshold && d.cut > 0), 'compact iff over the threshold with a cut');
        if (d.compact) check(d.keptEntries >= keep, 'keeps the recent window');
        check(d.keptEntries + d.cut === entries.length, 'kept + cut = all');
      }),
      { numRuns: 500 },
    );
  });
});
