/**
 * A run's compaction state and context use, read from its history instead of asked of a worker. A
 * closed run with no worker polling its task queue cannot answer a query (the server waits for a
 * worker that never comes); its history still holds the facts: every compaction decision (with the
 * estimate, threshold and window), every summary, and the usage the provider reported for each model
 * call. Nothing is replayed: these are the recorded facts, not the session's in-memory state.
 */
import type { History } from './history-file';
import { auditTranscript, type AuditOptions } from './collect';
import type { AuditRun, CompactionDecisionRecord, CompactionGateRecord, ModelCallRecord, ModelResolvedRecord, SummaryRecord } from './records';
import type { GateResult } from '../core/context/compaction/gate';

/** Run statuses as Temporal names them (and as `fh list` prints them). */
export type WorkflowStatusName = 'RUNNING' | 'COMPLETED' | 'FAILED' | 'TERMINATED' | 'CANCELED' | 'TIMED_OUT' | 'CONTINUED_AS_NEW';

export interface HistoryRunState {
  source: 'history';
  /** Why it came from history, in words (for the reader of `fh state`). */
  note: string;
  workflowId?: string;
  status: WorkflowStatusName;
  /** History does not say which session a model call belonged to: these facts cover all sessions. */
  sessions: 'all';
  model?: string;
  contextWindowTokens?: number;
  contextWindowSource?: ModelResolvedRecord['contextWindowSource'] | 'compaction_decision';
  usage: {
    modelCalls: number;
    inputTokens: number;
    outputTokens: number;
    summarizer: AuditRun['totals']['summarizer'];
  };
  /** The last model call that completed: what the provider reported the context to be then. */
  lastModelCall?: { eventId: number; at?: string; inputTokens: number; outputTokens: number; stopReason?: string | null };
  compaction: {
    decisions: number;
    compactions: number;
    lastDecision?: Omit<CompactionDecisionRecord, 'n' | 'type'>;
    lastSummary?: { eventId: number; at?: string; trigger: SummaryRecord['trigger']; text?: string };
    /** The last compaction gate check recorded (absent: the gate was off, or the run predates it). */
    lastGate?: GateResult & { eventId: number };
  };
}

const STATUS: Record<AuditRun['status'], WorkflowStatusName> = {
  running: 'RUNNING',
  completed: 'COMPLETED',
  failed: 'FAILED',
  terminated: 'TERMINATED',
  canceled: 'CANCELED',
  timed_out: 'TIMED_OUT',
  continued_as_new: 'CONTINUED_AS_NEW',
};

export function statusName(s: AuditRun['status']): WorkflowStatusName {
  return STATUS[s];
}

/** Reconstructs what history records about a run's context and compaction. Runs nothing. */
export async function stateFromHistory(history: History, opts: AuditOptions & { note?: string } = {}): Promise<HistoryRunState> {
  const { run, records } = (await auditTranscript(history, opts)).json;
  const resolved = records.filter((r): r is ModelResolvedRecord => r.type === 'model_resolved').at(-1);
  const decisions = records.filter((r): r is CompactionDecisionRecord => r.type === 'compaction_decision');
  const lastDecision = decisions.filter((d) => d.recorded).at(-1);
  const lastCall = records.filter((r): r is ModelCallRecord => r.type === 'model_call' && r.status === 'completed' && !!r.usage).at(-1);
  const lastSummary = records.filter((r): r is SummaryRecord => r.type === 'summary' && r.status === 'completed').at(-1);
  const lastGate = records.filter((r): r is CompactionGateRecord => r.type === 'compaction_gate' && r.recorded).at(-1);
  // A decision states the window the session compacted against: the best evidence of the one it used.
  const window = lastDecision?.contextWindowTokens ?? resolved?.contextWindowTokens;
  const { n: _n, type: _t, ...decision } = lastDecision ?? ({} as CompactionDecisionRecord);
  return {
    source: 'history',
    note: opts.note ?? 'read from the run’s history (recorded facts; no worker was asked)',
    workflowId: run.workflowId,
    status: statusName(run.status),
    sessions: 'all',
    ...(resolved?.model ? { model: resolved.model } : {}),
    ...(window !== undefined
      ? { contextWindowTokens: window, contextWindowSource: lastDecision?.contextWindowTokens !== undefined ? 'compaction_decision' : resolved?.contextWindowSource }
      : {}),
    usage: { modelCalls: run.totals.modelCalls, inputTokens: run.totals.inputTokens, outputTokens: run.totals.outputTokens, summarizer: run.totals.summarizer },
    ...(lastCall
      ? {
          lastModelCall: {
            eventId: lastCall.eventId,
            at: lastCall.at,
            inputTokens: lastCall.usage!.inputTokens,
            outputTokens: lastCall.usage!.outputTokens,
            stopReason: lastCall.stopReason,
          },
        }
      : {}),
    compaction: {
      decisions: run.totals.compactionDecisions,
      compactions: run.totals.compactions,
      ...(lastDecision ? { lastDecision: decision } : {}),
      ...(lastSummary
        ? {
            lastSummary: {
              eventId: lastSummary.eventId,
              at: lastSummary.at,
              trigger: lastSummary.trigger,
              ...(typeof lastSummary.text === 'string' ? { text: lastSummary.text } : {}),
            },
          }
        : {}),
      ...(lastGate?.checked !== undefined ? { lastGate: gateOf(lastGate) } : {}),
    },
  };
}

function gateOf(r: CompactionGateRecord): GateResult & { eventId: number } {
  const { checked = 0, found = 0, restated = 0, mode = 'restate', reasked = false, byKind = {}, overBudget } = r;
  return { eventId: r.eventId, checked, found, restated, mode, reasked, byKind, ...(overBudget !== undefined ? { overBudget } : {}) };
}
