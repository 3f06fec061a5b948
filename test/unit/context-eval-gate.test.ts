/**
 * The compaction gate's evaluation (bench/context-eval/gate-eval.ts, `npm run bench -- compaction-gate`):
 * with the gate, every fact that must survive and every probe is in what the model receives after each
 * compaction, for all three summarisers; without it the lossy and the empty ones lose both. The probes'
 * truth comes from the generator's checkpoints.
 */
import { checkSummary, type GateCheckInput } from '../../src/core/context/compaction/gate';
import { compareGate, generateSession, runGateEval, truthAt, InvalidEvalOptionsError } from '../../bench/context-eval';

const session = generateSession({ seed: 1, modelCalls: 600 });

describe('compaction gate evaluation', () => {
  let reports: Awaited<ReturnType<typeof compareGate>>;
  beforeAll(async () => {
    reports = await compareGate(session, { seed: 1 });
  });

  it('with the gate: 100% of facts kept and every probe answerable, for all three summarisers', () => {
    expect(reports.map((r) => r.summariser)).toEqual(['faithful', 'drops 30%', 'empty/off-topic']);
    for (const { on } of reports) {
      expect(on.compactions).toBeGreaterThanOrEqual(10);
      expect([on.summariser, on.facts.kept, on.lost]).toEqual([on.summariser, on.facts.total, []]);
      expect([on.summariser, on.probes.kept]).toEqual([on.summariser, on.probes.total]);
    }
  });

  it('without it: a faithful summary keeps everything, a lossy or empty one loses facts, rules and open errors', () => {
    const [faithful, lossy, empty] = reports.map((r) => r.off);
    expect(faithful!.facts.kept).toBe(faithful!.facts.total);
    expect(faithful!.probes.kept).toBe(faithful!.probes.total);
    for (const r of [lossy!, empty!]) {
      expect(r.facts.kept).toBeLessThan(r.facts.total);
      expect(r.byProbe['open errors'].kept).toBeLessThan(r.byProbe['open errors'].total);
      // The rules of the first messages fall out of the 2,000-token verbatim budget in a session this long.
      expect(r.byProbe.rules.kept).toBeLessThan(r.byProbe.rules.total);
    }
    expect(empty!.byProbe['open errors'].kept).toBe(0);
  });

  it('the gate restates nothing a faithful summary kept, and what a lossy or empty one dropped', () => {
    const [faithful, lossy, empty] = reports.map((r) => r.on.restated);
    expect(faithful!).toBeLessThan(lossy!);
    expect(lossy!).toBeLessThan(empty!);
  });

  it('probe truth: checkpoints after every model call, the last one the session’s final truth', () => {
    expect(session.checkpoints).toHaveLength(session.modelCalls);
    const last = truthAt(session, session.entries.length);
    expect(last.instructions).toEqual(session.truth.instructions);
    expect(last.openErrors).toEqual(session.truth.openErrors);
    expect(truthAt(session, 0)).toEqual({ entries: 0, instructions: [], modified: [], openErrors: [] });
  });

  it('a deliberately broken gate (one that skips the error kind) fails the same evaluation', async () => {
    const broken = async (input: GateCheckInput) => {
      const real = checkSummary(input);
      return { ...real, missing: real.missing.filter((f) => f.kind !== 'error') };
    };
    const r = await runGateEval(session, 'empty/off-topic', { gate: true, check: broken });
    expect(r.facts.kept).toBeLessThan(r.facts.total);
    expect(r.lost.every((l) => l.startsWith('error: '))).toBe(true);
    expect(r.byProbe['open errors'].kept).toBe(0);
    expect(r.byProbe.rules.kept).toBe(r.byProbe.rules.total);
  });

  it('an unknown summariser names the field', async () => {
    await expect(runGateEval(session, 'verbose' as never, { gate: true })).rejects.toThrow(InvalidEvalOptionsError);
  });
});
