/**
 * Runs the gate on a finished compaction (before its summary replaces history): the facts of the
 * replaced slice, the check (recorded through the runtime's `checkSummaryGate` port where it has one:
 * on Temporal a local activity, so replay follows the recorded answer), at most one re-ask, the
 * restated block, the pinned text and the resume block. Workflow code calls it only behind the patch
 * `fh-compaction-gate`: a history recorded before it replays with none of this.
 */
import type { Entry, SummaryEntry } from '../../entries';
import type { RuntimePorts } from '../../ports';
import { historyTokens, type CompactOutcome } from './compact';
import { factsToKeep, type FactKind } from './facts';
import { checkSummary, gateResult, reaskText, RESTATE_MAX_CHARS, restatable, restatedBlock, type GateCheck, type GateCheckInput, type GateMode, type GateResult } from './gate';
import { resumeBlock } from './resume';
import { renderSummaryEntry } from '../../entries';
import { SUMMARIZER_SYSTEM_PROMPT, stripFileOperationsSection } from './summary-prompt';
import type { CompactionSettings } from '../settings';

export const COMPACTION_GATE_PATCH = 'fh-compaction-gate';

export interface ResolvedGate {
  kinds: readonly FactKind[] | undefined;
  mode: GateMode;
}

/** The gate's settings, or undefined when it is off (default entry: on unless disabled; /strict: off unless enabled). */
export function resolveGate(settings: CompactionSettings | undefined, enabledByDefault: boolean): ResolvedGate | undefined {
  const g = settings?.gate;
  if (!(g?.enabled ?? enabledByDefault)) return undefined;
  return { kinds: g?.kinds, mode: g?.mode ?? 'restate' };
}

export interface GateStepInput {
  /** The history the compaction replaced part of (as it was before). */
  entries: readonly Entry[];
  outcome: CompactOutcome;
  /** undefined: the gate is off; only pinned text and the resume block are added. */
  gate: ResolvedGate | undefined;
  pinned: readonly string[] | undefined;
  sessionId: string;
  model: string;
  summaryMaxTokens: number;
  fixedTokens: number;
  /** The restated block's budget in characters (default RESTATE_MAX_CHARS; the runner gives less for a small window). */
  restateMaxChars?: number;
}

export interface GateStepResult {
  outcome: CompactOutcome;
  gate?: GateResult;
}

export async function gateCompaction(ports: RuntimePorts, input: GateStepInput): Promise<GateStepResult> {
  const { entries, outcome, gate } = input;
  const budget = input.restateMaxChars ?? RESTATE_MAX_CHARS;
  // The resume block first: it is part of what the model reads, so the check sees it too.
  const resume = resumeBlock(entries, budget);
  let entry: SummaryEntry = {
    ...outcome.summaryEntry,
    ...(input.pinned && input.pinned.length > 0 ? { pinned: [...input.pinned] } : {}),
    ...(resume ? { resume } : {}),
  };
  let result: GateResult | undefined;
  if (gate) {
    const all = factsToKeep(entries.slice(0, outcome.cut), { kept: entries.slice(outcome.cut) });
    const facts = gate.kinds ? all.filter((f) => gate.kinds!.includes(f.kind)) : all;
    const check = (e: SummaryEntry, reasked: boolean) => recordedCheck(ports, { facts, text: renderSummaryEntry(e), mode: gate.mode, reasked });
    let found = await check(entry, false);
    // The recorded mode, not today's settings: a replay under other gate settings re-asks as the run did.
    if (found.mode === 'reask' && found.missing.length > 0 && !entry.fallback) {
      const res = await ports.summarize({
        sessionId: input.sessionId,
        model: input.model,
        system: SUMMARIZER_SYSTEM_PROMPT,
        userText: reaskText(entry.summary, found.missing),
        maxTokens: input.summaryMaxTokens,
      });
      entry = { ...entry, summary: stripFileOperationsSection(res.text) };
      found = await check(entry, true);
    }
    // What the recorded check says is missing is restated, whatever the facts are computed as today.
    const fitting = restatable(found.missing, Math.max(0, budget - (resume?.length ?? 0)));
    const block = restatedBlock(fitting);
    // Carried, so the next compaction checks them again (the restated ones included).
    entry = { ...entry, summary: block ? `${entry.summary.trim()}\n\n${block}` : entry.summary, facts: all };
    const over = found.missing.length - fitting.length;
    result = over > 0 ? { ...gateResult(found), restated: fitting.length, overBudget: over } : gateResult(found);
  }
  const next = [entry, ...outcome.entries.slice(1)];
  return {
    outcome: { ...outcome, summaryEntry: entry, entries: next, tokensAfter: input.fixedTokens + historyTokens(next) },
    ...(result ? { gate: result } : {}),
  };
}

/** The runtime's recorded check where it has one, else the pure check. */
function recordedCheck(ports: RuntimePorts, input: GateCheckInput): Promise<GateCheck> {
  return ports.checkSummaryGate ? ports.checkSummaryGate(input) : Promise.resolve(checkSummary(input));
}
