/**
 * The compaction gate's evaluation: a long scripted session run through the SDK's threshold compaction
 * with a scripted summariser — faithful, one that drops a random 30% of the facts, one that returns an
 * empty or off-topic summary — without the gate and with it. After each compaction: which of the facts
 * that must survive (../../src/core/context/compaction/facts) are in what the model receives, and four
 * probes against the generator's own truth at that point: the rules given so far, the errors still open,
 * the files changed, the next step (what the last assistant message said). Deterministic, no model.
 */
import type { Entry } from '../../src/core/entries';
import type { RuntimePorts } from '../../src/core/ports';
import { compactHistory } from '../../src/core/context/compaction/compact';
import { splitForCompaction } from '../../src/core/context/compaction/cut';
import { decideCompaction, isIneffective, type LastCompaction } from '../../src/core/context/compaction/decide';
import { factsToKeep, type Fact } from '../../src/core/context/compaction/facts';
import { keptIn } from '../../src/core/context/compaction/gate';
import { gateCompaction } from '../../src/core/context/compaction/gate-step';
import { DEFAULT_USER_MESSAGE_BUDGET_TOKENS } from '../../src/core/context/compaction/user-messages';
import { estimateContextTokens } from '../../src/core/tokens';
import { InvalidEvalOptionsError } from './errors';
import { seededRandom, type Random } from './random';
import { EVAL_SYSTEM_PROMPT, EVAL_TOOLS, evalSettings, type EvalOptions } from './run';
import { visibleText } from './score';
import { truthAt, type ScriptedSession } from './session';

export const SUMMARISERS = ['faithful', 'drops 30%', 'empty/off-topic'] as const;
export type SummariserName = (typeof SUMMARISERS)[number];
export const PROBES = ['rules', 'open errors', 'files changed', 'next step'] as const;
export type ProbeName = (typeof PROBES)[number];

const OFF_TOPIC = 'The weather in Lisbon was mild all week; the harbour cafés were full and the trams ran late.';
/** Share of the facts the lossy summariser leaves out. */
const LOSSY_DROP = 0.3;

export interface Tally {
  kept: number;
  total: number;
}

export interface GateEvalReport {
  summariser: SummariserName;
  gate: boolean;
  compactions: number;
  /** Facts that must survive, over all compactions: in what the model receives right after. */
  facts: Tally;
  /** Probe questions answered (every item of the question in view), over all compactions. */
  probes: Tally;
  byProbe: Record<ProbeName, Tally>;
  /** Facts the gate restated, over all compactions (0 without the gate). */
  restated: number;
  /** A few facts that were not in view (for the reader; empty when all were). */
  lost: string[];
}

/** Writes a summary of `facts` (all of them the conversation holds so far) the way the summariser under test would. */
type Summariser = (facts: readonly Fact[], compaction: number) => string;

function makeSummariser(name: SummariserName, rng: Random): Summariser {
  const write = (facts: readonly Fact[]) =>
    ['## Goal', 'Work through the user’s coding tasks.', '## Progress', '- Tasks worked through in order.', '## Facts', ...facts.map((f) => `- ${f.kind}: ${f.text}`)].join('\n');
  switch (name) {
    case 'faithful':
      return (facts) => write(facts);
    case 'drops 30%':
      return (facts) => {
        const order = facts.map((_, i) => i);
        for (let i = order.length - 1; i > 0; i--) {
          const j = rng.int(0, i);
          [order[i], order[j]] = [order[j]!, order[i]!];
        }
        const dropped = new Set(order.slice(0, Math.round(facts.length * LOSSY_DROP)));
        return write(facts.filter((_, i) => !dropped.has(i)));
      };
    case 'empty/off-topic':
      return (_, n) => (n % 2 === 0 ? '' : OFF_TOPIC);
  }
}

/** Only summarize is ever called (the gate's check is the pure one, as inline). */
function summariserPorts(next: () => string, check: RuntimePorts['checkSummaryGate']): RuntimePorts {
  const refuse = (what: string) => (): never => {
    throw new Error(`the gate evaluation has no ${what}`);
  };
  return {
    runtime: 'inline',
    callModel: refuse('model'),
    decideThenCallModel: refuse('model'),
    summarize: async () => ({ text: next(), usage: { inputTokens: 0, outputTokens: 0 } }),
    runTool: refuse('tools'),
    decideCompaction: refuse('recorded decisions'),
    resolveModel: refuse('models'),
    now: () => 0,
    emit: () => undefined,
    ...(check ? { checkSummaryGate: check } : {}),
  };
}

export interface GateEvalOptions extends EvalOptions {
  gate: boolean;
  /** Seeds the lossy summariser's choice. Default 1. */
  seed?: number;
  /** Another check than the gate's own (a test's deliberately broken one). */
  check?: RuntimePorts['checkSummaryGate'];
}

export async function runGateEval(session: ScriptedSession, summariser: SummariserName, options: GateEvalOptions): Promise<GateEvalReport> {
  if (!SUMMARISERS.includes(summariser)) throw new InvalidEvalOptionsError('summariser', `must be one of ${SUMMARISERS.join(', ')}, got ${String(summariser)}`);
  const settings = evalSettings(options);
  const write = makeSummariser(summariser, seededRandom(options.seed ?? 1));
  let pending = '';
  const ports = summariserPorts(() => pending, options.check);
  const fixedTokens = estimateContextTokens({ system: EVAL_SYSTEM_PROMPT, tools: EVAL_TOOLS, entries: [] }).total;
  const byProbe = Object.fromEntries(PROBES.map((p) => [p, { kept: 0, total: 0 }])) as Record<ProbeName, Tally>;
  const report: GateEvalReport = { summariser, gate: options.gate, compactions: 0, facts: { kept: 0, total: 0 }, probes: { kept: 0, total: 0 }, byProbe, restated: 0, lost: [] };
  let history: Entry[] = [];
  let last: LastCompaction | undefined;

  for (let i = 0; i < session.entries.length; i++) {
    const entry = session.entries[i]!;
    if (entry.type === 'assistant') {
      const decision = decideCompaction({ entries: history, system: EVAL_SYSTEM_PROMPT, tools: [...EVAL_TOOLS], settings, lastCompaction: last });
      if (decision.compact) {
        const split = splitForCompaction(history, decision.keptEntries);
        // The facts of everything replaced so far, from the session itself: the same for every summariser and either gate setting.
        const prefix = session.entries.slice(0, i);
        const keptCount = history.length - split.cut;
        const facts = factsToKeep(prefix.slice(0, prefix.length - keptCount), { kept: prefix.slice(prefix.length - keptCount) });
        pending = write(facts, report.compactions);
        const attempt = await compactHistory(ports, history, {
          sessionId: 'gate-eval',
          reason: 'threshold',
          keepRecentEntries: decision.keptEntries,
          generateSummary: true,
          model: 'scripted',
          summarizerBudgetTokens: settings.contextWindowTokens,
          summaryMaxTokens: 4096,
          fixedTokens,
          userMessageBudgetTokens: DEFAULT_USER_MESSAGE_BUDGET_TOKENS,
        });
        if (attempt.ok) {
          let outcome = attempt.outcome;
          if (options.gate) {
            const gated = await gateCompaction(ports, { entries: history, outcome, gate: { kinds: undefined, mode: 'restate' }, pinned: undefined, sessionId: 'gate-eval', model: 'scripted', summaryMaxTokens: 4096, fixedTokens });
            outcome = gated.outcome;
            report.restated += gated.gate?.restated ?? 0;
          }
          history = outcome.entries;
          last = { entryCountAfter: outcome.messagesAfter, tokensAfter: outcome.tokensAfter, ineffective: isIneffective(outcome.tokensAfter, settings.compactAtTokens) };
          report.compactions += 1;
          score(report, session, i, prefix, facts, history);
        }
      }
    }
    history = [...history, entry];
  }
  return report;
}

/** What the model receives right after compaction `at` (original entry index), scored. */
function score(report: GateEvalReport, session: ScriptedSession, at: number, prefix: readonly Entry[], facts: readonly Fact[], view: readonly Entry[]): void {
  const text = `${EVAL_SYSTEM_PROMPT}\n${visibleText(view)}`;
  const inView = keptIn(text);
  for (const f of facts) {
    report.facts.total += 1;
    if (inView(f)) report.facts.kept += 1;
    else if (report.lost.length < 5) report.lost.push(`${f.kind}: ${f.text}`);
  }
  const truth = truthAt(session, at);
  const has = (s: string) => text.includes(s.replace(/\s+/g, ' ').trim());
  const probe = (name: ProbeName, items: readonly string[]) => {
    const answered = items.every(has);
    report.byProbe[name].total += 1;
    report.probes.total += 1;
    if (answered) {
      report.byProbe[name].kept += 1;
      report.probes.kept += 1;
    }
  };
  probe('rules', truth.instructions);
  probe('open errors', truth.openErrors.map((e) => e.signature));
  probe('files changed', truth.modified);
  probe('next step', lastSaid(prefix));
}

/** The last thing the assistant said (its next step, in its own words), or nothing. */
function lastSaid(prefix: readonly Entry[]): string[] {
  for (let i = prefix.length - 1; i >= 0; i--) {
    const e = prefix[i]!;
    if (e.type !== 'assistant') continue;
    const text = e.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n').trim();
    if (text) return [text];
  }
  return [];
}

/** Every summariser, without the gate and with it, over the same session. */
export async function compareGate(session: ScriptedSession, options: EvalOptions & { seed?: number } = {}): Promise<Array<{ summariser: SummariserName; off: GateEvalReport; on: GateEvalReport }>> {
  const out = [];
  for (const summariser of SUMMARISERS) {
    out.push({ summariser, off: await runGateEval(session, summariser, { ...options, gate: false }), on: await runGateEval(session, summariser, { ...options, gate: true }) });
  }
  return out;
}
