/**
 * The compaction gate: facts computed from the replaced slice, a summary checked against them, what is
 * missing restated verbatim (or re-asked once), pinned text and the resume block; and a deliberately
 * broken gate (one that skips a kind) failing the same check.
 */
import type { Entry, SummaryEntry } from '../../src/core/entries';
import { renderSummaryEntry } from '../../src/core/entries';
import { factsToKeep, FACT_KINDS, type Fact } from '../../src/core/context/compaction/facts';
import { checkSummary, describeGate, factKept, restatable, RESTATED_HEADING, type GateCheckInput } from '../../src/core/context/compaction/gate';
import { gateCompaction, resolveGate } from '../../src/core/context/compaction/gate-step';
import { RESUME_HEADING } from '../../src/core/context/compaction/resume';
import { parseCompactionSettings } from '../../src/core/context/settings';
import type { CompactOutcome } from '../../src/core/context/compaction/compact';
import type { RuntimePorts } from '../../src/core/ports';
import { call, fieldOf, results, say, user } from './compaction-helpers';

/** A slice with one fact of every kind, then two kept entries that still name `parseLedgerRow`. */
function history(): Entry[] {
  return [
    user('Fix the ledger import.\nAlways run `npm test` before you commit. Never touch the migrations folder.'),
    call([['c1', 'edit_file', { path: 'src/ledger/import.ts', old: 'a', new: 'b' }]], 'I will edit parseLedgerRow first.'),
    results([['c1', 'ok']]),
    call([['c2', 'bash', { command: 'npm test' }]]),
    results([['c2', 'FAIL test/ledger.test.ts\nExpected 3 rows, received 2', true]]),
    user('Yes, go with the streaming parser.'),
    say('The streaming parser drops the last row. Next I will fix the off-by-one in parseLedgerRow and rerun npm test.'),
    // kept:
    user('how is it going?'),
    say('Still on parseLedgerRow.'),
  ];
}
const CUT = 7;

describe('factsToKeep', () => {
  it('finds rules, the open error, edited files, decisions, identifiers later entries use, the task and the next step', () => {
    const h = history();
    const facts = factsToKeep(h.slice(0, CUT), { kept: h.slice(CUT) });
    const of = (kind: Fact['kind']) => facts.filter((f) => f.kind === kind).map((f) => f.text);
    expect(of('rule')).toEqual(['Always run `npm test` before you commit.', 'Never touch the migrations folder.']);
    expect(of('error')).toEqual(['FAIL test/ledger.test.ts']);
    expect(of('file')).toEqual(['src/ledger/import.ts']);
    expect(of('decision')).toEqual(['Yes, go with the streaming parser.']);
    expect(of('identifier')).toContain('parseLedgerRow');
    expect(of('task')).toEqual(['Yes, go with the streaming parser.']);
    expect(of('next_step')).toEqual(['Next I will fix the off-by-one in parseLedgerRow and rerun npm test.']);
    expect(facts.find((f) => f.kind === 'error')!.source).toBe(4);
  });

  it('an error followed by a passing run of the same is not open any more', () => {
    const h: Entry[] = [
      call([['a', 'bash', { command: 'npm test' }]]),
      results([['a', 'npm test: 2 failed', true]]),
      call([['b', 'bash', { command: 'npm test' }]]),
      results([['b', 'npm test: all tests passed']]),
    ];
    expect(factsToKeep(h).filter((f) => f.kind === 'error')).toEqual([]);
  });

  it('errors by their telling lines: a test run supersedes the last one, a one-off command’s failures add up until it succeeds', () => {
    const jest = (id: string, out: string): Entry[] => [call([[id, 'bash', { command: 'npm test' }]]), results([[id, out, true]])];
    const seed = (id: string, out: string, isError = true): Entry[] => [call([[id, 'bash', { command: 'node seed.js' }]]), results([[id, out, isError]])];
    const errors = (h: Entry[]) => factsToKeep(h).filter((f) => f.kind === 'error').map((f) => f.text);
    const run1 = '> jest\nFAIL test/a.test.ts\n  ● a › rounds\n  ● a › sorts\nTests:       2 failed, 9 passed, 11 total';
    const run2 = '> jest\nFAIL test/a.test.ts\n  ● a › sorts\nTests:       1 failed, 10 passed, 11 total';
    expect(errors([...jest('j1', run1), ...jest('j2', run2)])).toEqual(['FAIL test/a.test.ts', '● a › sorts']);
    expect(errors([...seed('s1', "Error: ENOENT: open 'a.json'\n    at x"), ...seed('s2', 'Error: connect ECONNREFUSED 127.0.0.1:5400')])).toEqual([
      "Error: ENOENT: open 'a.json'",
      'Error: connect ECONNREFUSED 127.0.0.1:5400',
    ]);
    expect(errors([...seed('s1', 'Error: x'), ...seed('s2', 'Seeded 10 rows', false)])).toEqual([]);
    // Another command's success closes nothing.
    expect(errors([...jest('j1', run2), ...seed('s2', 'Seeded 10 rows', false)])).toEqual(['FAIL test/a.test.ts', '● a › sorts']);
  });

  it('carries an earlier summary’s facts (minus its superseded task and next step)', () => {
    const earlier: SummaryEntry = {
      type: 'summary', summary: 'x', userMessages: [], files: { read: [], modified: ['a.ts'] }, compactedEntries: 3, fallback: false,
      facts: [{ kind: 'rule', source: 0, text: 'Never push to main.' }, { kind: 'next_step', source: 2, text: 'old step' }],
    };
    const facts = factsToKeep([earlier, user('go on')]);
    expect(facts.map((f) => [f.kind, f.text])).toEqual([['rule', 'Never push to main.'], ['file', 'a.ts'], ['task', 'go on']]);
  });
});

describe('checkSummary', () => {
  const facts: Fact[] = [
    { kind: 'file', source: 1, text: 'src/ledger/import.ts' },
    { kind: 'error', source: 4, text: 'FAIL test/ledger.test.ts' },
    { kind: 'rule', source: 0, text: 'Never touch the migrations folder.' },
  ];
  it('paths verbatim, messages by their first line, rules by content', () => {
    const missing = (text: string) => checkSummary({ facts, text, mode: 'restate', reasked: false }).missing.map((f) => f.kind);
    expect(missing('Edited src/ledger/import.ts. Open: FAIL  test/ledger.test.ts. Rule: never touch the migrations folder')).toEqual([]);
    // A path paraphrased is not kept; a rule reworded with most of its words is.
    expect(missing('Edited the ledger importer. FAIL test/ledger.test.ts. The migrations folder: never touch it.')).toEqual(['file']);
    expect(missing('')).toEqual(['rule', 'error', 'file']);
    expect(checkSummary({ facts, text: '', mode: 'restate', reasked: false })).toMatchObject({ checked: 3, found: 0, restated: 3, byKind: { file: { checked: 1, found: 0, restated: 1 } } });
  });
});

/** Runs the gate step on a compaction whose summary is `text`, with the pure check (no recording port). */
async function gated(text: string, opts: { mode?: 'restate' | 'reask'; kinds?: Fact['kind'][]; reply?: string; check?: RuntimePorts['checkSummaryGate'] } = {}) {
  const h = history();
  const summaryEntry: SummaryEntry = { type: 'summary', summary: text, userMessages: [], files: { read: [], modified: [] }, compactedEntries: CUT, fallback: false };
  const outcome: CompactOutcome = { entries: [summaryEntry, ...h.slice(CUT)], summaryEntry, cut: CUT, messagesBefore: h.length, messagesAfter: 3, tokensBefore: 0, tokensAfter: 0, trackedFileCount: 0 };
  const asked: string[] = [];
  const ports = {
    summarize: async (req: { userText: string }) => (asked.push(req.userText), { text: opts.reply ?? text, usage: { inputTokens: 1, outputTokens: 1 } }),
    ...(opts.check ? { checkSummaryGate: opts.check } : {}),
  } as unknown as RuntimePorts;
  const res = await gateCompaction(ports, {
    entries: h, outcome, gate: { kinds: opts.kinds, mode: opts.mode ?? 'restate' }, pinned: ['Use British spelling.'],
    sessionId: 's', model: 'm', summaryMaxTokens: 1000, fixedTokens: 0,
  });
  return { ...res, asked, facts: factsToKeep(h.slice(0, CUT), { kept: h.slice(CUT) }), seen: renderSummaryEntry(res.outcome.summaryEntry) };
}

describe('gateCompaction', () => {
  it('an empty summary: every fact restated verbatim under its heading, so the summary entry keeps them all', async () => {
    const { gate, facts, seen, asked } = await gated('## Goal\nNot recorded.');
    expect(asked).toEqual([]); // restate: no model call
    // Only the identifier is found, in the resume block (the check reads the entry as the model will).
    expect(gate).toMatchObject({ checked: facts.length, found: 1, restated: facts.length - 1, reasked: false });
    expect(gate!.byKind.identifier).toEqual({ checked: 1, found: 1, restated: 0 });
    expect(seen).toContain(RESTATED_HEADING);
    for (const f of facts) expect(factKept(f, seen)).toBe(true);
    expect(gate!.byKind.file).toEqual({ checked: 1, found: 0, restated: 1 });
  });

  it('a faithful summary restates nothing; pinned text and the resume block come after it, resume last', async () => {
    const faithful = [
      'Task: Yes, go with the streaming parser. Rules: Always run `npm test` before you commit. Never touch the migrations folder.',
      'Edited src/ledger/import.ts; parseLedgerRow. Open: FAIL test/ledger.test.ts. Decision: Yes, go with the streaming parser.',
      'Next I will fix the off-by-one in parseLedgerRow and rerun npm test.',
    ].join('\n');
    const { gate, seen } = await gated(faithful);
    expect(gate).toMatchObject({ restated: 0 });
    expect(seen).not.toContain(RESTATED_HEADING);
    expect(seen).toContain('## Pinned (verbatim, always in force)\n- Use British spelling.');
    expect(seen.trimEnd().split('\n\n').pop()).toMatch(new RegExp(`^${RESUME_HEADING}\\n- You were working on: how is it going\\?\\n- Your next step: Still on parseLedgerRow\\.`));
    expect(describeGate(gate!)).toBe(`${gate!.checked} facts, 0 restated`);
  });

  it('reask: the summariser is asked once, naming what it left out; what it still misses is restated', async () => {
    const { gate, asked, seen } = await gated('## Goal\nledger', { mode: 'reask', reply: '## Goal\nledger, editing src/ledger/import.ts' });
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain('- File changed: src/ledger/import.ts');
    expect(gate).toMatchObject({ reasked: true });
    expect(gate!.byKind.file).toEqual({ checked: 1, found: 1, restated: 0 });
    expect(seen).toContain('editing src/ledger/import.ts');
    expect(seen).toContain('- Open error: FAIL test/ledger.test.ts (bash: npm test)');
  });

  it('kinds narrow what is checked', async () => {
    const { gate } = await gated('', { kinds: ['file'] });
    expect(Object.keys(gate!.byKind)).toEqual(['file']);
  });

  it('a gated summary fails against a deliberately broken gate (one that skips a kind)', async () => {
    // The broken check never reports a missing error: the open error is neither found nor restated.
    const broken = async (input: GateCheckInput) => {
      const real = checkSummary(input);
      return { ...real, missing: real.missing.filter((f) => f.kind !== 'error') };
    };
    const { seen, facts } = await gated('## Goal\nNot recorded.', { check: broken });
    const lost = facts.filter((f) => !factKept(f, seen));
    expect(lost.map((f) => f.kind)).toEqual(['error']);
    // The real gate keeps it.
    const real = await gated('## Goal\nNot recorded.');
    expect(real.facts.filter((f) => !factKept(f, real.seen))).toEqual([]);
  });
});

describe('restatable', () => {
  it('fills the budget with rules, errors and the next step before identifiers', () => {
    const fact = (kind: Fact['kind'], i: number): Fact => ({ kind, source: i, text: `${kind} number ${i} ${'x'.repeat(60)}` });
    const missing = [...Array.from({ length: 50 }, (_, i) => fact('identifier', i)), fact('rule', 1), fact('error', 2), fact('next_step', 3)];
    const kept = restatable(missing, 400);
    expect(kept.slice(0, 3).map((f) => f.kind)).toEqual(['rule', 'error', 'next_step']);
    expect(kept.length).toBeLessThan(missing.length);
    expect(restatable(missing).length).toBe(missing.length);
  });
});

describe('compaction.gate settings', () => {
  it('on by default in the default entry, off in /strict unless enabled; bad kinds name the field', () => {
    expect(resolveGate(undefined, true)).toEqual({ kinds: undefined, mode: 'restate' });
    expect(resolveGate(undefined, false)).toBeUndefined();
    expect(resolveGate({ gate: { enabled: true, mode: 'reask' } }, false)).toEqual({ kinds: undefined, mode: 'reask' });
    expect(resolveGate({ gate: { enabled: false } }, true)).toBeUndefined();
    expect(fieldOf(() => parseCompactionSettings({ gate: { kinds: ['rules'] } }))).toBe('gate.kinds.0');
    expect(fieldOf(() => parseCompactionSettings({ gate: { restate: true } }))).toBe('gate.restate');
    expect(FACT_KINDS).toHaveLength(7);
  });
});
