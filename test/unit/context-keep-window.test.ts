/**
 * The token-budgeted keep window (`keepRecentTokens`): which newest entries stay verbatim, that the
 * smaller of the entry and token windows wins, that the cut is part of the recorded decision, and that
 * a session compacts where a recorded decision says even when its own settings now say otherwise.
 */
import fc from 'fast-check';
import { entriesWithinTokens, keepCount, minimalWindowStart } from '../../src/core/context/keep-window';
import { findCut } from '../../src/core/context/compaction/cut';
import { decideCompaction, decideFromFacts, decisionFacts } from '../../src/core/context/compaction/decide';
import type { Entry } from '../../src/core/entries';
import { estimateEntryTokens } from '../../src/core/tokens';
import { Session } from '../../src/core/conversation';
import type { ModelCallResult, RuntimePorts } from '../../src/core/ports';
import type { ResolvedCompactionSettings } from '../../src/core/context/settings';
import { resolveCompactionSettings } from '../../src/core/context/settings';
import { call, results, say, session, summary, user } from './compaction-helpers';

const tokensOf = (entries: readonly Entry[]) => entries.reduce((n, e) => n + estimateEntryTokens(e), 0);

const settings = (over: Partial<ResolvedCompactionSettings> = {}): ResolvedCompactionSettings => ({
  enabled: true,
  compactAtTokens: 100,
  reserveTokens: 0,
  keepRecentEntries: 20,
  recoverFromOverflow: true,
  contextWindowTokens: 100_000,
  ...over,
});

/** A tool-heavy turn: one prompt, then n rounds of a large read. */
function toolHeavy(n: number, chars = 4000): Entry[] {
  const out: Entry[] = [user('refactor the app')];
  for (let i = 0; i < n; i++) {
    out.push(call([[`t${i}`, 'read_file', { path: `src/f${i}.ts` }]]));
    out.push(results([[`t${i}`, 'x'.repeat(chars)]]));
  }
  return out;
}

describe('the token keep window', () => {
  it('keeps the newest entries that fit the budget, whole tool pairs only', () => {
    const h = toolHeavy(10); // each pair ≈ 1000 tokens
    const pair = tokensOf(h.slice(-2));
    expect(entriesWithinTokens(h, pair * 3)).toBe(6);
    expect(entriesWithinTokens(h, pair * 3 + pair - 1)).toBe(6); // a partial pair does not fit
    expect(entriesWithinTokens(h, 10 ** 9)).toBe(h.length);
  });

  it('never keeps less than the newest user-role message (with the call its results answer)', () => {
    const h = toolHeavy(3);
    expect(entriesWithinTokens(h, 1)).toBe(2); // assistant tool_use + its tool_results
    // Ends with an answer: keeps the message it answered (tool results, with their call).
    expect(minimalWindowStart(session(2))).toBe(5);
    expect(entriesWithinTokens(session(2), 1)).toBe(3);
    expect(minimalWindowStart([user('a'), say('b')])).toBe(0);
    expect(entriesWithinTokens([user('only')], 1)).toBe(1);
    expect(entriesWithinTokens([], 5)).toBe(0);
  });

  it('the smaller window wins; unset means entries only', () => {
    const h = toolHeavy(10);
    const pair = tokensOf(h.slice(-2));
    expect(keepCount(h, { entries: 20 })).toBe(20);
    expect(keepCount(h, { entries: 20, tokens: pair * 2 })).toBe(4);
    expect(keepCount(h, { entries: 3, tokens: pair * 5 })).toBe(3);
    expect(keepCount(h, {})).toBeUndefined();
  });

  it('property: the window starts at a unit boundary, fits the budget unless it is the minimal window, and is maximal', () => {
    const spec = fc.array(
      fc.record({ kind: fc.constantFrom('user', 'say', 'tools'), size: fc.integer({ min: 0, max: 400 }), calls: fc.integer({ min: 1, max: 3 }) }),
      { minLength: 1, maxLength: 30 },
    );
    fc.assert(
      fc.property(spec, fc.integer({ min: 1, max: 2000 }), (parts, budget) => {
        const h: Entry[] = [user('start')];
        parts.forEach((p, i) => {
          if (p.kind === 'user') h.push(user('u'.repeat(p.size + 1)));
          else if (p.kind === 'say') h.push(say('s'.repeat(p.size)));
          else {
            const ids = Array.from({ length: p.calls }, (_, j) => `c${i}_${j}`);
            h.push(call(ids.map((id) => [id, 'bash', { command: 'ls' }])));
            h.push(results(ids.map((id) => [id, 'r'.repeat(p.size)])));
          }
        });
        const kept = entriesWithinTokens(h, budget);
        const start = h.length - kept;
        expect(kept).toBeGreaterThanOrEqual(h.length - minimalWindowStart(h));
        if (start > 0) expect(h[start]!.type).not.toBe('tool_results'); // a pair is never split
        if (start < minimalWindowStart(h)) expect(tokensOf(h.slice(start))).toBeLessThanOrEqual(budget);
        if (start > 0) {
          // Maximal: the next older unit would not have fitted.
          const prev = h[start - 1]!.type === 'tool_results' ? start - 2 : start - 1;
          expect(tokensOf(h.slice(Math.max(0, prev)))).toBeGreaterThan(budget);
        }
        // The compaction cut aligned with it is the same place (the recorded keptEntries reproduce it).
        const cut = findCut(h, kept);
        if (cut > 0) expect(findCut(h, h.length - cut)).toBe(cut);
      }),
      { numRuns: 500 },
    );
  });
});

describe('keepRecentTokens in the compaction decision', () => {
  it('a 20-entry window larger than the budget: the token window cuts, and the decision records it', () => {
    const h = toolHeavy(12); // 25 entries, ≈ 12k tokens
    const pair = tokensOf(h.slice(-2));
    const byEntries = decideCompaction({ entries: h, settings: settings() });
    expect(byEntries).toMatchObject({ compact: true, cut: 5, keptEntries: 20 });
    const byTokens = decideCompaction({ entries: h, settings: settings({ keepRecentTokens: pair * 3 }) });
    expect(byTokens).toMatchObject({ compact: true, cut: h.length - 6, keptEntries: 6 });
  });

  it('the facts carry the cut, so the recorded decision is made from them alone', () => {
    const h = toolHeavy(12);
    const facts = decisionFacts({ entries: h, settings: settings({ keepRecentTokens: 1 }) });
    expect(facts).toMatchObject({ keep: 2, cut: h.length - 2 });
    expect(decideFromFacts(facts)).toMatchObject({ cut: h.length - 2, keptEntries: 2 });
  });

  it('overflow keeps at most 4 entries, fewer when the token window is smaller', () => {
    const h = toolHeavy(12);
    expect(decideCompaction({ entries: h, settings: settings(), trigger: 'overflow' })).toMatchObject({ keptEntries: 4 });
    expect(decideCompaction({ entries: h, settings: settings({ keepRecentTokens: 1 }), trigger: 'overflow' })).toMatchObject({ keptEntries: 2 });
  });

  it('a leading summary alone is never re-summarised', () => {
    const h: Entry[] = [summary(), user('next')];
    expect(decideCompaction({ entries: h, settings: settings({ keepRecentTokens: 1, compactAtTokens: 1 }) })).toMatchObject({ compact: false, cut: 0 });
  });

  it('resolves from session settings and per-prompt overrides; absent when not set', () => {
    expect(resolveCompactionSettings({}, undefined, 10_000, { enabled: true })).not.toHaveProperty('keepRecentTokens');
    expect(resolveCompactionSettings({ keepRecentTokens: 500 }, undefined, 10_000, { enabled: true })).toMatchObject({ keepRecentTokens: 500 });
    expect(resolveCompactionSettings({ keepRecentTokens: 500 }, { compactionKeepRecentTokens: 50 }, 10_000, { enabled: true })).toMatchObject({ keepRecentTokens: 50 });
  });
});

describe('a session follows the recorded cut, whatever its keep settings say now', () => {
  /** Ports that answer the threshold decision from a recorded decision (as a replay does), then reply. */
  function replayPorts(recordedCut: (entries: readonly Entry[]) => ReturnType<typeof decideCompaction>): { ports: RuntimePorts; summarized: string[] } {
    const summarized: string[] = [];
    let calls = 0;
    const reply = async (): Promise<ModelCallResult> => {
      calls += 1;
      return { entry: say(`reply ${calls}`), usage: { inputTokens: 10, outputTokens: 5 }, stopReason: 'end_turn', model: 'm' };
    };
    let decided = false;
    const ports: RuntimePorts = {
      runtime: 'inline',
      callModel: reply,
      decideThenCallModel: async (req) => {
        if (decided) return { decision: { compact: false } as never, result: await reply() };
        decided = true;
        const decision = recordedCut(req.entries);
        if (!decision.compact) throw new Error('the recorded decision was to compact');
        return { decision: { ...decision, compact: true } };
      },
      summarize: async (req) => {
        summarized.push(req.userText);
        return { text: '## Goal\nrefactor', usage: { inputTokens: 1, outputTokens: 1 } };
      },
      runTool: async () => ({ content: 'ok', isError: false }),
      decideCompaction: async () => ({ compact: false }) as never,
      resolveModel: async (model) => ({ model: model ?? 'm' }),
      now: () => 0,
      emit: () => undefined,
    };
    return { ports, summarized };
  }

  it('recorded under keepRecentEntries 20, replayed under keepRecentTokens 1: cuts where the record says', async () => {
    const h = toolHeavy(12);
    let recorded: ReturnType<typeof decideCompaction> | undefined;
    let wouldNow: ReturnType<typeof decideCompaction> | undefined;
    // The run was recorded without a token window (20 entries kept); the agent's code now keeps 1 token.
    const { ports } = replayPorts((entries) => {
      wouldNow = decideCompaction({ entries, settings: settings({ compactAtTokens: 1, keepRecentTokens: 1 }) });
      return (recorded = decideCompaction({ entries, settings: settings({ compactAtTokens: 1 }) }));
    });
    const s = new Session(ports, {
      id: 'main',
      model: 'm',
      maxTokens: 100,
      tools: [],
      cwd: '.',
      maxSteps: 5,
      compaction: { enabled: true, compactAtTokens: 1, keepRecentTokens: 1 },
      compactionDefaultEnabled: true,
      contextWindowTokens: 100_000,
    });
    s.restore({ entries: h });
    await s.prompt('go on');
    const after = s.messages();
    const before = [...h, user('go on')];
    expect(wouldNow!.keptEntries).toBe(1); // the settings alone would keep only the new prompt
    expect(recorded!.keptEntries).toBe(21);
    expect(after[0]!.type).toBe('summary');
    expect(after.slice(1, -1)).toEqual(before.slice(-recorded!.keptEntries)); // summary, kept, reply
  });
});
